package ledger_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

type bundle struct {
	pool  *pgxpool.Pool
	store *store.DB
}

func setup(t *testing.T) (context.Context, bundle) {
	t.Helper()
	db, pool := storetest.DB(t)
	return context.Background(), bundle{pool: pool, store: db}
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
		storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "acc-dup", Owner: "bob", Funds: "5.00"})
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

}

// TestAccountStatus: an account freezes and unfreezes; closing it is
// final; an unknown account is not found.
func TestAccountStatus(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "acc-status"})
	for _, step := range []struct {
		status string
		err    error
	}{
		{ledger.StatusFrozen, nil}, {ledger.StatusOpen, nil}, {ledger.StatusClosed, nil},
		{ledger.StatusOpen, ledger.ErrAccountClosed}, {ledger.StatusFrozen, ledger.ErrAccountClosed}, {ledger.StatusClosed, nil},
	} {
		a, err := b.store.SetAccountStatus(ctx, "acc-status", step.status)
		if !errors.Is(err, step.err) || (err == nil && a.Status != step.status) {
			t.Fatalf("SetStatus(%s) = %+v, %v; want err %v", step.status, a, err, step.err)
		}
	}
	if _, err := b.store.SetAccountStatus(ctx, "nope", ledger.StatusFrozen); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
}

func TestAdjust(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)

	t.Run("CreditDebitAndJournal", func(t *testing.T) {
		t.Parallel()
		storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "adj-1"})
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
		storetest.AssertInvariants(t, b.store)
	})

	t.Run("SameKeyReplays", func(t *testing.T) {
		t.Parallel()
		storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "adj-2"})
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
		storetest.AssertBalances(t, b.store, "adj-2", "7", "0", "7")
		// Keys are scoped to the account: another account may use the same key.
		storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "adj-2b"})
		if other, err := b.store.Adjust(ctx, "adj-2b", dec("3"), "adj-2-k", "m"); err != nil || other.Replayed || !other.Balance.Equal(dec("3")) {
			t.Fatalf("same key on another account = %+v, %v", other, err)
		}
	})

	t.Run("OverdrawIsRefusedAndChangesNothing", func(t *testing.T) {
		t.Parallel()
		storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "adj-3", Funds: "10"})
		_, err := b.store.Adjust(ctx, "adj-3", dec("-10.01"), "adj-3-k", "")
		if !errors.Is(err, ledger.ErrInsufficientAvailable) {
			t.Fatalf("err = %v", err)
		}
		storetest.AssertBalances(t, b.store, "adj-3", "10", "0", "10")
		// The refused key was not consumed: it can be used for a valid adjustment.
		if _, err := b.store.Adjust(ctx, "adj-3", dec("-10"), "adj-3-k", ""); err != nil {
			t.Fatalf("key after refusal: %v", err)
		}
		storetest.AssertBalances(t, b.store, "adj-3", "0", "0", "0")
	})

}

// TestAdjustRefuses: an adjustment of an unknown, system or closed
// account, of a zero amount or without a key is refused with its cause.
func TestAdjustRefuses(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	if _, err := b.store.Adjust(ctx, "adj-none", dec("1"), "adj-none-k", ""); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
	if _, err := b.store.Adjust(ctx, "settlement:USD", dec("1"), "adj-sys-k", ""); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("system account: %v", err)
	}
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "adj-closed", Status: ledger.StatusClosed})
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
}

func TestInstruments(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "ins-a"})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "ins-b"})

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

// creditBundle is a database with the destination accounts of the credit
// table: carol's open, frozen, closed and EUR accounts, and a source-only
// instrument.
func setupCredit(t *testing.T) (context.Context, bundle) {
	t.Helper()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "cr-open", Owner: "carol", Dest: "dst-open"})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "cr-frozen", Owner: "carol", Dest: "dst-frozen", Status: ledger.StatusFrozen})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "cr-closed", Owner: "carol", Dest: "dst-closed", Status: ledger.StatusClosed})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "cr-eur", Owner: "carol", Currency: "EUR", Dest: "dst-eur"})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "cr-src", Owner: "carol", Source: "src-only"})
	return ctx, b
}

