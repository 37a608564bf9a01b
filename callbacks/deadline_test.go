package callbacks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/store/storetest"
)

// deadlineSent is one authorize of TestNothingCommitsAfter408UnderLoad and
// its answer.
type deadlineSent struct {
	payout, key, owner, source string
	status                     int
	outcome                    string
}

// committedAsAnswered checks that what r's answer said is what the
// database holds: after a 408 no hold and no stored answer, after an
// approval exactly one of each (after a 503, either). It reports whether
// r timed out.
func committedAsAnswered(t *testing.T, b *bundle, r deadlineSent) bool {
	t.Helper()
	var holds, answers int
	if err := b.pool.QueryRow(context.Background(), `SELECT
  (SELECT count(*) FROM holds WHERE payout_id = $1),
  (SELECT count(*) FROM callback_authorize WHERE scope = $1 AND idempotency_key = $2)`, r.payout, r.key).Scan(&holds, &answers); err != nil {
		t.Fatal(err)
	}
	timedOut := false
	switch {
	case r.status == 408:
		timedOut = true
		if holds != 0 || answers != 0 {
			t.Errorf("%s answered 408, then committed: %d holds, %d stored answers", r.payout, holds, answers)
		}
	case r.status == 200 && r.outcome == "approved":
		if holds != 1 || answers != 1 {
			t.Errorf("%s approved with %d holds and %d stored answers", r.payout, holds, answers)
		}
	case r.status == 503:
		// The server could not confirm the cancel in time: either is possible.
	default:
		t.Errorf("%s: %d %s, want 200 approved, 408 or 503", r.payout, r.status, r.outcome)
	}
	return timedOut
}

// TestNothingCommitsAfter408UnderLoad: 48 senders authorize 480 payouts on
// four accounts with a short request deadline, while another session keeps
// locking those accounts for longer than the deadline, and the pool (12
// connections) is oversubscribed four times. Many answers are 408. Then,
// once everything has settled: every payout answered 408 has neither a hold
// nor a stored answer (nothing committed after the adapter said nothing was
// applied), every payout answered 200 approved has its hold, and sending
// the 408 ones again places each exactly once.
func TestNothingCommitsAfter408UnderLoad(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{maxInflight: 1000, requestTimeout: 150 * time.Millisecond})
	const accounts, senders, each = 4, 48, 10
	for i := range accounts {
		b.account(t, storetest.AccountOpts{AccountID: fmt.Sprintf("dl-%d", i), Owner: fmt.Sprintf("own-%d", i),
			Funds: "1000", Source: fmt.Sprintf("src-dl-%d", i)})
	}
	ctx, stop := context.WithCancel(context.Background())
	var lockers sync.WaitGroup
	lockers.Go(func() { holdLocks(ctx, t, b, accounts) })

	results := make([]deadlineSent, senders*each)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				n := s*each + i
				a := n % accounts
				r := deadlineSent{payout: fmt.Sprintf("dlp-%d", n), key: fmt.Sprintf("dlk-%d", n),
					owner: fmt.Sprintf("own-%d", a), source: fmt.Sprintf("src-dl-%d", a)}
				reply, err := b.client.Send(context.Background(), claims.Authorize,
					authorizeClaims(r.payout, r.key, r.owner, r.source, "1.00", 0))
				if err != nil {
					t.Error(err)
					return
				}
				r.status, r.outcome = reply.Status, reply.Outcome()
				results[n] = r
			}
		})
	}
	wg.Wait()
	stop()
	lockers.Wait()
	// A statement the adapter gave up on has been cancelled; one that was
	// not has committed by the time no statement runs any more.
	storetest.WaitForIdle(t, b.pool)

	timedOut := 0
	for _, r := range results {
		if committedAsAnswered(t, b, r) {
			timedOut++
		}
	}
	if timedOut == 0 {
		t.Fatal("no request timed out: the test did not exercise the deadline")
	}
	t.Logf("%d of %d answered 408", timedOut, len(results))

	// The service retries every 408: each is placed now, once.
	for _, r := range results {
		if r.status != 408 && r.status != 503 {
			continue
		}
		reply := b.send(t, claims.Authorize, authorizeClaims(r.payout, r.key, r.owner, r.source, "1.00", 0))
		if reply.Status != 200 || reply.Outcome() != "approved" {
			t.Errorf("%s retried: %d %s", r.payout, reply.Status, reply.Outcome())
		}
	}
	storetest.AssertInvariants(t, b.db)
	for i := range accounts {
		storetest.AssertBalances(t, b.db, fmt.Sprintf("dl-%d", i), "1000", "120", "880")
	}
}

// holdLocks keeps locking a random account for 50 to 300 ms at a time
// until ctx ends.
func holdLocks(ctx context.Context, t *testing.T, b *bundle, accounts int) {
	for ctx.Err() == nil {
		tx, err := b.pool.Begin(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		_, err = tx.Exec(context.Background(), `SELECT 1 FROM accounts WHERE account_id = $1 FOR UPDATE`,
			fmt.Sprintf("dl-%d", rand.IntN(accounts)))
		if err == nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(50+rand.IntN(250)) * time.Millisecond):
			}
		}
		_ = tx.Rollback(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
	}
}
