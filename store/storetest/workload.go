package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
)

// Clock is a settable clock for store.Wrap: tests pin the time of every
// write.
type Clock struct{ t atomic.Pointer[time.Time] }

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.Set(t)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return *c.t.Load() }

// Set sets the clock's time.
func (c *Clock) Set(t time.Time) { c.t.Store(&t) }

// WorkloadOpts shape a random workload. Zero values get defaults.
type WorkloadOpts struct {
	Seed       uint64   // the random source's seed (tests name it in failures)
	Accounts   int      // customer accounts (default 5)
	Ops        int      // operations after the opening deposits (default 200)
	Currencies []string // accounts' currencies, round robin (default USD, JPY, KWD: 2, 0 and 3 places)
}

// Workload is what a random workload did, recorded as it went: the model
// that read-back tests compare the database with. Every entry is the
// customer account's side of a journal transaction.
type Workload struct {
	Accounts []ledger.Account // as created (balances zero)
	// Entries are in journal order: created_at, then transaction ID.
	Entries []ledger.Entry
	// Times are the distinct times writes were stamped with, ascending;
	// End is after the last.
	Times []time.Time
	End   time.Time
}

// RunWorkload runs a random workload on db, a fresh store whose clock is
// clock (store.Wrap(pool, clock.Now)); it moves the clock forward before
// each write. The workload: deposits and withdrawals (including ones
// refused for funds), holds captured, released or left held, and credits,
// in random amounts with each currency's minor units, several sharing one
// timestamp. It returns the record.
func RunWorkload(t testing.TB, db *store.DB, clock *Clock, o WorkloadOpts) *Workload {
	t.Helper()
	if o.Accounts == 0 {
		o.Accounts = 5
	}
	if o.Ops == 0 {
		o.Ops = 200
	}
	if len(o.Currencies) == 0 {
		o.Currencies = []string{"USD", "JPY", "KWD"}
	}
	r := &workloadRun{t: t, db: db, clock: clock, ctx: context.Background(),
		rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed)), w: &Workload{}, seen: map[time.Time]bool{}}
	r.openAccounts(o)
	for _, a := range r.accts {
		r.adjust(a, r.amount(a, 1_000_000))
	}
	for range o.Ops {
		r.step()
	}
	w := r.w
	slices.SortStableFunc(w.Entries, func(x, y ledger.Entry) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.TransactionID, y.TransactionID))
	})
	w.End = clock.Now().Add(time.Microsecond)
	for _, a := range r.accts {
		AssertBalances(t, db, a.AccountID, a.balance.String(), a.held.String(), a.balance.Sub(a.held).String())
	}
	return w
}

// workloadRun is the state of one RunWorkload: the store, the clock, the
// random source, the accounts' model and the record so far.
type workloadRun struct {
	t     testing.TB
	db    *store.DB
	clock *Clock
	ctx   context.Context
	rng   *rand.Rand
	w     *Workload
	seen  map[time.Time]bool // the times in w.Times
	accts []*workloadAccount
}

// workloadAccount is one customer account of a workload: its instruments
// and the balance and held amount the workload implies.
type workloadAccount struct {
	ledger.Account
	owner, src, dst string
	balance, held   decimal.Decimal
	places          int32
}

// stamp moves the clock forward for the next write and returns the time.
func (r *workloadRun) stamp() time.Time {
	// Most writes a little apart, some at the same microsecond as the
	// last, some an hour or a day later (statement periods).
	now := r.clock.Now()
	switch n := r.rng.IntN(10); {
	case n < 2:
	case n < 7:
		now = now.Add(time.Duration(1+r.rng.IntN(5000)) * time.Microsecond)
	case n < 9:
		now = now.Add(time.Hour)
	default:
		now = now.Add(24 * time.Hour)
	}
	r.clock.Set(now)
	if !r.seen[now] {
		r.seen[now] = true
		r.w.Times = append(r.w.Times, now)
	}
	return now
}

