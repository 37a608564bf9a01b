package holds_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestAuthorizeTable covers rows 5 to 12 of contract §2.3 on a first
// request (first matching row wins), and the order of the rows where two
// could match: a denial holds nothing, an approval holds the amount.
func TestAuthorizeTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name            string
		req             auth
		outcome, reason string
	}{
		{"Row5UnknownSource", auth{source: "src-nope", fraud: 0.95}, ledger.OutcomeDenied, holds.ReasonUnknownFundingSource},
		{"Row5DestinationTokenIsNoSource", auth{source: "dst-only"}, ledger.OutcomeDenied, holds.ReasonUnknownFundingSource},
		{"Row6OtherOwner", auth{owner: "mallory", fraud: 0.95}, ledger.OutcomeDenied, holds.ReasonFundingSourceMismatch},
		{"Row7Frozen", auth{source: "src-frozen", fraud: 0.95}, ledger.OutcomeDenied, holds.ReasonAccountUnavailable},
		{"Row7Closed", auth{source: "src-closed"}, ledger.OutcomeDenied, holds.ReasonAccountUnavailable},
		{"Row8Currency", auth{source: "src-eur", fraud: 0.95}, ledger.OutcomeDenied, ledger.ReasonCurrencyMismatch},
		{"Row9Fraud", auth{amount: "1000", fraud: 0.95}, ledger.OutcomeDenied, holds.ReasonFraudSuspected},
		{"Row9AtTheThreshold", auth{fraud: 0.9}, ledger.OutcomeDenied, holds.ReasonFraudSuspected},
		{"Row9ThresholdZeroIsAThreshold", auth{fraud: 0.1, deny: 0.05, stepUp: 0.01}, ledger.OutcomeDenied, holds.ReasonFraudSuspected},
		{"Row10StepUp", auth{amount: "1000", fraud: 0.8}, ledger.OutcomeDenied, holds.ReasonStepUpRequired},
		{"Row11Insufficient", auth{amount: "100.01"}, ledger.OutcomeDenied, holds.ReasonInsufficientFunds},
		{"Row12Approved", auth{amount: "30.00"}, ledger.OutcomeApproved, ""},
		{"Row12AtExactlyAvailable", auth{amount: "100"}, ledger.OutcomeApproved, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, b := setup(t)
			fixture(t, b)
			a := authorize(t, b, c.req)
			want(t, a, ledger.StateNew, c.outcome, c.reason)
			held := "0"
			if a.Approved() {
				held = c.req.amount
				wantReference(t, a.Reference, "hold_")
			}
			storetest.AssertBalances(t, b.db, "p-open", "100", held, decimal.RequireFromString("100").Sub(decimal.RequireFromString(held)).String())
			storetest.AssertInvariants(t, b.db)
		})
	}
}

