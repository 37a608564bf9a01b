package store_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// readback is a database with a random workload on it, and its record.
type readback struct {
	db *store.DB
	w  *storetest.Workload
}

func setupReadback(t *testing.T, seed uint64) readback {
	t.Helper()
	_, pool := storetest.DB(t)
	clock := storetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	db := store.Wrap(pool, clock.Now)
	return readback{db: db, w: storetest.RunWorkload(t, db, clock, storetest.WorkloadOpts{Seed: seed})}
}

// sameEntries fails t unless got and want are the same entries in the same
// order, field by field (amounts as numbers).
func sameEntries(t *testing.T, what string, got, want []ledger.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.TransactionID != w.TransactionID || g.AccountID != w.AccountID || g.ContraAccountID != w.ContraAccountID ||
			g.Currency != w.Currency || !g.Amount.Equal(w.Amount) || g.Kind != w.Kind || g.Reference != w.Reference ||
			g.Memo != w.Memo || !g.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("%s: entry %d is\n%+v\nwant\n%+v", what, i, g, w)
		}
	}
}

// allEntries follows every page of ListEntries with random page sizes.
func allEntries(t *testing.T, db *store.DB, rng *rand.Rand, o ledger.JournalOptions) []ledger.Entry {
	t.Helper()
	var out []ledger.Entry
	for pages := 0; ; pages++ {
		o.Limit = 1 + rng.IntN(ledger.MaxLimit)
		p, err := db.ListEntries(context.Background(), o)
		if err != nil {
			t.Fatalf("ListEntries(%+v): %v", o, err)
		}
		out = append(out, p.Entries...)
		if p.HasMore != (p.NextCursor != "") || (p.HasMore && len(p.Entries) != o.Limit) || pages > 10_000 {
			t.Fatalf("page %+v of %d entries with limit %d", p, len(p.Entries), o.Limit)
		}
		if !p.HasMore {
			return out
		}
		o.Cursor = p.NextCursor
	}
}

func allTransactions(t *testing.T, db *store.DB, rng *rand.Rand, o ledger.JournalOptions) []ledger.Transaction {
	t.Helper()
	var out []ledger.Transaction
	for {
		o.Limit = 1 + rng.IntN(ledger.MaxLimit)
		p, err := db.ListTransactions(context.Background(), o)
		if err != nil {
			t.Fatalf("ListTransactions(%+v): %v", o, err)
		}
		out = append(out, p.Transactions...)
		if p.HasMore != (p.NextCursor != "") || (p.HasMore && len(p.Transactions) != o.Limit) {
			t.Fatalf("page of %d transactions with limit %d, hasMore %v", len(p.Transactions), o.Limit, p.HasMore)
		}
		if !p.HasMore {
			return out
		}
		o.Cursor = p.NextCursor
	}
}

// statement reads a statement into its summary and entries.
func statement(t *testing.T, db *store.DB, o ledger.StatementOptions) (ledger.StatementSummary, []ledger.Entry) {
	t.Helper()
	var s ledger.StatementSummary
	var es []ledger.Entry
	calls := 0
	err := db.Statement(context.Background(), o,
		func(got ledger.StatementSummary) error { s = got; calls++; return nil },
		func(e ledger.Entry) error {
			if calls != 1 {
				t.Fatal("an entry before the summary")
			}
			es = append(es, e)
			return nil
		})
	if err != nil || calls != 1 {
		t.Fatalf("Statement(%+v): %v (summary called %d times)", o, err, calls)
	}
	return s, es
}

// readbackChecks are what TestReadBack checks of each workload, in order:
// each reads only, with a random source of its own.
var readbackChecks = []struct {
	name  string
	check func(t *testing.T, b readback, rng *rand.Rand)
}{
	{"EntriesOfEachAccount", entriesOfEachAccount},
	{"EntriesInRanges", entriesInRanges},
	{"AllEntriesAreBothSides", allEntriesAreBothSides},
	{"SystemAccounts", systemAccounts},
	{"Transactions", readTransactions},
	{"Statements", readStatements},
	{"ConsecutivePeriodsChain", consecutivePeriodsChain},
}

// TestReadBack compares what the store reads back with what random
// workloads recorded as they wrote: every entry, in order, under every
// paging; statements whose opening plus entries is their closing, which
// is the account's balance at the end; transactions of two entries
// summing to zero; each currency's entries summing to zero.
func TestReadBack(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			t.Parallel()
			b := setupReadback(t, seed)
			// The checks only read: they run in parallel on the one
			// workload, each with a random stream of its own.
			for i, c := range readbackChecks {
				rng := rand.New(rand.NewPCG(seed, uint64(i+1)))
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.check(t, b, rng)
				})
			}
		})
	}
}