// credit runs cb_credit as a callback would, with the limit 100.
func credit(t *testing.T, b bundle, key, requestID, dest, requester, amount string) ledger.Answer {
	t.Helper()
	limit := dec("100")
	fp := sha256.Sum256([]byte(requestID + dest + requester + amount))
	a, err := b.store.Credit(context.Background(), ledger.CreditParams{Key: key, Fingerprint: fp[:], KeyFingerprint: "test",
		Now: time.Now(), RequestID: requestID, Destination: dest, Requester: requester, Currency: "USD",
		Amount: dec(amount), Max: &limit, CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()})
	if err != nil {
		t.Fatalf("credit %s: %v", requestID, err)
	}
	return a
}

// TestCreditTable covers every row of contract §2.6 against cb_credit, without
// HTTP; each row is a subtest of its own on a database of its own.
func TestCreditTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, dest, requester, amount string
		outcome, reason               string
	}{
		{"Row3UnknownDestination", "dst-nope", "carol", "1", "destination_unavailable", "unknown_destination"},
		{"Row3SourceTokenIsNoDestination", "src-only", "carol", "1", "destination_unavailable", "unknown_destination"},
		{"Row4AccountClosed", "dst-closed", "carol", "1", "destination_unavailable", "account_closed"},
		{"Row5OtherOwner", "dst-open", "dave", "1", "refused", "destination_mismatch"},
		{"Row6AccountFrozen", "dst-frozen", "carol", "1", "refused", "account_frozen"},
		{"Row7CurrencyMismatch", "dst-eur", "carol", "1", "refused", "currency_mismatch"},
		{"Row8AmountOverLimit", "dst-open", "carol", "100.01", "refused", "amount_over_limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, b := setupCredit(t)
			a := credit(t, b, "k1", "r1", c.dest, c.requester, c.amount)
			if a.State != ledger.StateNew || a.Outcome != c.outcome || a.Reason != c.reason || a.Reference != "" {
				t.Fatalf("%+v, want %s/%s", a, c.outcome, c.reason)
			}
			storetest.AssertBalances(t, b.store, "cr-open", "0", "0", "0")
			storetest.AssertInvariants(t, b.store)
		})
	}
	t.Run("Row9Approved", func(t *testing.T) {
		t.Parallel()
		ctx, b := setupCredit(t)
		a := credit(t, b, "k1", "r1", "dst-open", "carol", "100.00")
		if a.State != ledger.StateNew || !a.Approved() || len(a.Reference) < 26 {
			t.Fatalf("credit = %+v", a)
		}
		storetest.AssertBalances(t, b.store, "cr-open", "100", "0", "100")
		var settlement decimal.Decimal
		if err := b.pool.QueryRow(ctx, `SELECT balance FROM account_balances WHERE account_id = 'settlement:USD'`).Scan(&settlement); err != nil || !settlement.Equal(dec("-100")) {
			t.Fatalf("settlement = %s, %v", settlement, err)
		}
		storetest.AssertInvariants(t, b.store)
	})
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		_, b := setupCredit(t)
		first := credit(t, b, "k1", "r1", "dst-frozen", "carol", "5")
		again := credit(t, b, "k1", "r1", "dst-frozen", "carol", "5")
		if again.State != ledger.StateReplay || again.Decision != first.Decision {
			t.Fatalf("replay %+v, want %+v", again, first)
		}
		if other := credit(t, b, "k1", "r1", "dst-open", "carol", "5"); other.State != ledger.StateMismatch {
			t.Fatalf("same key, other claims: %+v, want mismatch", other)
		}
	})
	t.Run("Row2RequestCreditedOnce", func(t *testing.T) {
		t.Parallel()
		_, b := setupCredit(t)
		first := credit(t, b, "k1", "r1", "dst-open", "carol", "100.00")
		// A requestID is credited once (I5): again under another key for
		// the same amount, even to a refused destination, answers the first
		// reference and moves nothing.
		for i, dest := range []string{"dst-open", "dst-frozen", "dst-nope"} {
			again := credit(t, b, fmt.Sprintf("k2-%d", i), "r1", dest, "carol", "100")
			if again.State != ledger.StateNew || !again.Approved() || again.Reference != first.Reference {
				t.Fatalf("second credit of r1 via %s = %+v, want %s", dest, again, first.Reference)
			}
		}
		storetest.AssertBalances(t, b.store, "cr-open", "100", "0", "100")
		storetest.AssertInvariants(t, b.store)
	})
}

