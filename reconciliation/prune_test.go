package reconciliation_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestOldCheckpointsArePruned: a run deletes the checkpoints older than
// CheckpointRetention that no run starts from again; it keeps the latest
// full one and those after it, every one within the retention, and the
// ones those were run from; the next run starts from the last one all the
// same.
func TestOldCheckpointsArePruned(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	s := b.sender(t, "prune-", "100.00")
	t0 := b.clock()
	checkpoints := func() []string { return storetest.CheckpointIDs(t, b.pool) }
	runAt := func(at time.Duration, mode string) reconciliation.Report {
		t.Helper()
		b.setNow(t0.Add(at))
		b.capture(t, b.hold(t, s, "1.00", timeZero))
		rep := b.run(t, false)
		if rep.Mode != mode || rep.Checkpoint == "" || rep.Status != reconciliation.StatusClean {
			t.Fatalf("run at %s: %+v, want a clean %s run that writes a checkpoint", at, rep, mode)
		}
		return rep
	}
	day := 24 * time.Hour

	c1 := runAt(0, reconciliation.ModeFull)
	c2 := runAt(20*time.Hour, reconciliation.ModeIncremental)
	// The last full run is 30 days old: full. The one before it (c2) is
	// within the retention, and so is the full one it was run from (c1).
	c3 := runAt(30*day+10*time.Hour, reconciliation.ModeFull)
	if got, want := checkpoints(), []string{c1.Checkpoint, c2.Checkpoint, c3.Checkpoint}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v (none pruned)", got, want)
	}
	c4 := runAt(31*day, reconciliation.ModeIncremental)
	if c4.FromCheckpoint != c3.Checkpoint {
		t.Fatalf("run from %s, want %s", c4.FromCheckpoint, c3.Checkpoint)
	}
	if got, want := checkpoints(), []string{c3.Checkpoint, c4.Checkpoint}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v (the two past the retention pruned)", got, want)
	}
	// However old, the latest full checkpoint and those after it stay.
	if n, err := b.db.PruneCheckpoints(context.Background(), t0.Add(1000*day), 50); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v), want none", n, err)
	}
	c5 := runAt(31*day+time.Hour, reconciliation.ModeIncremental)
	if c5.FromCheckpoint != c4.Checkpoint {
		t.Fatalf("run from %s, want %s", c5.FromCheckpoint, c4.Checkpoint)
	}
	if got, want := checkpoints(), []string{c3.Checkpoint, c4.Checkpoint, c5.Checkpoint}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v", got, want)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_account_states s
WHERE NOT EXISTS (SELECT 1 FROM reconciliation_checkpoints c WHERE c.checkpoint_id = s.checkpoint_id)`); n != 0 {
		t.Errorf("%d account states name a pruned checkpoint", n)
	}
}
