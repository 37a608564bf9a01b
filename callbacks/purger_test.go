package callbacks_test

import (
	"context"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/internal/ledgertest"
)

func TestPurger(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, ledgertest.AccountOpts{AccountID: "pg-1", Owner: "alice", Funds: "10", Source: "src-pg"})
	ctx := context.Background()
	for _, k := range []string{"old-1", "old-2", "new-1"} {
		if r := b.send(t, callbacks.Authorize, authorizeClaims("p-"+k, k, "alice", "src-pg", "1", 0)); r.Status != 200 {
			t.Fatal(r.Problem)
		}
	}
	if _, err := b.pool.Exec(ctx, `UPDATE callback_requests SET received_at = received_at - interval '841 hours' WHERE idempotency_key LIKE 'old-%'`); err != nil {
		t.Fatal(err)
	}
	p := &callbacks.Purger{Pool: b.pool, Retention: 840 * time.Hour, BatchSize: 1}
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
	if len(left) != 1 || left[0] != "new-1" {
		t.Fatalf("left %v, want [new-1]", left)
	}
	// Holds are not touched by the purge.
	ledgertest.AssertBalances(t, b.ledger, "pg-1", "10", "3", "7")
}