// entriesOfEachAccount: every account's entries, paged at random, are the
// ones the workload wrote.
func entriesOfEachAccount(t *testing.T, b readback, rng *rand.Rand) {
	for _, a := range b.w.Accounts {
		got := allEntries(t, b.db, rng, ledger.JournalOptions{AccountID: a.AccountID})
		sameEntries(t, a.AccountID, got, b.w.EntriesOf(a.AccountID, time.Time{}, time.Time{}))
	}
}

// entriesInRanges: an account's entries within a time range are the
// workload's within it.
func entriesInRanges(t *testing.T, b readback, rng *rand.Rand) {
	for range 20 {
		from, to := window(rng, b.w)
		a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
		got := allEntries(t, b.db, rng, ledger.JournalOptions{AccountID: a.AccountID, From: from, To: to})
		sameEntries(t, fmt.Sprintf("%s [%s, %s)", a.AccountID, from, to), got, b.w.EntriesOf(a.AccountID, from, to))
	}
}

// allEntriesAreBothSides: the journal without an account filter lists both
// sides of each transaction, which sum to zero per currency.
func allEntriesAreBothSides(t *testing.T, b readback, rng *rand.Rand) {
	from, to := window(rng, b.w)
	got := allEntries(t, b.db, rng, ledger.JournalOptions{From: from, To: to})
	want := b.w.EntriesOf("", from, to)
	if len(got) != 2*len(want) {
		t.Fatalf("%d entries for %d transactions", len(got), len(want))
	}
	sums := map[string]decimal.Decimal{}
	for i, w := range want {
		customer, system := got[2*i], got[2*i+1]
		sameEntries(t, "customer side", []ledger.Entry{customer}, []ledger.Entry{w})
		if system.TransactionID != w.TransactionID || system.AccountID != w.ContraAccountID ||
			system.ContraAccountID != w.AccountID || !system.Amount.Equal(w.Amount.Neg()) || system.Kind != w.Kind {
			t.Fatalf("system side %+v of %+v", system, w)
		}
		sums[w.Currency] = sums[w.Currency].Add(customer.Amount).Add(system.Amount)
	}
	for cur, s := range sums {
		if !s.IsZero() {
			t.Errorf("%s entries sum to %s", cur, s)
		}
	}
}

// systemAccounts: settlement and core accounts' entries are the contra
// sides of the customers'.
func systemAccounts(t *testing.T, b readback, rng *rand.Rand) {
	for _, cur := range []string{"USD", "JPY", "KWD"} {
		for _, sys := range []string{"settlement:" + cur, "core:" + cur} {
			got := allEntries(t, b.db, rng, ledger.JournalOptions{AccountID: sys})
			var want []ledger.Entry
			for _, e := range b.w.Entries {
				if e.ContraAccountID == sys {
					e.AccountID, e.ContraAccountID, e.Amount = e.ContraAccountID, e.AccountID, e.Amount.Neg()
					want = append(want, e)
				}
			}
			if len(want) == 0 {
				t.Fatalf("the workload never touched %s: the check sees nothing", sys)
			}
			sameEntries(t, sys, got, want)
		}
	}
}

// readTransactions: transactions read back with their two entries, in the
// workload's order, for all and for one account.
func readTransactions(t *testing.T, b readback, rng *rand.Rand) {
	got := allTransactions(t, b.db, rng, ledger.JournalOptions{})
	if len(got) != len(b.w.Entries) {
		t.Fatalf("%d transactions, want %d", len(got), len(b.w.Entries))
	}
	for i, tx := range got {
		w := b.w.Entries[i]
		if tx.TransactionID != w.TransactionID || tx.Kind != w.Kind || tx.Reference != w.Reference || tx.Memo != w.Memo ||
			!tx.CreatedAt.Equal(w.CreatedAt) || tx.Currency != w.Currency {
			t.Fatalf("transaction %d %+v, want %+v", i, tx, w)
		}
		sameEntries(t, "first entry", tx.Entries[:1], []ledger.Entry{w})
		if sum := tx.Entries[0].Amount.Add(tx.Entries[1].Amount); !sum.IsZero() || tx.Entries[1].AccountID != w.ContraAccountID {
			t.Fatalf("transaction %s: entries %+v sum to %s", tx.TransactionID, tx.Entries, sum)
		}
	}
	a := b.w.Accounts[0]
	mine := allTransactions(t, b.db, rng, ledger.JournalOptions{AccountID: a.AccountID})
	if len(mine) != len(b.w.EntriesOf(a.AccountID, time.Time{}, time.Time{})) {
		t.Fatalf("%d transactions of %s", len(mine), a.AccountID)
	}
}

