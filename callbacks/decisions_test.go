package callbacks_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// want is the expected answer of one callback: a status and, for 200, the
// outcome and reason (reference "" means "present iff approved").
type want struct {
	status  int
	outcome string
	reason  string
}

func check(t *testing.T, r *caller.Reply, w want, refClaim string) {
	t.Helper()
	if r.Status != w.status {
		t.Fatalf("status %d, want %d; problem %v", r.Status, w.status, r.Problem)
	}
	if w.status != 200 {
		return
	}
	if r.Outcome() != w.outcome || r.Str("reason") != w.reason {
		t.Fatalf("answer %v, want %s/%s", r.Service, w.outcome, w.reason)
	}
	ref := r.Str(refClaim)
	if (w.outcome == "approved") != (len(ref) >= 26) {
		t.Fatalf("answer %v: %s present iff approved", r.Service, refClaim)
	}
}

// The decision tables of contract §2.3 to 2.6 through HTTP: every subtest
// has a database and a server of its own, builds the state its row needs
// (authorizeFixture, settleFixture, creditFixture) and checks the balances
// its row leaves; the parents share nothing, so each row passes under
// -run on its own (TestDecisionTablesRunAlone holds them to it).

// authorizeFixture is the state of the authorize table: alice's accounts
// (open, frozen, in EUR; 100 each) and payout po-1 authorized for 30.00
// with key k-1 on the open one.
func authorizeFixture(t *testing.T) (*bundle, *caller.Reply) {
	t.Helper()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "a-open", Owner: "alice", Funds: "100", Source: "src-open"})
	b.account(t, storetest.AccountOpts{AccountID: "a-frozen", Owner: "alice", Funds: "100", Source: "src-frozen", Status: ledger.StatusFrozen})
	b.account(t, storetest.AccountOpts{AccountID: "a-eur", Owner: "alice", Currency: "EUR", Funds: "100", Source: "src-eur"})
	first := b.send(t, claims.Authorize, authorizeClaims("po-1", "k-1", "alice", "src-open", "30.00", 0.1))
	check(t, first, want{200, "approved", ""}, "holdReference")
	if first.Str("idempotencyKey") != "k-1" {
		t.Fatalf("idempotencyKey not echoed: %v", first.Service)
	}
	storetest.AssertBalances(t, b.db, "a-open", "100", "30", "70")
	return b, first
}