// TestAuthorizeIdempotency covers rows 1 to 2 of contract §2.3: a key seen
// answers what it answered first, whatever the account has become; the
// same key with other claims is refused; an invalid request stores nothing.
func TestAuthorizeIdempotency(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		fixture(t, b)
		first := authorize(t, b, auth{})
		want(t, first, ledger.StateNew, ledger.OutcomeApproved, "")
		// Even after the funds are gone, a replay answers what was stored.
		if _, err := b.db.Adjust(ctx, "p-open", decimal.RequireFromString("-70"), "drain", ""); err != nil {
			t.Fatal(err)
		}
		wantReplay(t, authorize(t, b, auth{}), first)
		if n := count(t, b, `SELECT attempts FROM callback_authorize WHERE idempotency_key = 'k-1'`); n != 2 {
			t.Fatalf("attempts %d, want 2", n)
		}
		storetest.AssertBalances(t, b.db, "p-open", "30", "30", "0")
	})
	t.Run("Row1ReplaysADenialAfterTopUp", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		fixture(t, b)
		want(t, authorize(t, b, auth{amount: "150"}), ledger.StateNew, ledger.OutcomeDenied, holds.ReasonInsufficientFunds)
		if _, err := b.db.Adjust(ctx, "p-open", decimal.RequireFromString("100"), "topup", ""); err != nil {
			t.Fatal(err)
		}
		want(t, authorize(t, b, auth{amount: "150"}), ledger.StateReplay, ledger.OutcomeDenied, holds.ReasonInsufficientFunds)
		storetest.AssertBalances(t, b.db, "p-open", "200", "0", "200")
	})
	t.Run("Row1aSameKeyOtherClaims", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		fixture(t, b)
		authorize(t, b, auth{})
		if a := authorize(t, b, auth{amount: "31"}); a.State != ledger.StateMismatch {
			t.Fatalf("%+v, want mismatch", a)
		}
		// Row 1a comes before row 2: a key seen answers 422 even with a
		// fraudScore out of range.
		if a := authorize(t, b, auth{fraud: 2}); a.State != ledger.StateMismatch {
			t.Fatalf("%+v, want mismatch", a)
		}
		storetest.AssertBalances(t, b.db, "p-open", "100", "30", "70")
	})
	t.Run("Row2FraudScoreOutOfRangeStoresNothing", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		fixture(t, b)
		for _, f := range []float64{-0.01, 1.01} {
			if a := authorize(t, b, auth{fraud: f}); a.State != ledger.StateInvalid {
				t.Fatalf("fraudScore %v: %+v, want invalid", f, a)
			}
		}
		if n := count(t, b, `SELECT count(*) FROM callback_authorize`); n != 0 {
			t.Fatalf("stored %d answers for invalid requests, want none", n)
		}
		storetest.AssertBalances(t, b.db, "p-open", "100", "0", "100")
		// The key stays free: the corrected request is decided.
		want(t, authorize(t, b, auth{}), ledger.StateNew, ledger.OutcomeApproved, "")
		storetest.AssertBalances(t, b.db, "p-open", "100", "30", "70")
	})
}

// TestAuthorizeSamePayout covers rows 3 and 4 of contract §2.3: a payout
// has one hold; another key for it answers that hold when its claims
// match and the hold is still held, and is denied otherwise. Either way
// nothing more is held.
func TestAuthorizeSamePayout(t *testing.T) {
	t.Parallel()
	t.Run("Row3SameHoldOtherKey", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		fixture(t, b)
		first := authorize(t, b, auth{})
		second := authorize(t, b, auth{key: "k-2"})
		want(t, second, ledger.StateNew, ledger.OutcomeApproved, "")
		if second.Reference != first.Reference {
			t.Fatalf("second key answered %s, want the payout's hold %s", second.Reference, first.Reference)
		}
		storetest.AssertBalances(t, b.db, "p-open", "100", "30", "70")
	})
	for _, c := range []struct {
		name string
		req  auth
	}{
		{"Row4OtherAmount", auth{key: "k-2", amount: "31"}},
		{"Row4OtherSource", auth{key: "k-2", source: "src-eur"}},
		{"Row4PrecedesRow5", auth{key: "k-2", source: "src-nope"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, b := setup(t)
			fixture(t, b)
			authorize(t, b, auth{})
			want(t, authorize(t, b, c.req), ledger.StateNew, ledger.OutcomeDenied, holds.ReasonPayoutAlreadyAuthorized)
			storetest.AssertBalances(t, b.db, "p-open", "100", "30", "70")
		})
	}
	t.Run("Row4HoldNoLongerHeld", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		fixture(t, b)
		h := authorize(t, b, auth{})
		want(t, release(t, b, "r-1", "po-1", h.Reference), ledger.StateNew, ledger.OutcomeApproved, "")
		want(t, authorize(t, b, auth{key: "k-2"}), ledger.StateNew, ledger.OutcomeDenied, holds.ReasonPayoutAlreadyAuthorized)
		storetest.AssertBalances(t, b.db, "p-open", "100", "0", "100")
	})
}
