package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/internal/ledgertest"
	"github.com/provider-ledger/adapter/internal/pgtest"
	"github.com/provider-ledger/adapter/ledger"
)

type bundle struct {
	pool  *pgxpool.Pool
	store *ledger.Store
}

func setup(t *testing.T) (context.Context, bundle) {
	t.Helper()
	pool := pgtest.Pool(t)
	return context.Background(), bundle{pool: pool, store: ledger.NewStore(pool, nil)}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestAccounts(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)

	t.Run("CreateGetAndSystemAccounts", func(t *testing.T) {
		t.Parallel()
		a, err := b.store.CreateAccount(ctx, ledger.NewAccount{AccountID: "acc-create", OwnerExternalID: "alice", Currency: "EUR"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != ledger.StatusOpen || !a.Balance.IsZero() || !a.Held.IsZero() || a.Currency != "EUR" {
			t.Fatalf("new account = %+v", a)
		}
		var n int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE account_id IN ('settlement:EUR', 'core:EUR')`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("system accounts for EUR: %d, %v", n, err)
		}
		got, err := b.store.GetAccount(ctx, "acc-create")
		if err != nil || got.OwnerExternalID != "alice" {
			t.Fatalf("get = %+v, %v", got, err)
		}
	})

	t.Run("DuplicateIsExistsAndChangesNothing", func(t *testing.T) {
		t.Parallel()
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "acc-dup", Owner: "bob", Funds: "5.00"})
		_, err := b.store.CreateAccount(ctx, ledger.NewAccount{AccountID: "acc-dup", OwnerExternalID: "mallory", Currency: "USD"})
		if !errors.Is(err, ledger.ErrAccountExists) {
			t.Fatalf("err = %v, want ErrAccountExists", err)
		}
		a, _ := b.store.GetAccount(ctx, "acc-dup")
		if a.OwnerExternalID != "bob" || !a.Balance.Equal(dec("5")) {
			t.Fatalf("account changed: %+v", a)
		}
	})

	t.Run("BadInputIsInvalidWithPointer", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			in      ledger.NewAccount
			pointer string
		}{
			{ledger.NewAccount{OwnerExternalID: "o", Currency: "USD"}, "/accountID"},
			{ledger.NewAccount{AccountID: "settlement:USD", OwnerExternalID: "o", Currency: "USD"}, "/accountID"},
			{ledger.NewAccount{AccountID: "team/a", OwnerExternalID: "o", Currency: "USD"}, "/accountID"},
			{ledger.NewAccount{AccountID: "a b", OwnerExternalID: "o", Currency: "USD"}, "/accountID"},
			{ledger.NewAccount{AccountID: "x1", Currency: "USD"}, "/ownerExternalID"},
			{ledger.NewAccount{AccountID: "x2", OwnerExternalID: "o", Currency: "usd"}, "/currency"},
			{ledger.NewAccount{AccountID: "x3", OwnerExternalID: "o", Currency: "ABC"}, "/currency"},
			{ledger.NewAccount{AccountID: "x4", OwnerExternalID: "o", Currency: "USD", Status: "gone"}, "/status"},
		} {
			_, err := b.store.CreateAccount(ctx, c.in)
			var le *ledger.Error
			if !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != c.pointer {
				t.Errorf("CreateAccount(%+v) = %v, want invalid at %s", c.in, err, c.pointer)
			}
		}
		if _, err := b.store.GetAccount(ctx, "x1"); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("a refused account exists: %v", err)
		}
	})

	t.Run("FreezeUnfreezeCloseIsFinal", func(t *testing.T) {
		t.Parallel()
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "acc-status"})
		for _, step := range []struct {
			status string
			err    error
		}{
			{ledger.StatusFrozen, nil}, {ledger.StatusOpen, nil}, {ledger.StatusClosed, nil},
			{ledger.StatusOpen, ledger.ErrAccountClosed}, {ledger.StatusFrozen, ledger.ErrAccountClosed}, {ledger.StatusClosed, nil},
		} {
			a, err := b.store.SetStatus(ctx, "acc-status", step.status)
			if !errors.Is(err, step.err) || (err == nil && a.Status != step.status) {
				t.Fatalf("SetStatus(%s) = %+v, %v; want err %v", step.status, a, err, step.err)
			}
		}
		if _, err := b.store.SetStatus(ctx, "nope", ledger.StatusFrozen); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
	})
}

func TestAdjust(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)

	t.Run("CreditDebitAndJournal", func(t *testing.T) {
		t.Parallel()
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "adj-1"})
		adj, err := b.store.Adjust(ctx, "adj-1", dec("100.10"), "adj-1-a", "deposit")
		if err != nil || adj.Replayed || !adj.Balance.Equal(dec("100.10")) || !adj.Available.Equal(dec("100.10")) {
			t.Fatalf("credit = %+v, %v", adj, err)
		}
		adj, err = b.store.Adjust(ctx, "adj-1", dec("-0.10"), "adj-1-b", "fee")
		if err != nil || !adj.Balance.Equal(dec("100")) {
			t.Fatalf("debit = %+v, %v", adj, err)
		}
		var sum decimal.Decimal
		if err := b.pool.QueryRow(ctx, `SELECT sum(amount) FROM journal_entries WHERE transaction_id = $1`, adj.TransactionID).Scan(&sum); err != nil || !sum.IsZero() {
			t.Fatalf("journal transaction sums to %s, %v", sum, err)
		}
		ledgertest.AssertInvariants(t, b.pool)
	})

	t.Run("SameKeyReplays", func(t *testing.T) {
		t.Parallel()
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "adj-2"})
		first, err := b.store.Adjust(ctx, "adj-2", dec("7"), "adj-2-k", "m")
		if err != nil {
			t.Fatal(err)
		}
		again, err := b.store.Adjust(ctx, "adj-2", dec("7.00"), "adj-2-k", "m")
		if err != nil || !again.Replayed || again.TransactionID != first.TransactionID || !again.Balance.Equal(dec("7")) {
			t.Fatalf("replay = %+v, %v", again, err)
		}
		_, err = b.store.Adjust(ctx, "adj-2", dec("8"), "adj-2-k", "m")
		if !errors.Is(err, ledger.ErrIdempotencyMismatch) {
			t.Fatalf("other amount under the key: %v", err)
		}
		ledgertest.AssertBalances(t, b.store, "adj-2", "7", "0", "7")
		// Keys are scoped to the account: another account may use the same key.
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "adj-2b"})
		if other, err := b.store.Adjust(ctx, "adj-2b", dec("3"), "adj-2-k", "m"); err != nil || other.Replayed || !other.Balance.Equal(dec("3")) {
			t.Fatalf("same key on another account = %+v, %v", other, err)
		}
	})

	t.Run("OverdrawIsRefusedAndChangesNothing", func(t *testing.T) {
		t.Parallel()
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "adj-3", Funds: "10"})
		_, err := b.store.Adjust(ctx, "adj-3", dec("-10.01"), "adj-3-k", "")
		if !errors.Is(err, ledger.ErrInsufficientAvailable) {
			t.Fatalf("err = %v", err)
		}
		ledgertest.AssertBalances(t, b.store, "adj-3", "10", "0", "10")
		// The refused key was not consumed: it can be used for a valid adjustment.
		if _, err := b.store.Adjust(ctx, "adj-3", dec("-10"), "adj-3-k", ""); err != nil {
			t.Fatalf("key after refusal: %v", err)
		}
		ledgertest.AssertBalances(t, b.store, "adj-3", "0", "0", "0")
	})

	t.Run("UnknownClosedAndBadInput", func(t *testing.T) {
		t.Parallel()
		if _, err := b.store.Adjust(ctx, "adj-none", dec("1"), "adj-none-k", ""); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
		if _, err := b.store.Adjust(ctx, "settlement:USD", dec("1"), "adj-sys-k", ""); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("system account: %v", err)
		}
		ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "adj-closed", Status: ledger.StatusClosed})
		if _, err := b.store.Adjust(ctx, "adj-closed", dec("1"), "adj-closed-k", ""); !errors.Is(err, ledger.ErrAccountClosed) {
			t.Fatalf("closed account: %v", err)
		}
		var le *ledger.Error
		if _, err := b.store.Adjust(ctx, "adj-closed", dec("0"), "k0", ""); !errors.As(err, &le) || le.Pointer != "/amount" {
			t.Fatalf("zero amount: %v", err)
		}
		if _, err := b.store.Adjust(ctx, "adj-closed", dec("1"), "", ""); !errors.As(err, &le) || le.Pointer != "/idempotencyKey" {
			t.Fatalf("empty key: %v", err)
		}
	})
}

func TestInstruments(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "ins-a"})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "ins-b"})

	in := ledger.Instrument{Token: "tok-1", Kind: ledger.InstrumentSource, AccountID: "ins-a"}
	if _, created, err := b.store.AddInstrument(ctx, in); err != nil || !created {
		t.Fatalf("add = %v, %v", created, err)
	}
	if got, created, err := b.store.AddInstrument(ctx, in); err != nil || created || got.AccountID != "ins-a" {
		t.Fatalf("same mapping again = %+v, %v, %v", got, created, err)
	}
	for _, other := range []ledger.Instrument{
		{Token: "tok-1", Kind: ledger.InstrumentSource, AccountID: "ins-b"},
		{Token: "tok-1", Kind: ledger.InstrumentDestination, AccountID: "ins-a"},
	} {
		if _, _, err := b.store.AddInstrument(ctx, other); !errors.Is(err, ledger.ErrInstrumentConflict) {
			t.Fatalf("remap %+v: %v", other, err)
		}
	}
	if _, _, err := b.store.AddInstrument(ctx, ledger.Instrument{Token: "tok-2", Kind: ledger.InstrumentSource, AccountID: "nope"}); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
	var le *ledger.Error
	if _, _, err := b.store.AddInstrument(ctx, ledger.Instrument{Token: "tok-3", Kind: "card", AccountID: "ins-a"}); !errors.As(err, &le) || le.Pointer != "/kind" {
		t.Fatalf("bad kind: %v", err)
	}
}

func TestCredit(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "cr-open", Owner: "carol", Dest: "dst-open"})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "cr-frozen", Owner: "carol", Dest: "dst-frozen", Status: ledger.StatusFrozen})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "cr-closed", Owner: "carol", Dest: "dst-closed", Status: ledger.StatusClosed})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "cr-eur", Owner: "carol", Currency: "EUR", Dest: "dst-eur"})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "cr-src", Owner: "carol", Source: "src-only"})
	limit := dec("100")

	run := func(requestID, dest, requester, amount string) ledger.Decision {
		t.Helper()
		d, err := ledger.Credit(ctx, b.pool, ledger.CreditRequest{RequestID: requestID, Destination: dest,
			RequesterExternalID: requester, Amount: ledgertest.USD(amount), Max: &limit, Now: now})
		if err != nil {
			t.Fatalf("credit %s: %v", requestID, err)
		}
		return d
	}
	for _, c := range []struct {
		name, request, dest, requester, amount string
		outcome, reason                        string
	}{
		{"UnknownDestination", "r1", "dst-nope", "carol", "1", "destination_unavailable", "unknown_destination"},
		{"SourceTokenIsNoDestination", "r1", "src-only", "carol", "1", "destination_unavailable", "unknown_destination"},
		{"Closed", "r1", "dst-closed", "carol", "1", "destination_unavailable", "account_closed"},
		{"OtherOwner", "r1", "dst-open", "dave", "1", "refused", "destination_mismatch"},
		{"Frozen", "r1", "dst-frozen", "carol", "1", "refused", "account_frozen"},
		{"Currency", "r1", "dst-eur", "carol", "1", "refused", "currency_mismatch"},
		{"OverLimit", "r1", "dst-open", "carol", "100.01", "refused", "amount_over_limit"},
	} {
		d := run(c.request, c.dest, c.requester, c.amount)
		if d.Outcome != c.outcome || d.Reason != c.reason || d.Reference != "" {
			t.Errorf("%s: %+v, want %s/%s", c.name, d, c.outcome, c.reason)
		}
	}
	ledgertest.AssertBalances(t, b.store, "cr-open", "0", "0", "0")

	d := run("r1", "dst-open", "carol", "100.00")
	if !d.Approved() || len(d.Reference) < 26 {
		t.Fatalf("credit = %+v", d)
	}
	ledgertest.AssertBalances(t, b.store, "cr-open", "100", "0", "100")
	// A requestID is credited once (I5): again, even to a refused
	// destination, answers the first reference and moves nothing.
	for _, dest := range []string{"dst-open", "dst-frozen", "dst-nope"} {
		if again := run("r1", dest, "carol", "5"); !again.Approved() || again.Reference != d.Reference {
			t.Fatalf("second credit of r1 via %s = %+v, want %s", dest, again, d.Reference)
		}
	}
	ledgertest.AssertBalances(t, b.store, "cr-open", "100", "0", "100")
	var settlement decimal.Decimal
	if err := b.pool.QueryRow(ctx, `SELECT sum(balance) FROM account_shards WHERE account_id = 'settlement:USD'`).Scan(&settlement); err != nil || !settlement.Equal(dec("-100")) {
		t.Fatalf("settlement = %s, %v", settlement, err)
	}
	ledgertest.AssertInvariants(t, b.pool)
}

// TestDatabaseGuards bypasses the Go code: raw SQL must not be able to
// break the ledger's rules.
func TestDatabaseGuards(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "g-1", Funds: "10"})

	mustFail := func(t *testing.T, constraintOrCode string, sql string, args ...any) {
		t.Helper()
		_, err := b.pool.Exec(ctx, sql, args...)
		if err == nil {
			t.Fatalf("%s: accepted", sql)
		}
		if !strings.Contains(err.Error(), constraintOrCode) {
			t.Fatalf("%s: %v, want %s", sql, err, constraintOrCode)
		}
	}
	t.Run("JournalEntriesAreAppendOnly", func(t *testing.T) {
		mustFail(t, "append-only", `UPDATE journal_entries SET amount = amount * 2`)
		mustFail(t, "append-only", `DELETE FROM journal_entries`)
		mustFail(t, "append-only", `TRUNCATE journal_entries CASCADE`)
		mustFail(t, "append-only", `DELETE FROM journal_transactions`)
		mustFail(t, "append-only", `UPDATE journal_transactions SET memo = 'x'`)
	})
	t.Run("UnbalancedTransactionIsRejectedAtCommit", func(t *testing.T) {
		mustFail(t, "does not sum to zero", `WITH t AS (
  INSERT INTO journal_transactions (transaction_id, kind, reference, created_at) VALUES (gen_random_uuid(), 'adjustment', 'x', now()) RETURNING transaction_id)
INSERT INTO journal_entries (transaction_id, account_id, currency, amount, created_at) SELECT transaction_id, 'g-1', 'USD', 1, now() FROM t`)
		mustFail(t, "journal_entries_account_fkey", `WITH t AS (
  INSERT INTO journal_transactions (transaction_id, kind, reference, created_at) VALUES (gen_random_uuid(), 'adjustment', 'y', now()) RETURNING transaction_id)
INSERT INTO journal_entries (transaction_id, account_id, currency, amount, created_at)
SELECT transaction_id, 'g-1', 'EUR', 1, now() FROM t UNION ALL SELECT transaction_id, 'core:USD', 'USD', -1, now() FROM t`)
	})
	t.Run("AccountsCannotOvercommit", func(t *testing.T) {
		mustFail(t, "accounts_available_nonnegative", `UPDATE accounts SET held = 10.01 WHERE account_id = 'g-1'`)
		mustFail(t, "accounts_held_nonnegative", `UPDATE accounts SET held = -1 WHERE account_id = 'g-1'`)
		mustFail(t, "accounts_status_check", `UPDATE accounts SET status = 'gone' WHERE account_id = 'g-1'`)
		mustFail(t, "accounts_system_balance_check", `UPDATE accounts SET balance = 5 WHERE account_id = 'settlement:USD'`)
	})
	t.Run("HoldTransitionsAreGuarded", func(t *testing.T) {
		_, err := b.pool.Exec(ctx, `INSERT INTO instruments VALUES ('g-src', 'source', 'g-1', now());
SELECT hold_place('g-p1', (SELECT owner_external_id FROM accounts WHERE account_id = 'g-1'), 'g-src', 'USD', 1, NULL, 'g-h1', now());
SELECT hold_capture('g-h1', 'g-p1', 'g-c1', gen_random_uuid(), now())`)
		if err != nil {
			t.Fatal(err)
		}
		mustFail(t, "illegal hold transition", `UPDATE holds SET status = 'held', capture_reference = NULL, transaction_id = NULL, captured_at = NULL WHERE hold_reference = 'g-h1'`)
		mustFail(t, "illegal hold transition", `UPDATE holds SET status = 'released', release_reference = 'r', released_at = now(), capture_reference = NULL, transaction_id = NULL, captured_at = NULL WHERE hold_reference = 'g-h1'`)
		mustFail(t, "never deleted", `DELETE FROM holds`)
		mustFail(t, "never truncated", `TRUNCATE holds CASCADE`)
		mustFail(t, "holds_payout_id_key", `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at) VALUES ('g-h2', 'g-p1', 'g-1', 'g-src', 'USD', 1, now())`)
		mustFail(t, "holds_amount_positive", `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at) VALUES ('g-h3', 'g-p3', 'g-1', 'g-src', 'USD', 0, now())`)
		mustFail(t, "holds_state_check", `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, status, placed_at) VALUES ('g-h4', 'g-p4', 'g-1', 'g-src', 'USD', 1, 'captured', now())`)
	})
	t.Run("EffectsAreNeverTruncated", func(t *testing.T) {
		mustFail(t, "never truncated", `TRUNCATE credits`)
		mustFail(t, "never truncated", `TRUNCATE adjustments`)
	})
	t.Run("CreditsOncePerRequest", func(t *testing.T) {
		mustFail(t, "credits_pkey", `INSERT INTO credits SELECT request_id, 'other-ref', account_id, destination, currency, amount, transaction_id, created_at FROM credits LIMIT 1;
INSERT INTO credits VALUES ('dup', 'a', 'g-1', 'd', 'USD', 1, gen_random_uuid(), now()), ('dup', 'b', 'g-1', 'd', 'USD', 1, gen_random_uuid(), now())`)
	})
}

// TestInvariantChecksDetect corrupts a ledger behind the functions' backs
// (raw updates of the stored balance and held, which no function does) and expects
// each check to report it: the checks can fail.
func TestInvariantChecksDetect(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "d-1", Funds: "10"})
	ledgertest.AssertInvariants(t, b.pool)
	if _, err := b.pool.Exec(ctx, `UPDATE accounts SET balance = balance + 1, held = held + 0.5 WHERE account_id = 'd-1'`); err != nil {
		t.Fatal(err)
	}
	vs, err := b.store.CheckInvariants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, v := range vs {
		kinds[v.Kind] = true
	}
	for _, k := range []string{"balance_drift", "held_drift", "currency_imbalance"} {
		if !kinds[k] {
			t.Errorf("corruption not reported as %s; got %v", k, vs)
		}
	}
}

// TestConcurrentAccountCreation: accounts of a new currency created at once
// (which also creates its system accounts) all succeed; the same account
// created at once exists once, the others told it exists.
func TestConcurrentAccountCreation(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for i := range errs {
		wg.Go(func() {
			id := fmt.Sprintf("cc-%d", i%16) // each ID twice
			_, errs[i] = b.store.CreateAccount(ctx, ledger.NewAccount{AccountID: id, OwnerExternalID: "o", Currency: "CHF"})
		})
	}
	wg.Wait()
	created, exists := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, ledger.ErrAccountExists):
			exists++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if created != 16 || exists != 16 {
		t.Fatalf("created %d, exists %d; want 16 and 16", created, exists)
	}
}

// TestSameRequestOtherKeyWhileFirstUncommitted: a second credit of a payment
// request arriving while the first is still uncommitted waits for it and
// answers its creditReference (row 2), even towards a destination that
// would refuse: refused would start a reversal of money that was credited.
func TestSameRequestOtherKeyWhileFirstUncommitted(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "rr-a", Owner: "carol", Dest: "dst-rr-a"})
	ledgertest.Account(t, b.store, ledgertest.AccountOpts{AccountID: "rr-b", Owner: "carol", Dest: "dst-rr-b", Status: ledger.StatusFrozen})
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := ledger.Credit(ctx, tx, ledger.CreditRequest{RequestID: "rr-1", Destination: "dst-rr-a", RequesterExternalID: "carol",
		Amount: ledgertest.USD("5"), Now: time.Now()})
	if err != nil || !first.Approved() {
		t.Fatal(first, err)
	}
	second := make(chan ledger.Decision, 1)
	go func() {
		d, err := ledger.Credit(ctx, b.pool, ledger.CreditRequest{RequestID: "rr-1", Destination: "dst-rr-b", RequesterExternalID: "carol",
			Amount: ledgertest.USD("5"), Now: time.Now()})
		if err != nil {
			t.Error(err)
		}
		second <- d
	}()
	time.Sleep(300 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if d := <-second; !d.Approved() || d.Reference != first.Reference {
		t.Fatalf("second credit of the request = %+v, want approved %s", d, first.Reference)
	}
	ledgertest.AssertBalances(t, b.store, "rr-a", "5", "0", "5")
	ledgertest.AssertBalances(t, b.store, "rr-b", "0", "0", "0")
}