// refusedByDatabase runs sql and requires the database to refuse it, with
// an error naming constraintOrCode.
func refusedByDatabase(t *testing.T, b bundle, constraintOrCode string, sql string, args ...any) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), sql, args...)
	if err == nil {
		t.Fatalf("%s: accepted", sql)
	}
	if !strings.Contains(err.Error(), constraintOrCode) {
		t.Fatalf("%s: %v, want %s", sql, err, constraintOrCode)
	}
}

// TestCreditRow2aAnotherAmount: credit row 2a of contract §2.6: a requestID
// credited for one amount, asked again under another key for another.
func TestCreditRow2aAnotherAmount(t *testing.T) {
	t.Parallel()
	_, b := setupCredit(t)
	credit(t, b, "k1", "r1", "dst-open", "carol", "1.00")
	// Another amount under another key: no approval, nothing moved.
	for _, key := range []string{"k2", "k2", "k3"} {
		again := credit(t, b, key, "r1", "dst-open", "carol", "2.00")
		if again.State != ledger.StateAmountMismatch || again.Approved() || again.Reference != "" {
			t.Fatalf("credit of r1 for 2.00 under %s = %+v, want amount_mismatch", key, again)
		}
	}
	storetest.AssertBalances(t, b.store, "cr-open", "1.00", "0", "1.00")
	storetest.AssertInvariants(t, b.store)
}

