package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestLedgerThroughTheFunctions builds a ledger through the server-side
// functions alone (schema/functions/), as raw SQL calls, and checks that
// balances, holds, the journal and every stored answer are what the
// decision tables say: the invariants hold, and a replay of a key answers
// what it answered the first time.
func TestLedgerThroughTheFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// An account funded with 100, a credit of 7, three payouts: one
	// captured, one released, one left held.
	exec(`SELECT ledger_ensure_system_accounts('USD', now())`)
	exec(`INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES ('m-1', 'mia', 'USD', now(), now())`)
	exec(`INSERT INTO instruments VALUES ('m-src', 'source', 'm-1', now()), ('m-dst', 'destination', 'm-1', now())`)
	exec(`SELECT ledger_adjust('m-1', 100, 'fund', 'opening', gen_random_uuid(), now())`)
	answers := map[string]string{} // key -> reference answered
	for i, p := range []string{"mp-1", "mp-2", "mp-3"} {
		var ref string
		if err := conn.QueryRow(ctx, `SELECT reference FROM cb_authorize(p_key => $1::text, p_fingerprint => sha256($1::text::bytea),
p_key_fingerprint => 'kf', p_caller_subject => NULL, p_audit_request_id => NULL, p_now => now(), p_payout_id => $2,
p_external_id => 'mia', p_funding_source => 'm-src', p_currency => 'USD', p_amount => $3::numeric, p_fraud_score => 0,
p_fraud_deny => 0.9, p_fraud_stepup => 0.75, p_hold_reference => 'hold_' || $2::text)`, "a-"+p, p, 10+i).Scan(&ref); err != nil || ref != "hold_"+p {
			t.Fatalf("authorize %s: %q %v", p, ref, err)
		}
		answers["a-"+p] = ref
	}
	var capRef, relRef, credRef string
	if err := conn.QueryRow(ctx, `SELECT reference FROM cb_capture('c-mp-1', sha256('c'), 'kf', now(), 'mp-1', 'hold_mp-1', 'cap_mp-1', gen_random_uuid())`).Scan(&capRef); err != nil || capRef != "cap_mp-1" {
		t.Fatalf("capture: %q %v", capRef, err)
	}
	if err := conn.QueryRow(ctx, `SELECT reference FROM cb_release('r-mp-2', sha256('r'), 'kf', now(), 'mp-2', 'hold_mp-2', 'cancelled', 'rel_mp-2')`).Scan(&relRef); err != nil || relRef != "rel_mp-2" {
		t.Fatalf("release: %q %v", relRef, err)
	}
	if err := conn.QueryRow(ctx, `SELECT reference FROM cb_credit('k-cr', sha256('k'), 'kf', now(), 'req-1', 'm-dst', 'mia', 'USD', 7, NULL, 'cred_1', gen_random_uuid())`).Scan(&credRef); err != nil || credRef != "cred_1" {
		t.Fatalf("credit: %q %v", credRef, err)
	}

	db, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// 100 + 7 - 10 captured; held: the 12 of mp-3.
	storetest.AssertBalances(t, db, "m-1", "97", "12", "85")
	storetest.AssertInvariants(t, db)
	for ref, want := range map[string]string{"hold_mp-1": holds.StatusCaptured, "hold_mp-2": holds.StatusReleased, "hold_mp-3": holds.StatusHeld} {
		if h, err := db.GetHold(ctx, ref); err != nil || h.Status != want {
			t.Errorf("hold %s: %+v %v, want %s", ref, h, err, want)
		}
	}
	var journal int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM journal`).Scan(&journal); err != nil || journal != 3 {
		t.Fatalf("journal rows %d, %v; want 3 (adjustment, capture, credit)", journal, err)
	}
	// Replays of the keys answer what was stored.
	for key, ref := range answers {
		var state, got string
		if err := conn.QueryRow(ctx, `SELECT state, reference FROM cb_authorize(p_key => $1::text, p_fingerprint => sha256($1::text::bytea),
p_key_fingerprint => 'kf', p_caller_subject => NULL, p_audit_request_id => NULL, p_now => now(), p_payout_id => $2,
p_external_id => 'mia', p_funding_source => 'm-src', p_currency => 'USD', p_amount => 0, p_fraud_score => 0,
p_fraud_deny => 0.9, p_fraud_stepup => 0.75, p_hold_reference => 'unused')`, key, strings.TrimPrefix(key, "a-")).Scan(&state, &got); err != nil || state != "replay" || got != ref {
			t.Errorf("replay of %s: %s %s %v, want replay %s", key, state, got, err, ref)
		}
	}
	for _, c := range []struct{ table, key, ref string }{
		{"callback_capture", "c-mp-1", capRef}, {"callback_release", "r-mp-2", relRef}, {"callback_credit", "k-cr", credRef},
	} {
		var ref string
		if err := conn.QueryRow(ctx, `SELECT reference FROM `+c.table+` WHERE idempotency_key = $1`, c.key).Scan(&ref); err != nil || ref != c.ref {
			t.Errorf("%s %s: %q %v, want %q", c.table, c.key, ref, err, c.ref)
		}
	}
}

// TestNamedCallsMatchTheFunctions: every argument a call names is a
// parameter of its function, and every parameter is given.
func TestNamedCallsMatchTheFunctions(t *testing.T) {
	t.Parallel()
	_, pool := storetest.DB(t)
	for fn, sql := range store.CallSQL() {
		var names []string
		if err := pool.QueryRow(context.Background(), `SELECT array_agg(n) FROM pg_proc p, unnest(p.proargnames[1:p.pronargs]) n