// openAccounts creates the workload's accounts, currencies round robin.
func (r *workloadRun) openAccounts(o WorkloadOpts) {
	r.accts = make([]*workloadAccount, o.Accounts)
	for i := range r.accts {
		cur := o.Currencies[i%len(o.Currencies)]
		places, _ := ledger.MinorUnits(cur)
		a := &workloadAccount{owner: fmt.Sprintf("wl-owner-%d", i), src: fmt.Sprintf("wl-src-%d", i), dst: fmt.Sprintf("wl-dst-%d", i), places: places}
		r.stamp()
		a.Account = Account(r.t, r.db, AccountOpts{AccountID: fmt.Sprintf("wl-%02d", i), Owner: a.owner, Currency: cur, Source: a.src, Dest: a.dst})
		r.w.Accounts = append(r.w.Accounts, a.Account)
		r.accts[i] = a
	}
}

// amount returns a random positive amount of at most maxMinor minor units
// of a's currency.
func (r *workloadRun) amount(a *workloadAccount, maxMinor int64) decimal.Decimal {
	return decimal.New(1+r.rng.Int64N(maxMinor), -a.places)
}

// record appends a's side of a journal transaction to the record and
// updates a's balance.
func (r *workloadRun) record(a *workloadAccount, txID, kind, ref, memo string, amt decimal.Decimal, at time.Time) {
	contra := "settlement:" + a.Currency
	if kind == ledger.JournalAdjustment {
		contra = "core:" + a.Currency
	}
	r.w.Entries = append(r.w.Entries, ledger.Entry{TransactionID: txID, AccountID: a.AccountID, ContraAccountID: contra,
		Currency: a.Currency, Amount: amt, Kind: kind, Reference: ref, Memo: memo, CreatedAt: at.Truncate(time.Microsecond)})
	a.balance = a.balance.Add(amt)
}

// step runs one random operation on a random account: a deposit, a
// withdrawal, a hold or a credit.
func (r *workloadRun) step() {
	a := r.accts[r.rng.IntN(len(r.accts))]
	switch op := r.rng.IntN(10); {
	case op < 2:
		r.adjust(a, r.amount(a, 200_000))
	case op < 4:
		r.adjust(a, r.amount(a, 300_000).Neg()) // may be refused: over available
	case op < 8:
		r.hold(a)
	default:
		r.credit(a)
	}
}

// adjust adjusts a by amt, and checks that an overdraft is refused.
func (r *workloadRun) adjust(a *workloadAccount, amt decimal.Decimal) {
	at := r.stamp()
	key, memo := Unique("wl-key-"), fmt.Sprintf("memo %d, \"quoted\"; ünïcode", r.rng.IntN(1000))
	adj, err := r.db.Adjust(r.ctx, a.AccountID, amt, key, memo)
	if amt.IsNegative() && a.balance.Sub(a.held).Add(amt).IsNegative() {
		if !errors.Is(err, ledger.ErrInsufficientAvailable) {
			r.t.Fatalf("workload: an overdraft of %s on %s: %v, want refused", amt, a.AccountID, err)
		}
		return
	}
	if err != nil {
		r.t.Fatalf("workload: adjust %s by %s: %v", a.AccountID, amt, err)
	}
	r.record(a, adj.TransactionID, ledger.JournalAdjustment, key, memo, amt, at)
}

