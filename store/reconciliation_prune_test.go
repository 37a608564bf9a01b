package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestPruneCheckpoints: a batch deletes the newest of the checkpoints due
// first, so a chain of them (each run from the one before) goes a batch at
// a time without a reference to a deleted row; a checkpoint an account
// state still names stays, whatever its age; the latest full one and
// those after it stay.
func TestPruneCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storetest.DB(t)
	old := time.Now().Add(-90 * 24 * time.Hour)
	var ids []string
	// f1 <- i1 <- i2, f2 <- i3, all old; f3 <- i4, the latest.
	add := func(age time.Duration, from string) string {
		t.Helper()
		id, run := ledger.NewReference("chk_"), ledger.NewReference("rec_")
		if _, err := pool.Exec(ctx, `INSERT INTO reconciliation_runs (run_id, started_on, fix) VALUES ($1, $2, false)`,
			run, old.Add(age)); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO reconciliation_checkpoints (checkpoint_id, run_id, taken_on, snapshot, full_run, from_checkpoint, accounts)
VALUES ($1, $2, $3, pg_current_snapshot(), $4, nullif($5, ''), 0)`, id, run, old.Add(age), from == "", from); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		return id
	}
	f1 := add(0, "")
	i1 := add(time.Hour, f1)
	i2 := add(2*time.Hour, i1)
	f2 := add(3*time.Hour, "")
	i3 := add(4*time.Hour, f2)
	f3 := add(5*time.Hour, "")
	i4 := add(6*time.Hour, f3)
	// An account state naming f2 (as if a full run had missed it).
	if _, err := pool.Exec(ctx, `INSERT INTO reconciliation_account_states (account_id, checkpoint_id, balance, held)
VALUES ('ghost', $1, 0, 0)`, f2); err != nil {
		t.Fatal(err)
	}
	left := func() []string { return storetest.CheckpointIDs(t, pool) }
	now := time.Now()
	for _, c := range []struct {
		limit int
		want  []string
	}{
		{1, []string{f1, i1, i2, f2, f3, i4}}, // i3, the newest due
		{1, []string{f1, i1, f2, f3, i4}},
		{2, []string{f2, f3, i4}},
		{9, []string{f2, f3, i4}}, // f2 is named by an account state
	} {
		if _, err := db.PruneCheckpoints(ctx, now.Add(-30*24*time.Hour), c.limit); err != nil {
			t.Fatal(err)
		}
		if got := left(); !slices.Equal(got, c.want) {
			t.Fatalf("left %v, want %v (of %v)", got, c.want, ids)
		}
	}
	_ = i3
}
