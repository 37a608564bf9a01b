package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRequiredFlagsSendNothing: a command run without a flag its help
// marks "(required)" fails locally, with a usage error naming the flag and
// exit status 2, and sends no request: the server that would answer
// counts none.
func TestRequiredFlagsSendNothing(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, `{"title":"should not be reached"}`, http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	admin := []string{"--admin", srv.URL}
	prov := []string{"--base-url", srv.URL, "--api-key-id", "k", "--api-key-secret", "s", "--provider-id", "p"}
	participant := []string{"--external-id", "alice", "--given-name", "A", "--family-name", "D", "--address-line1", "1 Main",
		"--city", "C", "--state", "IL", "--postal-code", "1", "--country", "US"}
	for _, c := range []struct {
		args    []string
		missing string
	}{
		{append([]string{"accounts", "create", "acc-alice", "--currency", "USD"}, admin...), "required flag --owner not given"},
		{append([]string{"accounts", "create", "acc-alice", "--owner", ""}, admin...), "required flag --owner not given"},
		{append([]string{"reconcile", "ack", "f-1"}, admin...), "required flag --note not given"},
		{append(append([]string{"provider", "participants", "create"}, participant[2:]...), prov...), "required flag --external-id not given"},
		{append([]string{"provider", "participants", "create", "--external-id", "alice"}, prov...),
			"required flags not given: --address-line1, --city, --country, --family-name, --given-name, --postal-code, --state"},
		{append([]string{"provider", "funding-sources", "create", "alice", "--type", "card"}, prov...), "--display-name, --source-id"},
		{append([]string{"provider", "reviews", "resolve", "r-1"}, prov...), "required flag --resolution not given"},
	} {
		code, out, errs := runCtl(c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.missing) || strings.Count(errs, "\n") != 1 {
			t.Errorf("ledgerctl %v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.missing)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests sent by commands missing a required flag, want none", n)
	}
	// The same server is reached once the flags are there: the count above
	// can see a request.
	if code, _, _ := runCtl(append([]string{"accounts", "create", "acc-alice", "--owner-external-id", "alice"}, admin...)...); code != 1 || requests.Load() != 1 {
		t.Fatalf("accounts create with --owner-external-id: exit %d, %d requests; want 1 (the server's error) and 1", code, requests.Load())
	}
}