// TestDatabaseGuards bypasses the Go code: raw SQL must not be able to
// break the ledger's rules.
func TestDatabaseGuards(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "g-1", Funds: "10"})

	mustFail := func(t *testing.T, constraintOrCode string, sql string, args ...any) {
		t.Helper()
		refusedByDatabase(t, b, constraintOrCode, sql, args...)
	}
	t.Run("JournalIsAppendOnly", func(t *testing.T) {
		mustFail(t, "append-only", `UPDATE journal SET amount = amount * 2`)
		mustFail(t, "append-only", `DELETE FROM journal`)
		mustFail(t, "append-only", `TRUNCATE journal CASCADE`)
		mustFail(t, "append-only", `UPDATE journal SET memo = 'x'`)
	})
	t.Run("UnbalancedTransactionCannotBeWritten", func(t *testing.T) {
		// A journal row is both entries of its transaction: the contra
		// side must be the system account of the row's currency, and the
		// amount cannot be zero. There is no way to write one entry alone.
		mustFail(t, "journal_contra_check", `INSERT INTO journal (transaction_id, kind, reference, account_id, contra_account_id, currency, amount, created_at)
VALUES (gen_random_uuid(), 'adjustment', 'x', 'g-1', 'g-1', 'USD', 1, now())`)
		mustFail(t, "journal_contra_check", `INSERT INTO journal (transaction_id, kind, reference, account_id, contra_account_id, currency, amount, created_at)
VALUES (gen_random_uuid(), 'capture', 'x', 'g-1', 'settlement:EUR', 'USD', 1, now())`)
		mustFail(t, "journal_amount_nonzero", `INSERT INTO journal (transaction_id, kind, reference, account_id, contra_account_id, currency, amount, created_at)
VALUES (gen_random_uuid(), 'adjustment', 'x', 'g-1', 'core:USD', 'USD', 0, now())`)
		mustFail(t, "journal_entries", `INSERT INTO journal_entries (transaction_id, account_id, currency, amount, created_at)
VALUES (gen_random_uuid(), 'g-1', 'USD', 1, now())`)
	})
	t.Run("AccountsCannotOvercommit", func(t *testing.T) {
		mustFail(t, "accounts_available_nonnegative", `UPDATE accounts SET held = 10.01 WHERE account_id = 'g-1'`)
		mustFail(t, "accounts_held_nonnegative", `UPDATE accounts SET held = -1 WHERE account_id = 'g-1'`)
		mustFail(t, "ledger_account_status_check", `UPDATE accounts SET status = 'gone' WHERE account_id = 'g-1'`)
		mustFail(t, "accounts_system_balance_check", `UPDATE accounts SET balance = 5 WHERE account_id = 'settlement:USD'`)
	})
	t.Run("AccountsKeepTheirIdentity", func(t *testing.T) {
		mustFail(t, "identity of an account is immutable", `UPDATE accounts SET currency = 'EUR' WHERE account_id = 'g-1'`)
		mustFail(t, "identity of an account is immutable", `UPDATE accounts SET account_id = 'g-2' WHERE account_id = 'g-1'`)
		mustFail(t, "accounts are never deleted", `DELETE FROM accounts WHERE account_id = 'g-1'`)
		mustFail(t, "never truncated", `TRUNCATE accounts CASCADE`)
		mustFail(t, "misnamed", `INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES ('core:USDX', 'o', 'USD', now(), now())`)
		mustFail(t, "ledger_account_id_check", `INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES ('a/b', 'o', 'USD', now(), now())`)
	})
	t.Run("HoldTransitionsAreGuarded", func(t *testing.T) {
		if _, err := b.pool.Exec(ctx, `INSERT INTO instruments VALUES ('g-src', 'source', 'g-1', now())`); err != nil {
			t.Fatal(err)
		}
		g1, err := b.store.GetAccount(ctx, "g-1")
		if err != nil {
			t.Fatal(err)
		}
		h := storetest.Hold(t, b.store, "g-p1", g1.OwnerExternalID, "g-src", "1")
		if c := storetest.Settle(t, b.store, "g-p1", h.Reference, true); !c.Approved() {
			t.Fatal(c)
		}
		// Captured, it cannot become held or released again, nor change.
		mustFail(t, "illegal hold transition", `DELETE FROM hold_settlements WHERE hold_reference = $1`, h.Reference)
		mustFail(t, "illegal hold transition", `UPDATE hold_settlements SET status = 'released', transaction_id = NULL WHERE hold_reference = $1`, h.Reference)
		mustFail(t, "hold_settlements_pkey", `INSERT INTO hold_settlements (hold_reference, status, reference, settled_at) VALUES ($1, 'released', 'r', now())`, h.Reference)
		mustFail(t, "never truncated", `TRUNCATE hold_settlements`)
		mustFail(t, "illegal hold transition", `UPDATE holds SET amount = 2 WHERE hold_reference = $1`, h.Reference)
		mustFail(t, "illegal hold transition", `DELETE FROM holds`)
		mustFail(t, "never truncated", `TRUNCATE holds CASCADE`)
		mustFail(t, "holds_payout_id_key", `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at) VALUES ('g-h2', 'g-p1', 'g-1', 'g-src', 'USD', 1, now())`)
		mustFail(t, "holds_amount_positive", `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at) VALUES ('g-h3', 'g-p3', 'g-1', 'g-src', 'USD', 0, now())`)
		mustFail(t, "hold_settlements_state_check", `INSERT INTO hold_settlements (hold_reference, status, reference, settled_at) VALUES ('g-h4', 'captured', 'c', now())`)
	})
	t.Run("EffectsAreNeverTruncated", func(t *testing.T) {
		mustFail(t, "never truncated", `TRUNCATE credits`)
		mustFail(t, "never truncated", `TRUNCATE adjustments`)
	})
	t.Run("CreditsOncePerRequest", func(t *testing.T) {
		mustFail(t, "credits_pkey", `
INSERT INTO credits VALUES ('dup', 'a', 'g-1', 'd', 'USD', 1, gen_random_uuid(), now()), ('dup', 'b', 'g-1', 'd', 'USD', 1, gen_random_uuid(), now())`)
	})
}

