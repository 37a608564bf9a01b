package reconciliation_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestKinds: Kinds lists every kind a run can report, once each, so that
// the findings tables of docs/reconciliation.md and docs/contract.md,
// held to Kinds by package docs, list them all. The kinds of the
// invariant checks are the store's: each query of a snapshot that checks
// an invariant is timed under its kind.
func TestKinds(t *testing.T) {
	t.Parallel()
	kinds := reconciliation.Kinds()
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] {
			t.Errorf("Kinds lists %s twice", k)
		}
		seen[k] = true
		if s := reconciliation.SeverityOf(k); s != reconciliation.SeverityWarning && s != reconciliation.SeverityCritical {
			t.Errorf("SeverityOf(%s) = %q", k, s)
		}
	}
	for _, k := range []string{reconciliation.KindStaleHold, reconciliation.KindOrphanCapture, reconciliation.KindOrphanRelease,
		reconciliation.KindDuplicateCreditAttempt, reconciliation.KindMissedRelease, reconciliation.KindMissedCapture,
		reconciliation.KindCaptureReleaseConflict, reconciliation.KindCaptureCancelConflict, reconciliation.KindMissingCredit,
		reconciliation.KindProviderUnreachable, reconciliation.KindPayoutNotDebited, reconciliation.KindPayoutNotHeld,
		reconciliation.KindPayoutAmountMismatch} {
		if !seen[k] {
			t.Errorf("Kinds lacks %s", k)
		}
	}
	db, _ := storetest.DB(t)
	now := time.Now()
	snap, err := db.Reconcile(context.Background(), ledger.ReconcileParams{Now: now, StaleBefore: now, ComparedSince: now, CreditsSince: now})
	if err != nil {
		t.Fatal(err)
	}
	invariants := 0
	for _, tm := range snap.Timings {
		if tm.Invariant == "" {
			continue
		}
		invariants++
		if !slices.Contains(kinds, tm.Query) {
			t.Errorf("the invariant check %s %s reports kind %s, which Kinds lacks", tm.Invariant, tm.Query, tm.Query)
		}
	}
	if invariants < 6 {
		t.Fatalf("%d invariant checks timed in a snapshot, want one per query of I1 to I6: %+v", invariants, snap.Timings)
	}
}