// TestAuthorizeTable covers every row of contract §2.3.
func TestAuthorizeTable(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		b, first := authorizeFixture(t)
		// Even after the account is drained, a replay answers what was stored.
		check(t, b.send(t, claims.Authorize, authorizeClaims("po-12", "k-12", "alice", "src-open", "70.00", 0)), want{200, "approved", ""}, "holdReference")
		again := b.send(t, claims.Authorize, authorizeClaims("po-1", "k-1", "alice", "src-open", "30.00", 0.1))
		if again.Status != 200 || !reflect.DeepEqual(again.Service, first.Service) {
			t.Fatalf("replay %d %v, want %v", again.Status, again.Service, first.Service)
		}
		storetest.AssertBalances(t, b.db, "a-open", "100", "100", "0")
	})
	t.Run("Row1aSameKeyOtherClaims", func(t *testing.T) {
		t.Parallel()
		b, _ := authorizeFixture(t)
		r := b.send(t, claims.Authorize, authorizeClaims("po-1", "k-1", "alice", "src-open", "31.00", 0.1))
		check(t, r, want{status: 422}, "")
		if r.ProblemType() != "urn:provider-ledger:problem:idempotency-key-mismatch" {
			t.Fatalf("problem %v", r.Problem)
		}
		storetest.AssertBalances(t, b.db, "a-open", "100", "30", "70")
	})
	t.Run("Row1AuditClaimsAreNotBusinessClaims", func(t *testing.T) {
		t.Parallel()
		b, first := authorizeFixture(t)
		c := authorizeRequest("po-1", "k-1", "alice", "src-open", "30.00", 0.1)
		c.RequestID, c.CallerSubject = "trace-2", "someone-else"
		if r := b.send(t, claims.Authorize, claims.AuthorizeService(c)); r.Status != 200 || r.Str("holdReference") != first.Str("holdReference") {
			t.Fatalf("replay with other audit claims: %d %v", r.Status, r.Service)
		}
		storetest.AssertBalances(t, b.db, "a-open", "100", "30", "70")
	})
	authorizeRows(t)
	t.Run("Row3SameHoldOtherKey", func(t *testing.T) {
		t.Parallel()
		b, first := authorizeFixture(t)
		r := b.send(t, claims.Authorize, authorizeClaims("po-1", "k-3", "alice", "src-open", "30", 0.2))
		if r.Status != 200 || r.Outcome() != "approved" || r.Str("holdReference") != first.Str("holdReference") {
			t.Fatalf("row 3: %d %v", r.Status, r.Service)
		}
		storetest.AssertBalances(t, b.db, "a-open", "100", "30", "70")
	})
	t.Run("Row1NegativeZeroIsTheSameScore", func(t *testing.T) {
		t.Parallel()
		b, _ := authorizeFixture(t)
		c := authorizeRequest("po-z", "k-z", "alice", "src-open", "0.01", 0)
		first := b.send(t, claims.Authorize, claims.AuthorizeService(c))
		c.FraudScore = math.Copysign(0, -1) // sent as -0
		again := b.send(t, claims.Authorize, claims.AuthorizeService(c))
		if first.Status != 200 || again.Status != 200 || !reflect.DeepEqual(again.Service, first.Service) {
			t.Fatalf("fraudScore 0 then -0: %d %v, %d %v", first.Status, first.Service, again.Status, again.Problem)
		}
		storetest.AssertBalances(t, b.db, "a-open", "100", "30.01", "69.99")
	})
	t.Run("DenialIsStoredLikeApproval", func(t *testing.T) {
		t.Parallel()
		b, _ := authorizeFixture(t)
		check(t, b.send(t, claims.Authorize, authorizeClaims("po-12", "k-12", "alice", "src-open", "70.00", 0)), want{200, "approved", ""}, "holdReference")
		denied := b.send(t, claims.Authorize, authorizeClaims("po-13", "k-13", "alice", "src-open", "5", 0))
		check(t, denied, want{200, "denied", "insufficient_funds"}, "holdReference")
		if _, err := b.db.Adjust(context.Background(), "a-open", storetest.USD("50").Value, "topup-13", ""); err != nil {
			t.Fatal(err)
		}
		again := b.send(t, claims.Authorize, authorizeClaims("po-13", "k-13", "alice", "src-open", "5", 0))
		if !reflect.DeepEqual(again.Service, denied.Service) {
			t.Fatalf("replay of a denial after funds arrived: %v", again.Service)
		}
		storetest.AssertBalances(t, b.db, "a-open", "150", "100", "50")
		storetest.AssertInvariants(t, b.db)
	})
}

