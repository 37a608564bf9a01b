package callbacks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestCallerGoneIsCountedApart: a callback whose caller hung up before the
// answer is counted with outcome "canceled", not as a 503 or another
// error, and what it committed is the answer of the caller's retry.
func TestCallerGoneIsCountedApart(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{requestTimeout: 30 * time.Second})
	b.account(t, storetest.AccountOpts{AccountID: "cx-1", Owner: "carol", Funds: "100", Source: "src-cx"})
	ctx := context.Background()

	// Hold the account's row, so that the authorize waits in the database.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE account_id = 'cx-1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// The handler behind a listener that tells when net/http has seen the
	// caller hang up (the request's context ends): only then is the row
	// let go, so that the answer always comes after the caller left.
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		context.AfterFunc(r.Context(), func() { close(gone) })
		b.server.ServeHTTP(w, r)
	}))
	defer srv.Close()
	client := &caller.Client{BaseURL: srv.URL + "/ledger", Key: b.key}
	service := authorizeClaims("cx-p1", "cx-k1", "carol", "src-cx", "5.00", 0)
	callerCtx, hangUp := context.WithCancel(ctx)
	sent := make(chan error, 1)
	go func() {
		_, err := client.Send(callerCtx, claims.Authorize, service)
		sent <- err
	}()
	m := b.server.Metrics()
	wait.Until(t, "the authorize in flight", func() bool { return testutil.ToFloat64(m.Inflight()) == 1 })
	hangUp()
	if err := <-sent; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller's send: %v", err)
	}
	wait.Until(t, "net/http to see the caller gone", func() bool {
		select {
		case <-gone:
			return true
		default:
			return false
		}
	})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// Whatever it is counted as, once it is counted: canceled, and nothing else.
	counts := func() map[string]float64 {
		out := map[string]float64{}
		for _, outcome := range []string{"canceled", "approved", "error"} {
			for _, status := range []int{200, 408, 500, 503} {
				if n := testutil.ToFloat64(m.Requests(claims.Authorize, outcome, status)); n != 0 {
					out[fmt.Sprint(outcome, " ", status)] = n
				}
			}
		}
		return out
	}
	wait.Until(t, "the callback counted", func() bool { return len(counts()) > 0 })
	if got := counts(); len(got) != 1 || got["canceled 200"] != 1 {
		t.Fatalf("counted as %v, want canceled 200 once", got)
	}
	// The service's retry gets what was committed.
	r := b.send(t, claims.Authorize, service)
	if r.Status != 200 || r.Outcome() != "approved" || testutil.ToFloat64(m.Replays(claims.Authorize)) != 1 {
		t.Fatalf("retry: %d %s", r.Status, r.Raw)
	}
}
