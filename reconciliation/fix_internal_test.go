package reconciliation

import (
	"context"
	"testing"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestFixReclassifiesAHoldReleasedSinceTheSnapshot: a missed_capture whose
// hold was released between the snapshot and the fix (the service says
// completed) is the critical conflict, and nothing is applied.
func TestFixReclassifiesAHoldReleasedSinceTheSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "fx-1", Owner: "alice", Funds: "10", Source: "src-fx"})
	d := storetest.Hold(t, db, "fx-p", "alice", "src-fx", "4")
	if !d.Approved() {
		t.Fatal(d)
	}
	if r := storetest.Settle(t, db, "fx-p", d.Reference, false); !r.Approved() {
		t.Fatal(r)
	}
	r, err := New(Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	ds := []discrepancy{{
		finding:      ledger.Finding{Kind: KindMissedCapture, Severity: SeverityOf(KindMissedCapture), Subject: d.Reference},
		hold:         candidate{HoldReference: d.Reference, PayoutID: "fx-p", Status: holds.StatusHeld},
		payoutStatus: "completed",
	}}
	if err := r.fix(ctx, "rec_test", ds); err != nil {
		t.Fatal(err)
	}
	f := ds[0].finding
	if f.Kind != KindCaptureReleaseConflict || f.Severity != SeverityCritical || f.Fixed {
		t.Fatalf("finding = %+v, want an unfixed critical capture_release_conflict", f)
	}
	storetest.AssertBalances(t, db, "fx-1", "10", "0", "10")
}