WHERE p.proname = $1`, fn).Scan(&names); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		for _, n := range names {
			if !strings.Contains(sql, n+" => $") {
				t.Errorf("%s: parameter %s is not given in %s", fn, n, sql)
			}
		}
		if got := strings.Count(sql, " => $"); got != len(names) {
			t.Errorf("%s: %d arguments for %d parameters", fn, got, len(names))
		}
	}
}

// TestInvariantChecksAreLinear: no invariant check runs a subquery per row
// (a SubPlan in its plan): each is a scan or a join of whole tables, so a
// ledger ten times larger costs ten times more, not a hundred.
func TestInvariantChecksAreLinear(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "lin-1", Funds: "5"})
	for name, sql := range store.InvariantSQL() {
		rows, err := pool.Query(context.Background(), "EXPLAIN "+sql)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan.WriteString(line + "\n")
		}
		rows.Close()
		if strings.Contains(plan.String(), "SubPlan") {
			t.Errorf("%s runs a subquery per row:\n%s", name, plan.String())
		}
	}
}

// TestDeadlineCancelsAndRollsBack: a statement still blocked at its
// context's deadline is cancelled by the server and rolled back: the
// caller learns ErrTimeout, and nothing commits later.
func TestDeadlineCancelsAndRollsBack(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "dl-1", Owner: "dora", Funds: "10", Source: "src-dl"})
	ctx := context.Background()
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `SELECT 1 FROM accounts WHERE account_id = 'dl-1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = db.Authorize(dctx, holds.AuthorizeParams{Key: "k", Fingerprint: make([]byte, 32), KeyFingerprint: "t", Now: time.Now(),
		PayoutID: "dl-p", ExternalID: "dora", FundingSource: "src-dl", Currency: "USD", Amount: storetest.USD("1").Value,
		FraudDeny: 0.9, FraudStepUp: 0.75, HoldReference: ledger.NewReference("hold_")})
	if ledger.CodeOf(err) != ledger.CodeTimeout {
		t.Fatalf("blocked past the deadline: %v, want a timeout", err)
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	storetest.WaitForIdle(t, pool) // anything still running has committed or rolled back now
	var n int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM holds) + (SELECT count(*) FROM callback_authorize)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows committed after the timeout (%v)", n, err)
	}
	storetest.AssertBalances(t, db, "dl-1", "10", "0", "10")
}