// hold authorizes a payout from a, checks that it is refused only for
// want of funds, and then captures it, releases it or leaves it held.
func (r *workloadRun) hold(a *workloadAccount) {
	amt := r.amount(a, 100_000)
	payout := Unique("wl-payout-")
	hold, err := r.db.Authorize(r.ctx, holds.AuthorizeParams{Key: "a-" + payout, Fingerprint: fingerprint(payout),
		KeyFingerprint: "test", Now: r.stamp(), PayoutID: payout, ExternalID: a.owner, FundingSource: a.src,
		Currency: a.Currency, Amount: amt, FraudDeny: 0.9, FraudStepUp: 0.75, HoldReference: ledger.NewReference("hold_")})
	if err != nil {
		r.t.Fatalf("workload: authorize: %v", err)
	}
	if !hold.Approved() {
		if a.balance.Sub(a.held).GreaterThanOrEqual(amt) {
			r.t.Fatalf("workload: authorize of %s on %s (available %s) %s", amt, a.AccountID, a.balance.Sub(a.held), hold.Reason)
		}
		return
	}
	a.held = a.held.Add(amt)
	switch r.rng.IntN(4) {
	case 0, 1:
		r.capture(a, payout, hold.Reference, amt)
	case 2:
		r.release(a, payout, hold.Reference, amt)
	}
}

// capture captures a's approved hold of amt for payout.
func (r *workloadRun) capture(a *workloadAccount, payout, holdRef string, amt decimal.Decimal) {
	at, txID, ref := r.stamp(), ledger.NewTransactionID(), ledger.NewReference("cap_")
	d, err := r.db.Capture(r.ctx, holds.CaptureParams{Key: "c-" + payout, Fingerprint: fingerprint("c" + payout),
		KeyFingerprint: "test", Now: at, PayoutID: payout, HoldReference: holdRef,
		CaptureReference: ref, TransactionID: txID})
	if err != nil || !d.Approved() || d.Reference != ref {
		r.t.Fatalf("workload: capture: %+v %v", d, err)
	}
	a.held = a.held.Sub(amt)
	r.record(a, txID.String(), ledger.JournalCapture, ref, payout, amt.Neg(), at)
}

// release releases a's approved hold of amt for payout.
func (r *workloadRun) release(a *workloadAccount, payout, holdRef string, amt decimal.Decimal) {
	reason := "cancelled"
	d, err := r.db.Release(r.ctx, holds.ReleaseParams{Key: "r-" + payout, Fingerprint: fingerprint("r" + payout),
		KeyFingerprint: "test", Now: r.stamp(), PayoutID: &payout, HoldReference: holdRef, Reason: &reason,
		ReleaseReference: ledger.NewReference("rel_")})
	if err != nil || !d.Approved() {
		r.t.Fatalf("workload: release: %+v %v", d, err)
	}
	a.held = a.held.Sub(amt)
}

// credit credits a random amount to a's destination.
func (r *workloadRun) credit(a *workloadAccount) {
	amt := r.amount(a, 150_000)
	at, txID, ref, req := r.stamp(), ledger.NewTransactionID(), ledger.NewReference("cred_"), Unique("wl-req-")
	d, err := r.db.Credit(r.ctx, ledger.CreditParams{Key: "k-" + req, Fingerprint: fingerprint(req), KeyFingerprint: "test",
		Now: at, RequestID: req, Destination: a.dst, Requester: a.owner, Currency: a.Currency, Amount: amt,
		CreditReference: ref, TransactionID: txID})
	if err != nil || !d.Approved() {
		r.t.Fatalf("workload: credit: %+v %v", d, err)
	}
	r.record(a, txID.String(), ledger.JournalCredit, ref, req, amt, at)
}

// EntriesOf returns the entries of one account in [from, to) (zero: open).
func (w *Workload) EntriesOf(accountID string, from, to time.Time) []ledger.Entry {
	var out []ledger.Entry
	for _, e := range w.Entries {
		if (accountID == "" || e.AccountID == accountID) && (from.IsZero() || !e.CreatedAt.Before(from)) && (to.IsZero() || e.CreatedAt.Before(to)) {
			out = append(out, e)
		}
	}
	return out
}

// BalanceAt returns the account's balance just before t: the sum of its
// entries created before t.
func (w *Workload) BalanceAt(accountID string, t time.Time) decimal.Decimal {
	sum := decimal.Zero
	for _, e := range w.EntriesOf(accountID, time.Time{}, t) {
		sum = sum.Add(e.Amount)
	}
	return sum
}
