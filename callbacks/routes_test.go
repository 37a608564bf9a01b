package callbacks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/callbacks"
)

// TestMethodNotAllowed: a 405 lists in Allow the methods the route serves,
// and not OPTIONS, which is answered 405 too.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	for _, method := range []string{"GET", "PUT", "DELETE", "OPTIONS"} {
		req, _ := http.NewRequest(method, b.http.URL+"/ledger/capture", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d, Allow %q, Cache-Control %q; want 405, Allow POST, no-store", method, resp.StatusCode,
				resp.Header.Get("Allow"), resp.Header.Get("Cache-Control"))
		}
	}
}

// TestPrefix: the prefix "/" serves the callbacks at the root (/authorize,
// …), another prefix under itself; a prefix that is not a clean path is
// refused.
func TestPrefix(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	for _, c := range []struct {
		prefix, serves string
		notFound       []string
	}{
		{"/", "/capture", []string{"/ledger/capture", "//capture"}},
		{"/bank/v1", "/bank/v1/capture", []string{"/ledger/capture", "/capture", "/bank/capture"}},
		{"", "/ledger/capture", []string{"/capture"}},
	} {
		srv, err := callbacks.New(callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider, Prefix: c.prefix})
		if err != nil {
			t.Fatalf("prefix %q: %v", c.prefix, err)
		}
		hs := httptest.NewServer(srv)
		client := &caller.Client{BaseURL: hs.URL + strings.TrimSuffix(c.serves, "/capture"), Key: b.key}
		r, err := client.Send(context.Background(), claims.Capture, captureClaims("pfx-"+c.prefix, "k", "hold_x"))
		if err != nil || r.Status != 200 || r.Outcome() != "approved" {
			t.Errorf("prefix %q: POST %s = %+v, %v", c.prefix, c.serves, r, err)
		}
		for _, path := range c.notFound {
			resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 404 {
				t.Errorf("prefix %q: POST %s = %d, want 404", c.prefix, path, resp.StatusCode)
			}
		}
		hs.Close()
	}
	for _, bad := range []string{"ledger", "/ledger/", "//", "/a//b", "/a/./b", "/a/../b", "/..", "/:id", "/*all", "/a b", "/a?b", "/a#b", "/a%20b", "/é", "/a\x00"} {
		if _, err := callbacks.New(callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider, Prefix: bad}); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
}
