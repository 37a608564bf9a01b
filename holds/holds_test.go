package holds_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// The decision tables of contract §2.3 to 2.5, row by row, against the
// server-side functions (cb_authorize, cb_capture, cb_release) through
// package store, without HTTP. Every subtest has a database of its own and
// runs alone with -run.

type bundle struct {
	db   *store.DB
	pool *pgxpool.Pool
}

func setup(t testing.TB) (context.Context, bundle) {
	t.Helper()
	db, pool := storetest.DB(t)
	return context.Background(), bundle{db: db, pool: pool}
}

// auth is an authorize request; zero fields take defaults: payout po-1,
// key k-1, owner alice, source src-open, 30.00 USD, fraudScore 0.1.
type auth struct {
	key, payout, owner, source, currency, amount string
	fraud                                        float64
	deny, stepUp                                 float64
}

func (a auth) params() holds.AuthorizeParams {
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	a.key, a.payout, a.owner = def(a.key, "k-1"), def(a.payout, "po-1"), def(a.owner, "alice")
	a.source, a.currency, a.amount = def(a.source, "src-open"), def(a.currency, "USD"), def(a.amount, "30.00")
	if a.fraud == 0 {
		a.fraud = 0.1
	}
	if a.deny == 0 {
		a.deny, a.stepUp = 0.9, 0.75
	}
	amount := decimal.RequireFromString(a.amount)
	return holds.AuthorizeParams{Key: a.key, Fingerprint: fp(a.payout, a.owner, a.source, a.currency, amount.String(), a.key, fmt.Sprint(a.fraud)),
		KeyFingerprint: "test", Now: time.Now(), PayoutID: a.payout, ExternalID: a.owner, FundingSource: a.source,
		Currency: a.currency, Amount: amount, FraudScore: a.fraud, FraudDeny: a.deny, FraudStepUp: a.stepUp,
		HoldReference: ledger.NewReference("hold_")}
}

func fp(parts ...string) []byte {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return h[:]
}

func authorize(t testing.TB, b bundle, a auth) ledger.Answer {
	t.Helper()
	ans, err := b.db.Authorize(context.Background(), a.params())
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	return ans
}

func capture(t testing.TB, b bundle, key, payout, hold string) ledger.Answer {
	t.Helper()
	ans, err := b.db.Capture(context.Background(), holds.CaptureParams{Key: key, Fingerprint: fp(key, payout, hold),
		KeyFingerprint: "test", Now: time.Now(), PayoutID: payout, HoldReference: hold,
		CaptureReference: ledger.NewReference("cap_"), TransactionID: ledger.NewTransactionID()})
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return ans
}

// release releases hold; payout "" is not given (the key's scope is then
// the holdReference).
func release(t testing.TB, b bundle, key, payout, hold string) ledger.Answer {
	t.Helper()
	var p *string
	if payout != "" {
		p = &payout
	}
	reason := "cancelled"
	ans, err := b.db.Release(context.Background(), holds.ReleaseParams{Key: key, Fingerprint: fp(key, payout, hold),
		KeyFingerprint: "test", Now: time.Now(), PayoutID: p, HoldReference: hold, Reason: &reason,
		ReleaseReference: ledger.NewReference("rel_")})
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	return ans
}

// want checks an answer's state, outcome and reason, and that it carries
// a reference exactly when approved.
func want(t testing.TB, a ledger.Answer, state ledger.AnswerState, outcome, reason string) {
	t.Helper()
	if a.State != state || a.Outcome != outcome || a.Reason != reason || (outcome == ledger.OutcomeApproved) != (a.Reference != "") {
		t.Fatalf("answer %+v, want %s %s %q", a, state, outcome, reason)
	}
}

// fixture opens alice's accounts: p-open (USD 100, src-open), p-frozen,
// p-closed, p-eur (EUR 100), and p-dst (a destination token only).
func fixture(t testing.TB, b bundle) {
	t.Helper()
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "p-open", Owner: "alice", Funds: "100", Source: "src-open"})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "p-frozen", Owner: "alice", Funds: "100", Source: "src-frozen", Status: ledger.StatusFrozen})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "p-closed", Owner: "alice", Source: "src-closed", Status: ledger.StatusClosed})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "p-eur", Owner: "alice", Currency: "EUR", Funds: "100", Source: "src-eur"})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "p-dst", Owner: "alice", Funds: "100", Dest: "dst-only"})
}