// authorizeRows are the rows of the authorize table that send one request
// and leave the held amount of a-open as given.
func authorizeRows(t *testing.T) {
	for _, c := range []struct {
		name   string
		claims any
		want   want
		held   string // a-open's held after the row
	}{
		{"Row2FraudScoreAboveOne", authorizeClaims("po-2", "k-2", "alice", "src-open", "1", 1.01), want{status: 400}, "30"},
		{"Row2FraudScoreNegative", authorizeClaims("po-2", "k-2", "alice", "src-open", "1", -0.01), want{status: 400}, "30"},
		{"Row4OtherAmount", authorizeClaims("po-1", "k-4", "alice", "src-open", "31", 0.1), want{200, "denied", "payout_already_authorized"}, "30"},
		{"Row5UnknownSource", authorizeClaims("po-5", "k-5", "alice", "src-none", "1", 0.99), want{200, "denied", "unknown_funding_source"}, "30"},
		{"Row6OtherOwner", authorizeClaims("po-6", "k-6", "mallory", "src-open", "1", 0.99), want{200, "denied", "funding_source_mismatch"}, "30"},
		{"Row7Frozen", authorizeClaims("po-7", "k-7", "alice", "src-frozen", "1", 0.99), want{200, "denied", "account_unavailable"}, "30"},
		{"Row8Currency", authorizeClaims("po-8", "k-8", "alice", "src-eur", "1", 0.99), want{200, "denied", "currency_mismatch"}, "30"},
		{"Row9FraudAtDenyThreshold", authorizeClaims("po-9", "k-9", "alice", "src-open", "1", 0.90), want{200, "denied", "fraud_suspected"}, "30"},
		{"Row10StepUpAtThreshold", authorizeClaims("po-10", "k-10", "alice", "src-open", "1", 0.75), want{200, "denied", "step_up_required"}, "30"},
		{"Row11Insufficient", authorizeClaims("po-11", "k-11", "alice", "src-open", "70.01", 0.74), want{200, "denied", "insufficient_funds"}, "30"},
		{"Row12Approved", authorizeClaims("po-12", "k-12", "alice", "src-open", "70.00", 0), want{200, "approved", ""}, "100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, _ := authorizeFixture(t)
			check(t, b.send(t, claims.Authorize, c.claims), c.want, "holdReference")
			held := decimal.RequireFromString(c.held)
			storetest.AssertBalances(t, b.db, "a-open", "100", c.held, decimal.NewFromInt(100).Sub(held).String())
		})
	}
}

// settleFixture is the state of the capture and release tables: bob's
// account c-1 (100.00), holds h1 (10), h2 (20) and h3 (30) of payouts p-1
// to p-3, and h1 captured (key auth-p-1: the same key string on
// authorize, capture and release of one payout is three keys).
func settleFixture(t *testing.T) (b *bundle, h1, h2, h3 string, cap1 *caller.Reply) {
	t.Helper()
	b = setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "c-1", Owner: "bob", Funds: "100", Source: "src-c1"})
	hold := func(payout string, amount string) string {
		r := b.send(t, claims.Authorize, authorizeClaims(payout, "auth-"+payout, "bob", "src-c1", amount, 0))
		check(t, r, want{200, "approved", ""}, "holdReference")
		return r.Str("holdReference")
	}
	h1, h2, h3 = hold("p-1", "10"), hold("p-2", "20"), hold("p-3", "30")
	cap1 = b.send(t, claims.Capture, captureClaims("p-1", "auth-p-1", h1))
	check(t, cap1, want{200, "approved", ""}, "captureReference")
	storetest.AssertBalances(t, b.db, "c-1", "90", "50", "40")
	return b, h1, h2, h3, cap1
}