// readStatements: a statement's entries and summary (opening, closing,
// credits, debits) match the workload, and its closing balance up to the
// end is the account's balance.
func readStatements(t *testing.T, b readback, rng *rand.Rand) {
	ctx := context.Background()
	for range 30 {
		a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
		from, to := window(rng, b.w)
		if from.IsZero() {
			from = b.w.Times[0].Add(-time.Hour)
		}
		if to.IsZero() {
			to = b.w.End
		}
		s, es := statement(t, b.db, ledger.StatementOptions{AccountID: a.AccountID, From: from, To: to})
		what := fmt.Sprintf("%s [%s, %s)", a.AccountID, from, to)
		want := b.w.EntriesOf(a.AccountID, from, to)
		sameEntries(t, what, es, want)
		sum := decimal.Zero
		for _, e := range es {
			sum = sum.Add(e.Amount)
		}
		if !s.Opening.Equal(b.w.BalanceAt(a.AccountID, from)) || !s.Closing.Equal(b.w.BalanceAt(a.AccountID, to)) ||
			!s.Opening.Add(sum).Equal(s.Closing) || !s.Credits.Add(s.Debits).Equal(sum) || s.Count() != int64(len(es)) ||
			s.Credits.IsNegative() || s.Debits.IsPositive() {
			t.Fatalf("%s: summary %+v; entries sum to %s; the record says opening %s, closing %s",
				what, s, sum, b.w.BalanceAt(a.AccountID, from), b.w.BalanceAt(a.AccountID, to))
		}
	}
	// Up to the end, the closing balance is the account's
	// balance: the accounts table, a path apart from the journal.
	for _, a := range b.w.Accounts {
		s, _ := statement(t, b.db, ledger.StatementOptions{AccountID: a.AccountID, From: b.w.Times[0], To: b.w.End})
		now, err := b.db.GetAccount(ctx, a.AccountID)
		if err != nil || !s.Closing.Equal(now.Balance) || !s.Opening.IsZero() || s.Account.AccountID != a.AccountID {
			t.Fatalf("%s: closing %s, balance %s (%v); opening %s", a.AccountID, s.Closing, now.Balance, err, s.Opening)
		}
	}
}

// consecutivePeriodsChain: the statements of consecutive periods chain:
// each opens where the previous closed, and together they hold every entry.
func consecutivePeriodsChain(t *testing.T, b readback, rng *rand.Rand) {
	a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
	cuts := []time.Time{b.w.Times[0]}
	for _, tm := range b.w.Times[1:] {
		if rng.IntN(8) == 0 {
			cuts = append(cuts, tm)
		}
	}
	cuts = append(cuts, b.w.End)
	n := 0
	prev := decimal.Zero
	for i := range len(cuts) - 1 {
		s, es := statement(t, b.db, ledger.StatementOptions{AccountID: a.AccountID, From: cuts[i], To: cuts[i+1]})
		if !s.Opening.Equal(prev) {
			t.Fatalf("period %d opens at %s, the previous closed at %s", i, s.Opening, prev)
		}
		prev, n = s.Closing, n+len(es)
	}
	if n != len(b.w.EntriesOf(a.AccountID, time.Time{}, time.Time{})) {
		t.Fatalf("the periods hold %d entries", n)
	}
}

// window picks a random range among the workload's times: an end may be
// open (zero), a bound may fall exactly on a write.
func window(rng *rand.Rand, w *storetest.Workload) (time.Time, time.Time) {
	pick := func() time.Time {
		switch rng.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return w.Times[rng.IntN(len(w.Times))].Add(time.Duration(rng.IntN(3)-1) * time.Microsecond)
		}
		return w.Times[rng.IntN(len(w.Times))]
	}
	for {
		from, to := pick(), pick()
		if from.IsZero() || to.IsZero() || to.After(from) {
			return from, to
		}
	}
}

