package reconciliation

import (
	"context"
	"testing"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/ledgertest"
	"github.com/provider-ledger/adapter/internal/pgtest"
	"github.com/provider-ledger/adapter/ledger"
)

// TestFixReclassifiesAHoldReleasedSinceTheSnapshot: a missed_capture whose
// hold was released between the snapshot and the fix (the service says
// completed) is the critical conflict, and nothing is applied.
func TestFixReclassifiesAHoldReleasedSinceTheSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	store := ledger.NewStore(pool, nil)
	ledgertest.Account(t, store, ledgertest.AccountOpts{AccountID: "fx-1", Owner: "alice", Funds: "10", Source: "src-fx"})
	hs := holds.NewStore(pool, nil)
	d, err := hs.Place(ctx, holds.PlaceRequest{PayoutID: "fx-p", ExternalID: "alice", FundingSource: "src-fx", Amount: ledgertest.USD("4")})
	if err != nil || !d.Approved() {
		t.Fatal(d, err)
	}
	if _, err := hs.Release(ctx, holds.ReleaseRequest{HoldReference: d.Reference, Reason: "cancelled"}); err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	ds := []discrepancy{{
		finding:      Finding{Kind: KindMissedCapture, Severity: SeverityOf(KindMissedCapture), Subject: d.Reference},
		hold:         candidate{HoldReference: d.Reference, PayoutID: "fx-p", AccountID: "fx-1", Status: holds.StatusHeld},
		payoutStatus: "completed",
	}}
	if err := r.fix(ctx, "rec_test", ds); err != nil {
		t.Fatal(err)
	}
	f := ds[0].finding
	if f.Kind != KindCaptureReleaseConflict || f.Severity != SeverityCritical || f.Fixed {
		t.Fatalf("finding = %+v, want an unfixed critical capture_release_conflict", f)
	}
	ledgertest.AssertBalances(t, store, "fx-1", "10", "0", "10")
}
