package callbacks_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestKeysMissingAnswersRetryably: while the replica knows of active
// secrets it cannot decrypt (a KEK rotation under way), a request no key
// opens is answered 503 keyring-incomplete with Retry-After (another
// replica may open it), not a terminal 400; a request its keys open is
// served as ever. Once nothing is missing, the same request is 400.
func TestKeysMissingAnswersRetryably(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	var missing atomic.Bool
	missing.Store(true)
	srv, err := callbacks.New(callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider, KeysMissing: missing.Load})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	b.account(t, storetest.AccountOpts{AccountID: "km", Owner: "alice", Funds: "10", Source: "src-km"})
	ctx := context.Background()
	other := &caller.Client{BaseURL: hs.URL + "/ledger", Key: newKey(t, "elsewhere")}
	r, err := other.Send(ctx, claims.Authorize, authorizeClaims("km-p", "k", "alice", "src-km", "1", 0))
	if err != nil || r.Status != 503 || problemType(r) != "keyring-incomplete" || r.RetryAfter == "" {
		t.Fatalf("a request under a key this replica cannot decrypt: %+v %v; want 503 keyring-incomplete with Retry-After", r, err)
	}
	storetest.AssertBalances(t, b.db, "km", "10", "0", "10")
	own := &caller.Client{BaseURL: hs.URL + "/ledger", Key: b.key}
	if r, err := own.Send(ctx, claims.Authorize, authorizeClaims("km-p", "k", "alice", "src-km", "1", 0)); err != nil || r.Outcome() != "approved" {
		t.Fatalf("a request under a key it has: %+v %v", r, err)
	}
	missing.Store(false)
	if r, err := other.Send(ctx, claims.Authorize, authorizeClaims("km-q", "k", "alice", "src-km", "1", 0)); err != nil || r.Status != 400 || problemType(r) != "undecryptable" {
		t.Fatalf("nothing missing: %+v %v; want 400 undecryptable", r, err)
	}
}