// accountsFixture is a database with seven accounts of two owners, three
// currencies and three statuses, and their IDs in byte order (the
// database's "C" collation), the order a listing returns them in.
func accountsFixture(t *testing.T) (*store.DB, []string) {
	t.Helper()
	db, _ := storetest.DB(t)
	ids := []string{"b-2", "B-1", "a-10", "a-9", "é-1", "z", "a-1"}
	for i, id := range ids {
		storetest.Account(t, db, storetest.AccountOpts{AccountID: id, Owner: []string{"olga", "oscar"}[i%2],
			Currency: []string{"USD", "EUR", "JPY"}[i%3], Status: []string{"open", "frozen", "open", "closed"}[i%4]})
	}
	slices.Sort(ids)
	return db, ids
}

// listAccounts follows a listing's cursors to its end and returns every
// account ID, checking that each page has a cursor exactly when it says
// there is more.
func listAccounts(t *testing.T, db *store.DB, o ledger.AccountListOptions) []string {
	t.Helper()
	var out []string
	for {
		p, err := db.ListAccounts(context.Background(), o)
		if err != nil {
			t.Fatalf("ListAccounts(%+v): %v", o, err)
		}
		for _, a := range p.Accounts {
			out = append(out, a.AccountID)
		}
		if p.HasMore != (p.NextCursor != "") {
			t.Fatalf("page %+v", p)
		}
		if !p.HasMore {
			return out
		}
		o.Cursor = p.NextCursor
	}
}

// TestListAccounts: accounts in accountID order (byte order), filtered,
// every one once over all pages; system accounts never.
func TestListAccounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("EveryPageSize", func(t *testing.T) {
		t.Parallel()
		db, ids := accountsFixture(t)
		for limit := 1; limit <= len(ids)+1; limit++ {
			if got := listAccounts(t, db, ledger.AccountListOptions{Limit: limit}); !slices.Equal(got, ids) {
				t.Fatalf("limit %d: %v, want %v", limit, got, ids)
			}
		}
		p, err := db.ListAccounts(ctx, ledger.AccountListOptions{})
		if err != nil || len(p.Accounts) != len(ids) || p.HasMore || p.Accounts[0].Available.String() != "0" {
			t.Fatalf("default page %+v %v", p, err)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		db, ids := accountsFixture(t)
		all := map[string]ledger.Account{}
		for _, id := range ids {
			a, err := db.GetAccount(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			all[id] = a
		}
		for _, o := range []ledger.AccountListOptions{
			{Currency: "USD"}, {Currency: "EUR", Status: "frozen"}, {OwnerExternalID: "olga"},
			{OwnerExternalID: "oscar", Status: "open"}, {OwnerExternalID: "oscar", Currency: "JPY", Limit: 1},
			{Status: "closed"}, {OwnerExternalID: "nobody"}, {Currency: "GBP"},
		} {
			var want []string
			for _, id := range ids {
				a := all[id]
				if (o.Currency == "" || a.Currency == o.Currency) && (o.Status == "" || a.Status == o.Status) &&
					(o.OwnerExternalID == "" || a.OwnerExternalID == o.OwnerExternalID) {
					want = append(want, id)
				}
			}
			if got := listAccounts(t, db, o); !slices.Equal(got, want) {
				t.Errorf("%+v: %v, want %v", o, got, want)
			}
		}
	})

	t.Run("AnAccountCreatedBetweenPages", func(t *testing.T) {
		t.Parallel()
		db, _ := accountsFixture(t)
		p, err := db.ListAccounts(ctx, ledger.AccountListOptions{Limit: 2}) // A-…: B-1, a-1
		if err != nil || !p.HasMore {
			t.Fatal(p, err)
		}
		storetest.Account(t, db, storetest.AccountOpts{AccountID: "A-0"}) // before the cursor: not seen
		storetest.Account(t, db, storetest.AccountOpts{AccountID: "y"})   // after it: seen once
		got := listAccounts(t, db, ledger.AccountListOptions{Cursor: p.NextCursor, Limit: 3})
		if want := []string{"a-10", "a-9", "b-2", "y", "z", "é-1"}; !slices.Equal(got, want) {
			t.Fatalf("after the first page: %v, want %v", got, want)
		}
	})

}

// TestListAccountsBadOptions: each bad option of a listing is invalid,
// with the pointer of the option.
func TestListAccountsBadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	journalCursor := base64.RawURLEncoding.EncodeToString([]byte("e1|0|00000000-0000-0000-0000-000000000000|0"))
	for _, c := range []struct {
		o       ledger.AccountListOptions
		pointer string
	}{
		{ledger.AccountListOptions{Limit: -1}, "/limit"},
		{ledger.AccountListOptions{Limit: ledger.MaxLimit + 1}, "/limit"},
		{ledger.AccountListOptions{Currency: "usd"}, "/currency"},
		{ledger.AccountListOptions{Currency: "XXY"}, "/currency"},
		{ledger.AccountListOptions{Status: "gone"}, "/status"},
		{ledger.AccountListOptions{OwnerExternalID: "o\x00"}, "/ownerExternalID"},
		{ledger.AccountListOptions{OwnerExternalID: "\xff"}, "/ownerExternalID"},
		{ledger.AccountListOptions{Cursor: "!!"}, "/cursor"},
		{ledger.AccountListOptions{Cursor: journalCursor}, "/cursor"},
		{ledger.AccountListOptions{Cursor: base64.RawURLEncoding.EncodeToString([]byte("a1|\x00"))}, "/cursor"},
		{ledger.AccountListOptions{Cursor: base64.RawURLEncoding.EncodeToString([]byte("a1|"))}, "/cursor"},
	} {
		_, err := db.ListAccounts(ctx, c.o)
		assertInvalid(t, fmt.Sprintf("%+v", c.o), err, c.pointer)
	}
}