// TestInvariantChecksDetect corrupts a ledger behind the functions' backs
// (raw updates of the stored balance and held, which no function does) and expects
// each check to report it: the checks can fail.
func TestInvariantChecksDetect(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "d-1", Funds: "10"})
	storetest.AssertInvariants(t, b.store)
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
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "rr-a", Owner: "carol", Dest: "dst-rr-a"})
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "rr-b", Owner: "carol", Dest: "dst-rr-b", Status: ledger.StatusFrozen})
	// The first credit runs in a transaction left open: raw SQL, as the
	// store commits every call.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var firstRef string
	if err := tx.QueryRow(ctx, `SELECT reference FROM cb_credit(p_key => 'k-a', p_fingerprint => sha256('a'), p_key_fingerprint => 'test',
p_now => now(), p_request_id => 'rr-1', p_destination => 'dst-rr-a', p_requester => 'carol', p_currency => 'USD', p_amount => 5,
p_max => NULL, p_credit_reference => 'cred-first', p_transaction_id => gen_random_uuid())`).Scan(&firstRef); err != nil || firstRef != "cred-first" {
		t.Fatal(firstRef, err)
	}
	second := make(chan ledger.Answer, 1)
	go func() {
		fp := sha256.Sum256([]byte("b"))
		a, err := b.store.Credit(ctx, ledger.CreditParams{Key: "k-b", Fingerprint: fp[:], KeyFingerprint: "test",
			Now: time.Now(), RequestID: "rr-1", Destination: "dst-rr-b", Requester: "carol", Currency: "USD",
			Amount: dec("5"), CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()})
		if err != nil {
			t.Error(err)
		}
		second <- a
	}()
	storetest.WaitForLockWaiters(t, b.pool, 1) // the second credit queues behind the first
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if d := <-second; !d.Approved() || d.Reference != firstRef {
		t.Fatalf("second credit of the request = %+v, want approved %s", d, firstRef)
	}
	storetest.AssertBalances(t, b.store, "rr-a", "5", "0", "5")
	storetest.AssertBalances(t, b.store, "rr-b", "0", "0", "0")
}

// TestInvariantChecksDetectOpenHoldsDrift: open_holds (what /metrics and
// the listing of held holds read) is checked against the holds and their
// settlements: a held hold missing from it, a settled one left in it and
// one listed with another amount are each a held_drift naming the hold.
func TestInvariantChecksDetectOpenHoldsDrift(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	storetest.Account(t, b.store, storetest.AccountOpts{AccountID: "od-1", Owner: "oda", Source: "od-src", Funds: "100"})
	refs := map[string]string{}
	for _, p := range []string{"od-p1", "od-p2", "od-p3", "od-p4"} {
		if d := storetest.Hold(t, b.store, p, "oda", "od-src", "5"); d.Outcome != "approved" {
			t.Fatalf("authorize %s: %+v", p, d)
		} else {
			refs[p] = d.Reference
		}
	}
	if d := storetest.Settle(t, b.store, "od-p4", refs["od-p4"], true); d.Outcome != "approved" {
		t.Fatalf("capture: %+v", d)
	}
	storetest.AssertInvariants(t, b.store)
	for _, c := range []struct{ sql, ref string }{
		{`DELETE FROM open_holds WHERE hold_reference = $1`, refs["od-p1"]},
		{`UPDATE open_holds SET amount = 6 WHERE hold_reference = $1`, refs["od-p2"]},
		{`INSERT INTO open_holds SELECT hold_reference, account_id, currency, amount, placed_at FROM holds WHERE hold_reference = $1`, refs["od-p4"]},
	} {
		if _, err := b.pool.Exec(ctx, c.sql, c.ref); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
	}
	vs, err := b.store.CheckInvariants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range vs {
		got[v.Subject] = v.Kind
	}
	for _, p := range []string{"od-p1", "od-p2", "od-p4"} {
		if got[refs[p]] != "held_drift" {
			t.Errorf("%s: %q, want held_drift; violations %+v", p, got[refs[p]], vs)
		}
	}
	if _, ok := got[refs["od-p3"]]; ok {
		t.Errorf("hold_od-p3 is consistent, reported %+v", vs)
	}
}

// TestCreditTableRunsAlone: every row of the credit decision table passes
// when run on its own.
func TestCreditTableRunsAlone(t *testing.T) {
	tooltest.SkipShort(t, "runs every row of the credit table again, each alone in a test process of its own")
	t.Parallel()
	storetest.EachSubtestAlone(t, "TestCreditTable")
}
