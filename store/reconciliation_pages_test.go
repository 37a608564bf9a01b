package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestCandidatesPage: the pages of a full run's candidates, read after its
// snapshot, are the holds placed since the cutoff as the snapshot saw
// them: each hold in the page of its owner's range (the first page from
// the very first owner, the last to the very last), a hold placed since
// the snapshot left out, one settled since read as held; a held hold
// placed before the cutoff is the snapshot's own.
func TestCandidatesPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storetest.DB(t)
	for _, o := range []string{"pg-a", "pg-b", "pg-c"} {
		storetest.Account(t, db, storetest.AccountOpts{Owner: o, Funds: "100", Source: "src-" + o})
	}
	now := time.Now()
	hold := func(payout, owner string) string {
		t.Helper()
		d := storetest.Hold(t, db, payout, owner, "src-"+owner, "1")
		if !d.Approved() {
			t.Fatalf("hold %s: %+v", payout, d)
		}
		return d.Reference
	}
	a1, a2, b1, c1 := hold("pg-pa1", "pg-a"), hold("pg-pa2", "pg-a"), hold("pg-pb1", "pg-b"), hold("pg-pc1", "pg-c")
	if d := storetest.Settle(t, db, "pg-pa2", a2, true); !d.Approved() {
		t.Fatal(d)
	}
	// A hold on a system account (whose owner is ""): an oddity the first
	// page reads all the same. Stale: held, placed long before the cutoff.
	if _, err := pool.Exec(ctx, `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
VALUES ('hold_sys', 'pg-psys', 'settlement:USD', 'x', 'USD', 1, now()), ('hold_old', 'pg-pold', 'settlement:USD', 'x', 'USD', 1, now() - interval '30 days')`); err != nil {
		t.Fatal(err)
	}
	cutoff := now.Add(-264 * time.Hour)
	snap, err := db.Reconcile(ctx, ledger.ReconcileParams{Now: now, StaleBefore: cutoff, ComparedSince: cutoff,
		CreditsSince: cutoff, WithProvider: true})
	if err != nil || snap.Snapshot == "" {
		t.Fatalf("snapshot %q: %v", snap.Snapshot, err)
	}
	if len(snap.Candidates) != 1 || snap.Candidates[0].HoldReference != "hold_old" || snap.Candidates[0].Owner != "" {
		t.Errorf("the snapshot's candidates %+v, want the stale hold alone", snap.Candidates)
	}
	// Since the snapshot: b places another hold, a's and c's are settled.
	hold("pg-pb2", "pg-b")
	if d := storetest.Settle(t, db, "pg-pa1", a1, false); !d.Approved() {
		t.Fatal(d)
	}
	if d := storetest.Settle(t, db, "pg-pc1", c1, true); !d.Approved() {
		t.Fatal(d)
	}
	var got []string
	for _, p := range []ledger.CandidatesPage{
		{First: true, Through: "pg-a"},
		{After: "pg-a", Through: "pg-b"},
		{After: "pg-b"},
	} {
		p.Snapshot, p.Since = snap.Snapshot, cutoff
		cs, err := db.CandidatesPage(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, "|")
		for _, c := range cs {
			got = append(got, c.Owner+" "+c.HoldReference+" "+c.Status)
		}
	}
	want := []string{"|", " hold_sys held", "pg-a " + a1 + " held", "pg-a " + a2 + " captured",
		"|", "pg-b " + b1 + " held", "|", "pg-c " + c1 + " held"}
	if !slices.Equal(got, want) {
		t.Errorf("pages\n%v\nwant\n%v", got, want)
	}
}