// TestAuthorizeTable covers every row of contract §2.3 (first matching row
// wins), and the order of the rows where two could match.
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
			}
			storetest.AssertBalances(t, b.db, "p-open", "100", held, decimal.RequireFromString("100").Sub(decimal.RequireFromString(held)).String())
			storetest.AssertInvariants(t, b.db)
		})
	}
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
		again := authorize(t, b, auth{})
		if again.State != ledger.StateReplay || again.Decision != first.Decision {
			t.Fatalf("replay %+v, want %+v", again, first)
		}
		var attempts int
		if err := b.pool.QueryRow(ctx, `SELECT attempts FROM callback_authorize WHERE idempotency_key = 'k-1'`).Scan(&attempts); err != nil || attempts != 2 {
			t.Fatalf("attempts %d, %v", attempts, err)
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
		ctx, b := setup(t)
		fixture(t, b)
		for _, f := range []float64{-0.01, 1.01} {
			if a := authorize(t, b, auth{fraud: f}); a.State != ledger.StateInvalid {
				t.Fatalf("fraudScore %v: %+v, want invalid", f, a)
			}
		}
		var n int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM callback_authorize`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("stored %d answers, %v", n, err)
		}
		// The key stays free: the corrected request is decided.
		want(t, authorize(t, b, auth{}), ledger.StateNew, ledger.OutcomeApproved, "")
	})
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

// heldFixture is an account c-1 (USD 100) with a hold of 30.00 for payout
// cp-1 and one of 20.00 for cp-2.
func heldFixture(t testing.TB, b bundle) (h1, h2 string) {
	t.Helper()
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "c-1", Owner: "alice", Funds: "100", Source: "src-c1"})
	h1 = authorize(t, b, auth{payout: "cp-1", source: "src-c1", amount: "30"}).Reference
	h2 = authorize(t, b, auth{payout: "cp-2", source: "src-c1", amount: "20"}).Reference
	storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	return h1, h2
}

// settlement returns the derived balance of settlement:USD.
func settlement(t testing.TB, b bundle) decimal.Decimal {
	t.Helper()
	var d decimal.Decimal
	if err := b.pool.QueryRow(context.Background(), `SELECT balance FROM account_balances WHERE account_id = 'settlement:USD'`).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCaptureTable covers every row of contract §2.4.
func TestCaptureTable(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		first := capture(t, b, "c-k", "cp-1", h1)
		again := capture(t, b, "c-k", "cp-1", h1)
		if again.State != ledger.StateReplay || again.Decision != first.Decision {
			t.Fatalf("replay %+v, want %+v", again, first)
		}
		if other := capture(t, b, "c-k", "cp-1", "hold_other"); other.State != ledger.StateMismatch {
			t.Fatalf("same key, other claims: %+v", other)
		}
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
	})
	t.Run("Row2NeverIssuedIsAnOrphanWithOneReference", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		heldFixture(t, b)
		o1 := capture(t, b, "c-k1", "cp-9", "hold_never")
		o2 := capture(t, b, "c-k2", "cp-9", "hold_never")
		want(t, o1, ledger.StateNew, ledger.OutcomeApproved, "")
		if o2.Reference != o1.Reference {
			t.Fatalf("orphan capture answered %s then %s", o1.Reference, o2.Reference)
		}
		var n int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM orphans WHERE kind = 'capture' AND hold_reference = 'hold_never'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("orphans %d, %v", n, err)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row3OtherPayout", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		want(t, capture(t, b, "c-k", "cp-2", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonPayoutMismatch)
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row4CapturedAnswersTheOriginalReference", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		first := capture(t, b, "c-k1", "cp-1", h1)
		second := capture(t, b, "c-k2", "cp-1", h1)
		want(t, second, ledger.StateNew, ledger.OutcomeApproved, "")
		if second.Reference != first.Reference {
			t.Fatalf("second capture %s, want %s", second.Reference, first.Reference)
		}
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
	})
	t.Run("Row5Released", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		release(t, b, "r-k", "cp-1", h1)
		want(t, capture(t, b, "c-k", "cp-1", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonHoldReleased)
		storetest.AssertBalances(t, b.db, "c-1", "100", "20", "80")
	})
	t.Run("Row6HeldIsCaptured", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		h1, _ := heldFixture(t, b)
		c := capture(t, b, "c-k", "cp-1", h1)
		want(t, c, ledger.StateNew, ledger.OutcomeApproved, "")
		if !strings.HasPrefix(c.Reference, "cap_") || len(c.Reference) != len("cap_")+26 {
			t.Fatalf("reference %q", c.Reference)
		}
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
		if s := settlement(t, b); !s.Equal(decimal.RequireFromString("30")) {
			t.Fatalf("settlement %s, want 30", s)
		}
		h, err := b.db.GetHold(ctx, h1)
		if err != nil || h.Status != holds.StatusCaptured || h.CaptureReference != c.Reference || h.CapturedAt == nil {
			t.Fatalf("hold %+v, %v", h, err)
		}
		storetest.AssertInvariants(t, b.db)
	})
}

// TestReleaseTable covers every row of contract §2.5.
func TestReleaseTable(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		first := release(t, b, "r-k", "cp-2", h2)
		again := release(t, b, "r-k", "cp-2", h2)
		if again.State != ledger.StateReplay || again.Decision != first.Decision {
			t.Fatalf("replay %+v, want %+v", again, first)
		}
		if other := release(t, b, "r-k", "cp-2", "hold_other"); other.State != ledger.StateMismatch {
			t.Fatalf("same key, other claims: %+v", other)
		}
	})
	t.Run("Row1ScopeIsTheHoldReferenceWithoutPayout", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		h1, h2 := heldFixture(t, b)
		// The same key on two holds, without payoutID: two scopes.
		want(t, release(t, b, "r-k", "", h1), ledger.StateNew, ledger.OutcomeApproved, "")
		want(t, release(t, b, "r-k", "", h2), ledger.StateNew, ledger.OutcomeApproved, "")
		var scopes int
		if err := b.pool.QueryRow(ctx, `SELECT count(DISTINCT scope) FROM callback_release WHERE idempotency_key = 'r-k'`).Scan(&scopes); err != nil || scopes != 2 {
			t.Fatalf("scopes %d, %v", scopes, err)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "0", "100")
	})
	t.Run("Row2NeverIssuedIsAnOrphan", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		heldFixture(t, b)
		o1 := release(t, b, "r-k1", "", "hold_never")
		o2 := release(t, b, "r-k2", "", "hold_never")
		want(t, o1, ledger.StateNew, ledger.OutcomeApproved, "")
		if o2.Reference != o1.Reference || !strings.HasPrefix(o1.Reference, "rel_") {
			t.Fatalf("orphan release answered %s then %s", o1.Reference, o2.Reference)
		}
	})
	t.Run("Row3OtherPayout", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		want(t, release(t, b, "r-k", "cp-1", h2), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonPayoutMismatch)
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row4ReleasedAnswersTheOriginalReference", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		first := release(t, b, "r-k1", "cp-2", h2)
		second := release(t, b, "r-k2", "", h2)
		want(t, second, ledger.StateNew, ledger.OutcomeApproved, "")
		if second.Reference != first.Reference {
			t.Fatalf("second release %s, want %s", second.Reference, first.Reference)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "30", "70")
	})
	t.Run("Row5Captured", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		capture(t, b, "c-k", "cp-1", h1)
		want(t, release(t, b, "r-k", "cp-1", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonHoldCaptured)
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
	})
	t.Run("Row6HeldIsReleased", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		_, h2 := heldFixture(t, b)
		r := release(t, b, "r-k", "cp-2", h2)
		want(t, r, ledger.StateNew, ledger.OutcomeApproved, "")
		storetest.AssertBalances(t, b.db, "c-1", "100", "30", "70")
		h, err := b.db.GetHold(ctx, h2)
		if err != nil || h.Status != holds.StatusReleased || h.ReleaseReason != "cancelled" || h.ReleasedAt == nil || h.ReleaseReference != r.Reference {
			t.Fatalf("hold %+v, %v", h, err)
		}
		if s := settlement(t, b); !s.IsZero() {
			t.Fatalf("a release moved settlement to %s", s)
		}
		storetest.AssertInvariants(t, b.db)
	})
}

// TestDecisionTablesRunAlone: every row of the hold decision tables passes
// when run on its own.
func TestDecisionTablesRunAlone(t *testing.T) {
	tooltest.SkipShort(t, "runs every row of the decision tables again, each alone in a test process of its own")
	t.Parallel()
	storetest.EachSubtestAlone(t, "TestAuthorizeTable", "TestCaptureTable", "TestReleaseTable")
}
