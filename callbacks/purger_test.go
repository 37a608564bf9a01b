package callbacks_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/store/storetest"
)

func TestPurger(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "pg-1", Owner: "alice", Funds: "10", Source: "src-pg"})
	ctx := context.Background()
	for _, k := range []string{"old-1", "old-2", "new-1"} {
		if r := b.send(t, claims.Authorize, authorizeClaims("p-"+k, k, "alice", "src-pg", "1", 0)); r.Status != 200 {
			t.Fatal(r.Problem)
		}
	}
	// Young answers in the other endpoints' tables sit at the same physical
	// positions (ctid) as the expired ones: they must stay.
	young := []string{"y-1", "y-2", "y-3", "y-4", "y-5", "y-6"}
	for _, k := range young {
		if r := b.send(t, claims.Capture, captureClaims("p-"+k, k, "hold_"+k)); r.Status != 200 {
			t.Fatal(r.Problem)
		}
		if r := b.send(t, claims.Release, releaseClaims("p-"+k, k, "hold_"+k)); r.Status != 200 {
			t.Fatal(r.Problem)
		}
	}
	for _, table := range []string{"callback_authorize", "callback_capture", "callback_release", "callback_credit"} {
		if _, err := b.pool.Exec(ctx, `UPDATE `+table+` SET received_at = received_at - interval '841 hours' WHERE idempotency_key LIKE 'old-%'`); err != nil {
			t.Fatal(err)
		}
	}
	p := &callbacks.Purger{DB: b.db, Retention: 840 * time.Hour, BatchSize: 1}
	n, err := p.RunOnce(ctx)
	if err != nil || n != 2 {
		t.Fatalf("purged %d, %v; want 2", n, err)
	}
	var left []string
	rows, _ := b.pool.Query(ctx, `SELECT idempotency_key FROM callback_requests`)
	for rows.Next() {
		var k string
		_ = rows.Scan(&k)
		left = append(left, k)
	}
	slices.Sort(left)
	want := []string{"new-1"}
	for _, k := range young {
		want = append(want, k, k)
	}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	// Holds are not touched by the purge.
	storetest.AssertBalances(t, b.db, "pg-1", "10", "3", "7")
}
