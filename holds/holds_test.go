package holds_test

import (
	"context"
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
// package store, without HTTP: authorize_test.go and settle_test.go. Every
// subtest has a database of its own and runs alone with -run. Requests are
// built as a callback's claims decode into them (holds.AuthorizeRequest and
// its siblings, then Params), so that the fingerprints the idempotency rows
// compare are the ones ledgerd stores.

// providerID and keyFingerprint are what every request of these tests
// carries: one provider, opened with one signing secret.
const (
	providerID     = "bank-test"
	keyFingerprint = "test"
)

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
// key k-1, owner alice, source src-open, 30.00 USD, fraudScore 0.1, and
// the thresholds deny 0.9 and step-up 0.75.
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
	if a.fraud == 0 {
		a.fraud = 0.1
	}
	if a.deny == 0 {
		a.deny, a.stepUp = 0.9, 0.75
	}
	r := holds.AuthorizeRequest{PayoutID: def(a.payout, "po-1"), ProviderID: providerID, ExternalID: def(a.owner, "alice"),
		FundingSource: def(a.source, "src-open"), IdempotencyKey: def(a.key, "k-1"), FraudScore: a.fraud,
		Amount: ledger.Money{Currency: def(a.currency, "USD"), Value: decimal.RequireFromString(def(a.amount, "30.00"))}}
	return r.Params(keyFingerprint, time.Now(), a.deny, a.stepUp)
}

// captureParams are the arguments of a capture of hold for payout under
// key.
func captureParams(key, payout, hold string) holds.CaptureParams {
	return holds.CaptureRequest{PayoutID: payout, ProviderID: providerID, HoldReference: hold, IdempotencyKey: key}.
		Params(keyFingerprint, time.Now())
}

// releaseParams are the arguments of a release of hold under key; payout
// and reason "" are not given (the key's scope is then the holdReference).
func releaseParams(key, payout, hold, reason string) holds.ReleaseParams {
	return holds.ReleaseRequest{HoldReference: hold, IdempotencyKey: key, PayoutID: payout, ProviderID: providerID, Reason: reason}.
		Params(keyFingerprint, time.Now())
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
	ans, err := b.db.Capture(context.Background(), captureParams(key, payout, hold))
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return ans
}

// release releases hold with reason "cancelled"; payout "" is not given.
func release(t testing.TB, b bundle, key, payout, hold string) ledger.Answer {
	t.Helper()
	ans, err := b.db.Release(context.Background(), releaseParams(key, payout, hold, "cancelled"))
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

// wantReplay checks that again is the stored answer of first, replayed.
func wantReplay(t testing.TB, again, first ledger.Answer) {
	t.Helper()
	if again.State != ledger.StateReplay || again.Decision != first.Decision {
		t.Fatalf("replay %+v, want %+v", again, first)
	}
}

// wantReference checks that ref is one this ledger issues with prefix:
// the prefix and 26 base32 characters.
func wantReference(t testing.TB, ref, prefix string) {
	t.Helper()
	if !strings.HasPrefix(ref, prefix) || len(ref) != len(prefix)+26 {
		t.Fatalf("reference %q, want %s and 26 characters", ref, prefix)
	}
}

// count returns the result of a count(*) query.
func count(t testing.TB, b bundle, sql string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
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

// heldFixture is an account c-1 (USD 100) with a hold of 30.00 for payout
// cp-1 and one of 20.00 for cp-2: balance 100, held 50, available 50.
func heldFixture(t testing.TB, b bundle) (h1, h2 string) {
	t.Helper()
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "c-1", Owner: "alice", Funds: "100", Source: "src-c1"})
	h1 = authorize(t, b, auth{payout: "cp-1", source: "src-c1", amount: "30"}).Reference
	h2 = authorize(t, b, auth{payout: "cp-2", source: "src-c1", amount: "20"}).Reference
	storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	return h1, h2
}

// settlement returns the derived balance of settlement:USD: what captures
// have moved out of customers' accounts.
func settlement(t testing.TB, b bundle) decimal.Decimal {
	t.Helper()
	var d decimal.Decimal
	if err := b.pool.QueryRow(context.Background(), `SELECT balance FROM account_balances WHERE account_id = 'settlement:USD'`).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDecisionTablesRunAlone: every row of the hold decision tables passes
// when run on its own.
func TestDecisionTablesRunAlone(t *testing.T) {
	tooltest.SkipShort(t, "runs every row of the decision tables again, each alone in a test process of its own")
	t.Parallel()
	storetest.EachSubtestAlone(t, "TestAuthorizeTable", "TestAuthorizeIdempotency", "TestAuthorizeSamePayout",
		"TestCaptureTable", "TestReleaseTable", "TestReleaseIdempotency")
}