// TestCaptureAndReleaseTables covers every row of contract §2.4 and 2.5.
func TestCaptureAndReleaseTables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		endpoint string
		claims   func(h1, h2, h3 string) any
		want     want
		sameRef  bool   // the answer repeats cap1's captureReference
		held     string // c-1's held after the row
	}{
		{"Capture1Replay", claims.Capture, func(h1, _, _ string) any { return captureClaims("p-1", "auth-p-1", h1) }, want{200, "approved", ""}, true, "50"},
		{"Capture1aMismatch", claims.Capture, func(_, h2, _ string) any { return captureClaims("p-1", "auth-p-1", h2) }, want{status: 422}, false, "50"},
		{"Capture2NeverIssued", claims.Capture, func(_, _, _ string) any { return captureClaims("p-9", "c-9", "hold_unknown") }, want{200, "approved", ""}, false, "50"},
		{"Capture3OtherPayout", claims.Capture, func(_, h2, _ string) any { return captureClaims("p-1", "c-3", h2) }, want{200, "failed", "payout_mismatch"}, false, "50"},
		{"Capture4AlreadyCapturedOtherKey", claims.Capture, func(h1, _, _ string) any { return captureClaims("p-1", "c-4", h1) }, want{200, "approved", ""}, true, "50"},
		{"Release2NeverIssued", claims.Release, func(_, _, _ string) any { return releaseClaims("", "r-2", "hold_unknown") }, want{200, "approved", ""}, false, "50"},
		{"Release3OtherPayout", claims.Release, func(_, h2, _ string) any { return releaseClaims("p-1", "r-3", h2) }, want{200, "failed", "payout_mismatch"}, false, "50"},
		{"Release5Captured", claims.Release, func(h1, _, _ string) any { return releaseClaims("p-1", "r-5", h1) }, want{200, "failed", "hold_captured"}, false, "50"},
		{"Release6Held", claims.Release, func(_, h2, _ string) any { return releaseClaims("p-2", "auth-p-2", h2) }, want{200, "approved", ""}, false, "30"},
		{"Release6WithoutPayoutID", claims.Release, func(_, _, h3 string) any { return releaseClaims("", "r-6", h3) }, want{200, "approved", ""}, false, "20"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, h1, h2, h3, cap1 := settleFixture(t)
			refClaim := "captureReference"
			if c.endpoint == claims.Release {
				refClaim = "releaseReference"
			}
			r := b.send(t, c.endpoint, c.claims(h1, h2, h3))
			check(t, r, c.want, refClaim)
			if c.sameRef && r.Str(refClaim) != cap1.Str("captureReference") {
				t.Fatalf("%s = %s, want the original %s", refClaim, r.Str(refClaim), cap1.Str("captureReference"))
			}
			held := decimal.RequireFromString(c.held)
			storetest.AssertBalances(t, b.db, "c-1", "90", c.held, decimal.NewFromInt(90).Sub(held).String())
		})
	}
	t.Run("Release4AlreadyReleased", func(t *testing.T) {
		t.Parallel()
		b, _, h2, _, _ := settleFixture(t)
		first := b.send(t, claims.Release, releaseClaims("p-2", "auth-p-2", h2))
		other := b.send(t, claims.Release, releaseClaims("p-2", "r-4", h2))
		if first.Outcome() != "approved" || other.Outcome() != "approved" || other.Str("releaseReference") != first.Str("releaseReference") {
			t.Fatalf("release of a released hold: %v, first %v", other.Service, first.Service)
		}
		storetest.AssertBalances(t, b.db, "c-1", "90", "30", "60")
	})
	t.Run("Capture5Released", func(t *testing.T) {
		t.Parallel()
		b, _, h2, _, _ := settleFixture(t)
		check(t, b.send(t, claims.Release, releaseClaims("p-2", "auth-p-2", h2)), want{200, "approved", ""}, "releaseReference")
		check(t, b.send(t, claims.Capture, captureClaims("p-2", "c-5", h2)), want{200, "failed", "hold_released"}, "captureReference")
		storetest.AssertBalances(t, b.db, "c-1", "90", "30", "60")
	})
	t.Run("OrphanReferenceIsStable", func(t *testing.T) {
		t.Parallel()
		b, _, _, _, _ := settleFixture(t)
		a := b.send(t, claims.Capture, captureClaims("p-9", "c-9", "hold_unknown"))
		o := b.send(t, claims.Capture, captureClaims("p-9", "c-10", "hold_unknown"))
		if a.Outcome() != "approved" || a.Str("captureReference") != o.Str("captureReference") {
			t.Fatalf("orphan captures: %v then %v", a.Service, o.Service)
		}
		var n int
		if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM orphans`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("orphans recorded: %d, %v; want the one capture", n, err)
		}
		storetest.AssertBalances(t, b.db, "c-1", "90", "50", "40")
		storetest.AssertInvariants(t, b.db)
	})
}

// creditFixture is the state of the credit table: carol's accounts (open,
// closed, frozen, in EUR) with destinations, and request req-1 credited
// 12.34 with key ck-1; credits are limited to 500.
func creditFixture(t *testing.T) (*bundle, *caller.Reply) {
	t.Helper()
	b := setup(t, opts{creditMax: "500"})
	b.account(t, storetest.AccountOpts{AccountID: "d-open", Owner: "carol", Dest: "dst-open"})
	b.account(t, storetest.AccountOpts{AccountID: "d-closed", Owner: "carol", Dest: "dst-closed", Status: ledger.StatusClosed})
	b.account(t, storetest.AccountOpts{AccountID: "d-frozen", Owner: "carol", Dest: "dst-frozen", Status: ledger.StatusFrozen})
	b.account(t, storetest.AccountOpts{AccountID: "d-eur", Owner: "carol", Currency: "EUR", Dest: "dst-eur"})
	first := b.send(t, claims.CreditAccount, creditClaims("req-1", "ck-1", "carol", "dst-open", "12.34"))
	check(t, first, want{200, "approved", ""}, "creditReference")
	return b, first
}

// TestCreditTable covers every row of contract §2.6.
func TestCreditTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		claims  any
		want    want
		balance string // d-open's after the row
	}{
		{"Row3UnknownDestination", creditClaims("req-3", "ck-3", "carol", "dst-none", "1"), want{200, "destination_unavailable", "unknown_destination"}, "12.34"},
		{"Row4Closed", creditClaims("req-4", "ck-4", "carol", "dst-closed", "1"), want{200, "destination_unavailable", "account_closed"}, "12.34"},
		{"Row5OtherOwner", creditClaims("req-5", "ck-5", "dave", "dst-open", "1"), want{200, "refused", "destination_mismatch"}, "12.34"},
		{"Row6Frozen", creditClaims("req-6", "ck-6", "carol", "dst-frozen", "1"), want{200, "refused", "account_frozen"}, "12.34"},
		{"Row7Currency", creditClaims("req-7", "ck-7", "carol", "dst-eur", "1"), want{200, "refused", "currency_mismatch"}, "12.34"},
		{"Row8OverLimit", creditClaims("req-8", "ck-8", "carol", "dst-open", "500.01"), want{200, "refused", "amount_over_limit"}, "12.34"},
		{"Row9AtLimit", creditClaims("req-9", "ck-9", "carol", "dst-open", "500.00"), want{200, "approved", ""}, "512.34"},
		{"Row1aMismatch", creditClaims("req-1", "ck-1", "carol", "dst-open", "12.35"), want{status: 422}, "12.34"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, _ := creditFixture(t)
			check(t, b.send(t, claims.CreditAccount, c.claims), c.want, "creditReference")
			storetest.AssertBalances(t, b.db, "d-open", c.balance, "0", c.balance)
		})
	}
	t.Run("Row1Replay", func(t *testing.T) {
		t.Parallel()
		b, first := creditFixture(t)
		// The same amount with a trailing zero on the wire is the same request.
		c := asMap(t, creditClaims("req-1", "ck-1", "carol", "dst-open", "12.34"))
		c["amount"] = usd("12.340")
		again := b.send(t, claims.CreditAccount, c)
		if !reflect.DeepEqual(again.Service, first.Service) {
			t.Fatalf("replay %v, want %v", again.Service, first.Service)
		}
		storetest.AssertBalances(t, b.db, "d-open", "12.34", "0", "12.34")
	})
	t.Run("Row2aRequestCreditedForAnotherAmount", func(t *testing.T) {
		t.Parallel()
		b, _ := creditFixture(t)
		for _, c := range []any{
			creditClaims("req-1", "ck-2", "carol", "dst-open", "20.00"),
			creditClaims("req-1", "ck-2", "carol", "dst-open", "20.00"), // its retry: the same answer
			creditClaims("req-1", "ck-3", "carol", "dst-open", "12.33"),
		} {
			r := b.send(t, claims.CreditAccount, c)
			check(t, r, want{status: 422}, "creditReference")
			if typ, _ := r.Problem["type"].(string); !strings.HasSuffix(typ, ":credit-amount-mismatch") {
				t.Fatalf("problem %+v, want credit-amount-mismatch", r.Problem)
			}
		}
		storetest.AssertBalances(t, b.db, "d-open", "12.34", "0", "12.34") // credited once, for the first amount
		storetest.AssertInvariants(t, b.db)
		var attempts, keys int
		if err := b.pool.QueryRow(context.Background(),
			`SELECT coalesce(sum(attempts), 0), count(*) FROM credit_conflicts WHERE request_id = 'req-1'`).Scan(&attempts, &keys); err != nil ||
			attempts != 3 || keys != 2 {
			t.Fatalf("credit_conflicts: %d attempts under %d keys (%v), want 3 under 2", attempts, keys, err)
		}
	})
	t.Run("Row2RequestAlreadyCreditedOtherKey", func(t *testing.T) {
		t.Parallel()
		b, first := creditFixture(t)
		r := b.send(t, claims.CreditAccount, creditClaims("req-1", "ck-2", "carol", "dst-open", "12.34"))
		if r.Outcome() != "approved" || r.Str("creditReference") != first.Str("creditReference") {
			t.Fatalf("row 2: %v", r.Service)
		}
		storetest.AssertBalances(t, b.db, "d-open", "12.34", "0", "12.34")
		storetest.AssertInvariants(t, b.db)
	})
}

// TestDecisionTablesRunAlone: every row of the HTTP decision tables passes
// when run on its own.
func TestDecisionTablesRunAlone(t *testing.T) {
	tooltest.SkipShort(t, "runs every row of the decision tables again, each alone in a test process of its own")
	t.Parallel()
	storetest.EachSubtestAlone(t, "TestAuthorizeTable", "TestCaptureAndReleaseTables", "TestCreditTable")
}

// TestInnerForms: the answer mirrors the request's inner form.
func TestInnerForms(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "f-1", Owner: "erin", Funds: "10", Source: "src-f1"})
	for i, form := range []envelope.Form{envelope.FormClaims, envelope.FormJWS, envelope.FormUnsecured} {
		c := &caller.Client{BaseURL: b.client.BaseURL, Key: b.key, Form: form}
		r, err := c.Send(context.Background(), claims.Authorize, authorizeClaims("pf-"+form.String(), "kf", "erin", "src-f1", "1", 0))
		if err != nil || r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("form %d (%v): %v %+v", i, form, err, r)
		}
	}
}

// TestFraudThresholdsOfZero: a threshold of 0 is a threshold (every score
// is at or above it), not "unset".
func TestFraudThresholdsOfZero(t *testing.T) {
	t.Parallel()
	db := setup(t, opts{}).db
	zero, half := 0.0, 0.5
	kr := envelope.NewKeySet()
	key := newKey(t, "z")
	if err := kr.Set([]envelope.Key{key}); err != nil {
		t.Fatal(err)
	}
	srv, err := callbacks.New(callbacks.Config{DB: db, Keyring: kr, ProviderID: provider, FraudDeny: &half, FraudStepUp: &zero})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "fz", Owner: "alice", Funds: "10", Source: "src-fz"})
	c := &caller.Client{BaseURL: hs.URL + "/ledger", Key: key}
	for score, want := range map[float64]string{0: "step_up_required", 0.1: "step_up_required", 0.5: "fraud_suspected"} {
		r, err := c.Send(context.Background(), claims.Authorize, authorizeClaims(fmt.Sprintf("fz-%v", score), "k", "alice", "src-fz", "1", score))
		if err != nil || r.Outcome() != "denied" || r.Str("reason") != want {
			t.Errorf("fraudScore %v: %+v %v, want denied %s", score, r, err, want)
		}
	}
}
