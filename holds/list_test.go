package holds_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

func TestList(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "l-1", Owner: "alice", Funds: "100", Source: "src-l1"})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "l-2", Owner: "alice", Funds: "100", Source: "src-l2"})
	var refs []string
	for i := range 5 {
		refs = append(refs, authorize(t, b, auth{payout: fmt.Sprintf("lp-%d", i), source: "src-l1", amount: "1"}).Reference)
	}
	authorize(t, b, auth{payout: "lp-other", source: "src-l2", amount: "1"})
	capture(t, b, "c-0", "lp-0", refs[0])
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := b.db.ListHolds(ctx, holds.ListOptions{Status: holds.StatusHeld, AccountID: "l-1", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Holds {
			if h.Status != holds.StatusHeld || h.AccountID != "l-1" || seen[h.HoldReference] {
				t.Fatalf("page %d: unexpected %+v", pages, h)
			}
			seen[h.HoldReference] = true
		}
		if !p.HasMore {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != 4 {
		t.Fatalf("listed %d held holds of l-1, want 4", len(seen))
	}
	p, err := b.db.ListHolds(ctx, holds.ListOptions{PayoutID: "lp-0"})
	if err != nil || len(p.Holds) != 1 || p.Holds[0].Status != holds.StatusCaptured || p.HasMore {
		t.Fatalf("by payout = %+v, %v", p, err)
	}
	for _, o := range []holds.ListOptions{{Limit: 101}, {Limit: -1}, {Status: "gone"}, {Cursor: "!!"}, {Cursor: "Z2FyYmFnZQ"}, {PayoutID: "a\x00b"}} {
		var le *ledger.Error
		if _, err := b.db.ListHolds(ctx, o); !errors.As(err, &le) || le.Code != ledger.CodeInvalid {
			t.Errorf("ListHolds(%+v) = %v, want invalid", o, err)
		}
	}
}

// TestDecimalExactness places 1,000 holds of 0.01, captures half and
// releases half; every balance must come out exact.
func TestDecimalExactness(t *testing.T) {
	t.Parallel()
	_, b := setup(t)
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "x-1", Owner: "alice", Funds: "10.00", Source: "src-x1"})
	refs := make([]string, 1000)
	for i := range refs {
		d := authorize(t, b, auth{payout: "xp-" + strconv.Itoa(i), source: "src-x1", amount: "0.01"})
		if !d.Approved() {
			t.Fatalf("hold %d: %+v", i, d)
		}
		refs[i] = d.Reference
	}
	storetest.AssertBalances(t, b.db, "x-1", "10.00", "10.00", "0")
	if d := authorize(t, b, auth{payout: "xp-over", source: "src-x1", amount: "0.01"}); d.Reason != holds.ReasonInsufficientFunds {
		t.Fatalf("1,001st hold: %+v", d)
	}
	for i, ref := range refs {
		if i%2 == 0 {
			capture(t, b, "c-"+ref, "xp-"+strconv.Itoa(i), ref)
		} else {
			release(t, b, "r-"+ref, "", ref)
		}
	}
	storetest.AssertBalances(t, b.db, "x-1", "5.00", "0", "5.00")
	if s := settlement(t, b); !s.Equal(decimal.RequireFromString("5")) {
		t.Fatalf("settlement = %s", s)
	}
	storetest.AssertInvariants(t, b.db)
}
