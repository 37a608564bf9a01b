package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli"
)

// TestJSONErrors: a command asked for JSON reports its error on stderr as
// one JSON problem object (the API's type, title, status and field
// pointers when the API refused it), with the exit status it has without
// --json, and prints nothing on stdout.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"type":"https://provider-ledger.dev/problems/not-found","title":"Not Found","status":404,"detail":"no account acc-nobody"}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"type":"https://provider-ledger.dev/problems/invalid-request","title":"Bad Request","status":400,` +
				`"detail":"currency is not ISO 4217","errors":[{"pointer":"/currency","detail":"not ISO 4217"}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		args []string
		want cli.Problem
	}{
		{[]string{"accounts", "get", "acc-nobody", "--admin", srv.URL},
			cli.Problem{Type: "https://provider-ledger.dev/problems/not-found", Title: "Not Found", Status: 404, Command: "ledgerctl accounts get", ExitStatus: 1}},
		{[]string{"accounts", "create", "acc-a", "--owner", "a", "--currency", "XXZ", "--admin", srv.URL},
			cli.Problem{Type: "https://provider-ledger.dev/problems/invalid-request", Title: "Bad Request", Status: 400,
				Errors: []cli.FieldError{{Pointer: "/currency", Detail: "not ISO 4217"}}, Command: "ledgerctl accounts create", ExitStatus: 1}},
		{[]string{"accounts", "get", "a", "b", "--admin", srv.URL},
			cli.Problem{Type: "about:blank", Title: "usage error", Command: "ledgerctl accounts get", ExitStatus: 2}},
		{[]string{"accounts", "create", "acc-a", "--admin", srv.URL},
			cli.Problem{Type: "about:blank", Title: "usage error", Command: "ledgerctl accounts create", ExitStatus: 2}},
		{[]string{"reconcile", "--admin", srv.URL, "--timeout", "soon"},
			cli.Problem{Type: "about:blank", Title: "usage error", Command: "ledgerctl reconcile", ExitStatus: 3}},
	} {
		plainCode, _, plain := runCtl(c.args...)
		code, out, errs := runCtl(append(c.args, "--json")...)
		var got cli.Problem
		if err := json.Unmarshal([]byte(errs), &got); err != nil || strings.Count(errs, "\n") != 1 || out != "" {
			t.Errorf("ledgerctl %v --json: stderr is not one JSON line (%v): %q, stdout %q", c.args, err, errs, out)
			continue
		}
		// The detail is the line printed without --json, after the command's path.
		if !strings.Contains(plain, got.Detail) || got.Detail == "" {
			t.Errorf("ledgerctl %v --json: detail %q, not the plain error %q", c.args, got.Detail, plain)
		}
		got.Detail = ""
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(c.want)
		if code != c.want.ExitStatus || plainCode != code || string(gotJSON) != string(wantJSON) {
			t.Errorf("ledgerctl %v --json: exit %d (without --json %d), %s; want exit %d, %s", c.args, code, plainCode, gotJSON, c.want.ExitStatus, wantJSON)
		}
	}
}
