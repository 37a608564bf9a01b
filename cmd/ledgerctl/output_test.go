package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOneOutputStyle: admin and provider commands print an answer the same
// way: a table for a human by default, the API's JSON with --output json
// (-o json; admin commands' --json is the same setting); an --output other
// than table or json is a usage error before any request.
func TestOneOutputStyle(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"accountID":"acc-alice","ownerExternalID":"alice","currency":"USD","balance":"10.00","held":"2.50","available":"7.50","status":"open"}`))
	}))
	t.Cleanup(srv.Close)
	get := []string{"accounts", "get", "acc-alice", "--admin", srv.URL}
	_, table, _ := runCtl(get...)
	if !strings.HasPrefix(table, "ACCOUNT") || !strings.Contains(table, "acc-alice") || json.Valid([]byte(table)) {
		t.Errorf("admin default: %q, want a table", table)
	}
	_, byJSON, _ := runCtl(append(get, "--json")...)
	_, byOutput, _ := runCtl(append(get, "-o", "json")...)
	var a map[string]any
	if json.Unmarshal([]byte(byOutput), &a) != nil || a["available"] != "7.50" || byOutput != byJSON {
		t.Errorf("admin -o json: %q, --json: %q; want the same JSON", byOutput, byJSON)
	}

	p := newProviderCLI(t)
	create := []string{"limit-groups", "create", "--name", "lead"}
	code, out, errs := p.run(t, create...) // p.run asks for JSON
	var g map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &g) != nil || g["groupID"] == nil {
		t.Fatalf("provider -o json: exit %d %q %q", code, out, errs)
	}
	id, secret := p.srv.APIKey()
	conn := []string{"--base-url", p.srv.URL, "--api-key-id", id, "--api-key-secret", secret, "--provider-id", p.srv.ProviderID()}
	code, out, errs = runCtl(append([]string{"provider", "limit-groups", "list"}, conn...)...)
	if code != 0 || json.Valid([]byte(out)) || !strings.Contains(out, "groupID") || !strings.Contains(out, g["groupID"].(string)) ||
		!strings.Contains(out, "name") || !strings.Contains(out, "lead") || !strings.HasPrefix(out, "groups") {
		t.Errorf("provider default: exit %d, %q %q; want a table with the group's fields", code, out, errs)
	}

	before := requests.Load()
	for _, args := range [][]string{
		append(get, "--output", "yaml"),
		append([]string{"provider", "limit-groups", "list", "-o", "xml"}, conn...),
	} {
		if code, _, errs := runCtl(args...); code != 2 || !strings.Contains(errs, "is not table or json") {
			t.Errorf("%v: exit %d %q; want a usage error", args, code, errs)
		}
	}
	if requests.Load() != before {
		t.Error("a bad --output sent a request")
	}
}

// TestPrintTable: every field of an answer is a row, in the API's order,
// nested ones as a.b, empty values shown as such, a page's items one block
// each after the page's own fields (each block aligned on its own).
func TestPrintTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	page := json.RawMessage(`{"items":[{"id":"a","memo":"","tags":[]},{"id":"b","memo":"two\nlines","tags":["x"]}],"hasMore":true,"limit":{"value":"1.50","currency":{"code":"USD"}},"none":null,"empty":{}}`)
	if err := printTable(&b, page); err != nil {
		t.Fatal(err)
	}
	want := "items                2\nhasMore              true\nlimit.value          1.50\nlimit.currency.code  USD\nnone                 null\nempty                {}\n" +
		"\nid    a\nmemo  \ntags  []\n" +
		"\nid       b\nmemo     two\\nlines\ntags[0]  x\n"
	if b.String() != want {
		t.Errorf("printTable:\n%s\nwant:\n%s", b.String(), want)
	}
}
