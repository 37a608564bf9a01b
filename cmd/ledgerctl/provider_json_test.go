package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProviderJSONBodyIsStrict proves a --json body with data after its
// first value or a member named twice is refused as a usage error before
// any request is sent, while the same body without the fault is sent.
func TestProviderJSONBodyIsStrict(t *testing.T) {
	var requests atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer ts.Close()
	limit := `{"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"50.00"}}`
	send := func(body string) (int, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"provider", "limits", "set", "alice", "--json", body,
			"--base-url", ts.URL, "--api-key-id", "k", "--api-key-secret", "s", "--provider-id", "p", "--output", "json"}, &out, &errb)
		return code, errb.String()
	}
	for _, tc := range []struct{ name, body, want string }{
		{"trailing value", limit + `{"weeklyAmount":null}`, "data after the first JSON value"},
		{"trailing garbage", limit + ` x`, "data after the first JSON value"},
		{"duplicate member", `{"weeklyAmount":null,"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"50.00"}}`, `/weeklyAmount\" is given twice`},
		{"nested duplicate", `{"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"1","value":"50.00"}}`, `/weeklyAmount/value\" is given twice`},
	} {
		requests.Store(0)
		code, errs := send(tc.body) // stderr is a JSON problem: quotes come escaped
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 with %q", tc.name, code, errs, tc.want)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("%s: %d requests sent; a refused body must send none", tc.name, n)
		}
	}
	requests.Store(0)
	if _, errs := send(limit); requests.Load() == 0 {
		t.Fatalf("a well-formed body was never sent: %s", errs)
	}
}