func assertInvalid(t *testing.T, what string, err error, pointer string) {
	t.Helper()
	var le *ledger.Error
	if !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != pointer {
		t.Errorf("%s: %v, want invalid at %s", what, err, pointer)
	}
}

// TestJournalBadOptions: every malformed option is refused, pointing at
// it, before any query.
func TestJournalBadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	const tx = "018f0e2a-0000-7000-8000-000000000000"
	for _, c := range []struct {
		o       ledger.JournalOptions
		pointer string
	}{
		{ledger.JournalOptions{Limit: 101}, "/limit"},
		{ledger.JournalOptions{AccountID: "a\x00"}, "/accountID"},
		{ledger.JournalOptions{From: day.Add(time.Hour), To: day}, "/to"},
		{ledger.JournalOptions{From: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}, "/from"},
		{ledger.JournalOptions{To: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "/to"},
		{ledger.JournalOptions{Cursor: "%%"}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("a1|acc")}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|1|" + tx)}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|x|" + tx + "|0")}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|1|" + tx + "|2")}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|1|018F0E2A-0000-7000-8000-000000000000|0")}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|1|not-a-uuid|0")}, "/cursor"},
		{ledger.JournalOptions{Cursor: cursor("e1|999999999999999999|" + tx + "|0")}, "/cursor"},
	} {
		_, err := db.ListEntries(ctx, c.o)
		assertInvalid(t, fmt.Sprintf("entries %+v", c.o), err, c.pointer)
	}
	// A cursor of the entries is not one of the transactions.
	_, err := db.ListTransactions(ctx, ledger.JournalOptions{Cursor: cursor("e1|1|" + tx + "|0")})
	assertInvalid(t, "an entries cursor for transactions", err, "/cursor")

	noop := func(ledger.StatementSummary) error { return nil }
	for _, c := range []struct {
		o       ledger.StatementOptions
		pointer string
	}{
		{ledger.StatementOptions{AccountID: "a", To: day}, "/from"},
		{ledger.StatementOptions{AccountID: "a", From: day}, "/to"},
		{ledger.StatementOptions{AccountID: "a", From: day.Add(time.Hour), To: day}, "/to"},
		{ledger.StatementOptions{AccountID: "a\xff", From: day, To: day.Add(time.Hour)}, "/accountID"},
	} {
		err := db.Statement(ctx, c.o, noop, func(ledger.Entry) error { return nil })
		assertInvalid(t, fmt.Sprintf("statement %+v", c.o), err, c.pointer)
	}
	err = db.Statement(ctx, ledger.StatementOptions{AccountID: "settlement:USD", From: day, To: day.Add(time.Hour)}, noop, nil)
	if !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("a statement of a system account: %v", err)
	}
}

// TestStatementStops: an error from a callback stops the statement and is
// returned as it was.
func TestStatementStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "stop-1", Funds: "10"})
	if _, err := db.Adjust(ctx, "stop-1", decimal.RequireFromString("5"), "k2", ""); err != nil {
		t.Fatal(err)
	}
	o := ledger.StatementOptions{AccountID: "stop-1", From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)}
	boom := errors.New("boom")
	if err := db.Statement(ctx, o, func(ledger.StatementSummary) error { return boom }, nil); !errors.Is(err, boom) {
		t.Fatalf("summary error: %v", err)
	}
	n := 0
	err := db.Statement(ctx, o, func(ledger.StatementSummary) error { return nil }, func(ledger.Entry) error { n++; return boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("entry error: %v after %d entries", err, n)
	}
}
