package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestOpenHoldReadsSkipHistory: what /metrics reads each scrape (holds
// outstanding and stale per currency) never touches holds or their
// settlements, and a page of held holds reaches them only by index
// lookups of the open ones, so that neither costs more as the history
// of settled holds grows (as an anti-join of every hold ever placed with
// every settlement would).
func TestOpenHoldReadsSkipHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.DB(t)
	if _, err := pool.Exec(ctx, planSeed); err != nil {
		t.Fatal(err)
	}
	sqls := store.HoldReadSQL()
	args := map[string][]any{
		"outstanding": {time.Now()},
		"listHeld":    {"", holds.StatusHeld, "", time.Time{}, "", 101},
	}
	for name, sql := range sqls {
		var raw []byte
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			// Whatever is cheapest on these few thousand rows, the plan
			// must have a way to the open holds that is not a scan of
			// history: with sequential scans priced out, none remains on
			// holds or hold_settlements.
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args[name]...).Scan(&raw)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plans []struct{ Plan lookupNode }
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, raw, err)
		}
		var touched []string
		var walk func(n lookupNode)
		walk = func(n lookupNode) {
			if n.Relation == "holds" || n.Relation == "hold_settlements" {
				// A lookup names the hold; a walk of an index does not.
				touched = append(touched, n.NodeType+" on "+n.Relation+" by "+n.IndexCond+n.Recheck)
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(plans[0].Plan)
		for _, what := range touched {
			if name == "outstanding" || strings.HasPrefix(what, "Seq Scan") || !strings.Contains(what, "hold_reference") {
				t.Errorf("%s reads history: %s\n%s", name, what, raw)
			}
		}
	}
}

// lookupNode is a node of a JSON plan with its index condition.
type lookupNode struct {
	NodeType  string       `json:"Node Type"`
	Relation  string       `json:"Relation Name"`
	IndexCond string       `json:"Index Cond"`
	Recheck   string       `json:"Recheck Cond"` // a bitmap heap scan's, from its index scan
	Plans     []lookupNode `json:"Plans"`
}

// TestOpenHoldsFollowPlacingAndSettling: open_holds lists the holds still
// held, maintained by the statements that place and settle a hold: a
// held, a captured and a released hold leave the held one listed; a new
// hold is listed and leaves the list when settled; the invariants hold.
func TestOpenHoldsFollowPlacingAndSettling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "oh-1", Owner: "olga", Source: "oh-src", Funds: "100"})
	place := func(payout string) string {
		t.Helper()
		a, err := db.Authorize(ctx, holds.AuthorizeParams{Key: "a-" + payout, Fingerprint: []byte(payout), KeyFingerprint: "kf",
			Now: time.Now(), PayoutID: payout, ExternalID: "olga", FundingSource: "oh-src", Currency: "USD",
			Amount: decimal.RequireFromString("10"), FraudDeny: 0.9, FraudStepUp: 0.75, HoldReference: "hold_" + payout})
		if err != nil || a.Outcome != "approved" {
			t.Fatalf("authorize %s: %+v %v", payout, a, err)
		}
		return a.Reference
	}
	settle := func(payout string, capture bool) {
		t.Helper()
		var a ledger.Answer
		var err error
		if capture {
			a, err = db.Capture(ctx, holds.CaptureParams{Key: "c-" + payout, Fingerprint: []byte(payout), KeyFingerprint: "kf",
				Now: time.Now(), PayoutID: payout, HoldReference: "hold_" + payout, CaptureReference: "cap_" + payout, TransactionID: uuid.New()})
		} else {
			a, err = db.Release(ctx, holds.ReleaseParams{Key: "r-" + payout, Fingerprint: []byte(payout), KeyFingerprint: "kf",
				Now: time.Now(), PayoutID: &payout, HoldReference: "hold_" + payout, ReleaseReference: "rel_" + payout})
		}
		if err != nil || a.Outcome != "approved" {
			t.Fatalf("settle %s: %+v %v", payout, a, err)
		}
	}
	open := func() []string {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT hold_reference FROM open_holds ORDER BY hold_reference`)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}

	place("p1")
	place("p2")
	place("p3")
	if got := strings.Join(open(), ","); got != "hold_p1,hold_p2,hold_p3" {
		t.Fatalf("open holds after three holds: %q, want the three", got)
	}
	settle("p1", true)
	settle("p2", false)
	if got := strings.Join(open(), ","); got != "hold_p3" {
		t.Fatalf("open holds after a capture and a release: %q, want hold_p3", got)
	}
	place("p4")
	if got := strings.Join(open(), ","); got != "hold_p3,hold_p4" {
		t.Fatalf("open holds after a new hold: %q, want hold_p3,hold_p4", got)
	}
	settle("p3", true)
	settle("p4", false)
	if got := open(); len(got) != 0 {
		t.Fatalf("open holds after settling every hold: %q, want none", got)
	}
	storetest.AssertBalances(t, db, "oh-1", "80", "0", "80")
	storetest.AssertInvariants(t, db)
}
