package loadtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/adminapi"
)

// Check is one invariant or consistency check of a run.
type Check struct {
	Name    string   `json:"name"`
	OK      bool     `json:"ok"`
	Checked int      `json:"checked"`
	Failed  int      `json:"failed"`
	Detail  []string `json:"detail,omitempty"`
	// NotChecked says why the check could not be made (it then counts as
	// passed, and the report says so).
	NotChecked string `json:"notChecked,omitempty"`
	// Unsettled counts what was left out of a money check because an
	// unresolved request touches it (see the requests check).
	Unsettled int `json:"unsettled,omitempty"`
}

func (c *Check) failf(format string, args ...any) {
	c.Failed++
	if len(c.Detail) < maxListed {
		c.Detail = append(c.Detail, fmt.Sprintf(format, args...))
	}
}

// The model is the ledger state a run implies, derived from its plans and
// from what the callbacks answered, in cents (every storm is USD): per
// account funding − captured + credited (each requestID once) and the sum
// of the holds left held; per payout its last state and the references
// answered.
type model struct {
	prefix string

	mu       sync.Mutex
	accounts map[string]*accountModel
	accOrder []string
	payouts  map[string]*payoutModel
	order    []string // payoutIDs in plan order
	credited map[string]bool
	// secondCredits are the requestIDs the run credited under a second
	// idempotency key on purpose: reconciliation reports each as an
	// expected duplicate_credit_attempt.
	secondCredits map[string]bool
	// references the run was answered or given (holds, captures, releases,
	// credits, funding transactions): a finding about one is the run's.
	refs map[string]bool
	// destOf maps a funding destination token to its account.
	destOf map[string]string
	// unsure are the accounts and payouts an unresolved request touches
	// (runner.resolve): whether ledgerd applied it is unknown, so the money
	// checks leave them out and say so.
	unsureAccounts, unsurePayouts map[string]bool
}

// accountModel is one account: its seed and the balance and held the
// storm implies.
type accountModel struct {
	seed          accountSeed
	balance, held int64 // cents
}

// payoutModel is one payout: its account and amount, the state the storm
// leaves it in (held, captured, released), and the references answered.
type payoutModel struct {
	account                string
	amount                 int64 // cents
	final                  string
	hold, capture, release string
}

func newModel(prefix string) *model {
	return &model{prefix: prefix, accounts: map[string]*accountModel{}, payouts: map[string]*payoutModel{},
		credited: map[string]bool{}, secondCredits: map[string]bool{}, refs: map[string]bool{},
		destOf: map[string]string{}, unsureAccounts: map[string]bool{}, unsurePayouts: map[string]bool{}}
}

func amountOf(svc map[string]any) (decimal.Decimal, error) {
	m, _ := svc["amount"].(map[string]any)
	v, _ := m["value"].(string)
	return decimal.NewFromString(v)
}

// cents converts an amount of two decimal places to cents; it refuses any
// other.
func cents(d decimal.Decimal) (int64, error) {
	c := d.Shift(decimalPlaces)
	if !c.Equal(c.Truncate(0)) {
		return 0, fmt.Errorf("%s has more than %d decimal places", d, decimalPlaces)
	}
	return c.IntPart(), nil
}

func centsString(c int64) string { return decimal.New(c, -decimalPlaces).StringFixed(decimalPlaces) }

// fund folds a plan's funding into the model; it returns the accounts by
// funding source and destination token. m.mu must be held.
func (m *model) fund(accounts []accountSeed) (bySource, byDest map[string]string, err error) {
	bySource, byDest = map[string]string{}, map[string]string{}
	for _, a := range accounts {
		f, err := decimal.NewFromString(a.Funding)
		if err != nil {
			return nil, nil, fmt.Errorf("account %s: funding %q: %w", a.AccountID, a.Funding, err)
		}
		fc, err := cents(f)
		if err != nil {
			return nil, nil, fmt.Errorf("account %s: funding: %w", a.AccountID, err)
		}
		am := m.accounts[a.AccountID]
		if am == nil {
			am = &accountModel{seed: a}
			m.accounts[a.AccountID] = am
			m.accOrder = append(m.accOrder, a.AccountID)
		}
		am.balance += fc
		bySource[a.SourceToken], byDest[a.DestinationToken] = a.AccountID, a.AccountID
		m.destOf[a.DestinationToken] = a.AccountID
	}
	return bySource, byDest, nil
}

// add folds a plan (a round, or a whole recorded storm) into the model:
// its funding, and the effect of every first attempt.
func (m *model) add(p Plan) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	bySource, byDest, err := m.fund(p.Header.Accounts)
	if err != nil {
		return err
	}
	final := map[string]string{}
	for _, r := range p.Requests {
		switch r.Endpoint {
		case claims.Capture:
			final[r.HoldOf] = "captured"
		case claims.Release:
			final[r.HoldOf] = "released"
		}
	}
	for _, r := range p.Requests {
		if r.SecondOf != 0 {
			if r.Endpoint == claims.CreditAccount {
				m.secondCredits[str(r.Service, "requestID")] = true
			}
			continue
		}
		switch r.Endpoint {
		case claims.Authorize:
			acct, ok := bySource[str(r.Service, "fundingSource")]
			amt, err := amountOf(r.Service)
			if !ok || err != nil {
				return fmt.Errorf("seq %d: authorize from an unseeded source or without an amount", r.Seq)
			}
			c, err := cents(amt)
			if err != nil {
				return fmt.Errorf("seq %d: %w", r.Seq, err)
			}
			id := str(r.Service, "payoutID")
			pm := &payoutModel{account: acct, amount: c, final: final[id]}
			if r.LeaveHeld || pm.final == "" {
				pm.final = "held"
				m.accounts[acct].held += c
			} else if pm.final == "captured" {
				m.accounts[acct].balance -= c
			}
			if _, dup := m.payouts[id]; dup {
				return fmt.Errorf("seq %d: payout %s authorized twice in the storm", r.Seq, id)
			}
			m.payouts[id] = pm
			m.order = append(m.order, id)
		case claims.CreditAccount:
			acct, ok := byDest[str(r.Service, "fundingDestination")]
			amt, err := amountOf(r.Service)
			if !ok || err != nil {
				return fmt.Errorf("seq %d: credit to an unseeded destination or without an amount", r.Seq)
			}
			c, err := cents(amt)
			if err != nil {
				return fmt.Errorf("seq %d: %w", r.Seq, err)
			}
			if rq := str(r.Service, "requestID"); !m.credited[rq] {
				m.credited[rq] = true
				m.accounts[acct].balance += c
			}
		}
	}
	return nil
}

// answered records the reference a first attempt was answered.
func (m *model) answered(r request, ref string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refs[ref] = true
	switch r.Endpoint {
	case claims.Authorize:
		if p := m.payouts[str(r.Service, "payoutID")]; p != nil {
			p.hold = ref
		}
	case claims.Capture:
		if p := m.payouts[r.HoldOf]; p != nil {
			p.capture = ref
		}
	case claims.Release:
		if p := m.payouts[r.HoldOf]; p != nil {
			p.release = ref
		}
	}
}

// unsettled leaves out of the money checks what r touches: r was not
// answered, so whether ledgerd applied it is unknown.
func (m *model) unsettled(r request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	payout := r.HoldOf
	if payout == "" {
		payout = str(r.Service, "payoutID")
	}
	if p := m.payouts[payout]; p != nil {
		m.unsurePayouts[payout] = true
		m.unsureAccounts[p.account] = true
	}
	if a, ok := m.destOf[str(r.Service, "fundingDestination")]; ok && r.Endpoint == claims.CreditAccount {
		m.unsureAccounts[a] = true
	}
}

// holdRef is the holdReference the payout's authorize was answered.
func (m *model) holdRef(payout string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.payouts[payout]; p != nil {
		return p.hold
	}
	return ""
}

// reference notes a reference the run was given outside the callbacks (a
// funding adjustment's transaction).
func (m *model) reference(ref string) {
	if ref == "" {
		return
	}
	m.mu.Lock()
	m.refs[ref] = true
	m.mu.Unlock()
}

// ours reports whether a finding's subject is tied to the run: it carries
// the run's prefix (accounts, payouts, requestIDs, keys) or is a reference
// the run was answered or given.
func (m *model) ours(subject string) bool {
	if m.prefix != "" && strings.Contains(subject, m.prefix) {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refs[subject] {
		return true
	}
	// "account key" (an adjustment's subject) and similar compound subjects.
	for _, f := range strings.Fields(subject) {
		if m.refs[f] {
			return true
		}
	}
	return false
}

// checkLedger reads every account of the run and every payout's holds
// through the admin API and compares them with the model. Holds are read
// by listing the holds placed since the run began (newest first), and one
// payout at a time for any the listing did not show.
func checkLedger(ctx context.Context, adm *adminClient, m *model, conc int, since time.Time) ([]Check, error) {
	lc := &ledgerCheck{ctx: ctx, adm: adm, m: m,
		accounts: Check{Name: "accounts: balance = funded − captured + credited (each requestID once); held = holds left held; available = balance − held ≥ 0"},
		holds:    Check{Name: "holds: one per payout, in the state of the storm's last action, with the references answered"}}
	jobs, wait := startWorkers(conc)
	m.mu.Lock()
	accOrder := slices.Clone(m.accOrder)
	m.mu.Unlock()
	unsureAccounts, unsurePayouts := len(m.unsureAccounts), len(m.unsurePayouts)
	for _, id := range accOrder {
		if m.unsureAccounts[id] {
			continue
		}
		want := m.accounts[id]
		jobs <- func() { lc.readAccount(id, want) }
	}
	listed, listErr := listRunHolds(ctx, adm, m, since)
	for _, id := range m.order {
		if m.unsurePayouts[id] {
			continue
		}
		if hs, ok := listed[id]; ok && listErr == nil {
			lc.mu.Lock()
			lc.compareHolds(id, hs)
			lc.mu.Unlock()
			continue
		}
		jobs <- func() { lc.readHolds(id) }
	}
	wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lc.accounts.OK, lc.holds.OK = lc.accounts.Failed == 0, lc.holds.Failed == 0
	if unsureAccounts+unsurePayouts > 0 {
		lc.accounts.Unsettled, lc.holds.Unsettled = unsureAccounts, unsurePayouts
	}
	slices.Sort(lc.accounts.Detail)
	slices.Sort(lc.holds.Detail)
	return []Check{lc.accounts, lc.holds}, nil
}

// startWorkers starts max(n, 1) workers that run the jobs sent on the
// returned channel (buffered n); wait closes it and waits for the workers.
func startWorkers(n int) (jobs chan<- func(), wait func()) {
	ch := make(chan func(), n)
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Go(func() {
			for j := range ch {
				j()
			}
		})
	}
	return ch, func() {
		close(ch)
		wg.Wait()
	}
}

// ledgerCheck is the state of one checkLedger: the two checks it fills,
// under mu, from concurrent reads.
type ledgerCheck struct {
	ctx context.Context
	adm *adminClient
	m   *model

	mu              sync.Mutex
	accounts, holds Check
}

// readAccount reads one account and compares it with the model.
func (lc *ledgerCheck) readAccount(id string, want *accountModel) {
	got, _, err := retryAdmin(lc.ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
		return lc.adm.Accounts.Get(ctx, id)
	})
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.accounts.Checked++
	if err != nil {
		lc.accounts.failf("%s: %v", id, err)
		return
	}
	compareAccount(&lc.accounts, id, got, want)
}

// compareAccount fails c unless the account read is the one the model
// implies: balance, held, available, currency, owner and status.
func compareAccount(c *Check, id string, got *adminapi.Account, want *accountModel) {
	bal, err1 := got.Balance.Decimal()
	held, err2 := got.Held.Decimal()
	avail, err3 := got.Available.Decimal()
	wantBal, wantHeld := decimal.New(want.balance, -decimalPlaces), decimal.New(want.held, -decimalPlaces)
	switch {
	case err1 != nil || err2 != nil || err3 != nil:
		c.failf("%s: amounts not decimal: %+v", id, got)
	case !bal.Equal(wantBal):
		c.failf("%s: balance %s, want %s", id, got.Balance, centsString(want.balance))
	case !held.Equal(wantHeld):
		c.failf("%s: held %s, want %s", id, got.Held, centsString(want.held))
	case !avail.Equal(bal.Sub(held)) || avail.IsNegative():
		c.failf("%s: available %s with balance %s and held %s", id, got.Available, got.Balance, got.Held)
	case got.Currency != stormCurrency || got.OwnerExternalID != want.seed.OwnerExternalID || got.Status != adminapi.AccountOpen:
		c.failf("%s: currency %s owner %s status %s", id, got.Currency, got.OwnerExternalID, got.Status)
	}
}

// readHolds reads one payout's holds and compares them with the model.
func (lc *ledgerCheck) readHolds(id string) {
	cctx, cancel := context.WithTimeout(lc.ctx, adminCallTimeout)
	defer cancel()
	hs, err := lc.adm.holdsOf(cctx, id)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if err != nil {
		lc.holds.Checked++
		lc.holds.failf("payout %s: %v", id, err)
		return
	}
	lc.compareHolds(id, hs)
}

// compareHolds checks a payout's holds against the model: exactly one, in
// the state of the storm's last action, of its amount on its account, with
// the references answered. lc.mu must be held.
func (lc *ledgerCheck) compareHolds(id string, hs []adminapi.Hold) {
	c := &lc.holds
	want := lc.m.payouts[id]
	c.Checked++
	if len(hs) != 1 {
		c.failf("payout %s: %d holds, want 1", id, len(hs))
		return
	}
	h := hs[0]
	amt, err := h.Amount.Decimal()
	switch {
	case h.Status != want.final:
		c.failf("payout %s: hold %s, want %s", id, h.Status, want.final)
	case err != nil || !amt.Equal(decimal.New(want.amount, -decimalPlaces)) || h.AccountID != want.account || h.Currency != stormCurrency:
		c.failf("payout %s: hold of %s %s on %s, want %s on %s", id, h.Amount, h.Currency, h.AccountID, centsString(want.amount), want.account)
	case want.hold != "" && h.HoldReference != want.hold:
		c.failf("payout %s: holdReference %s, answered %s", id, h.HoldReference, want.hold)
	case want.final == "captured" && (h.CaptureReference == "" || want.capture != "" && h.CaptureReference != want.capture):
		c.failf("payout %s: captureReference %q, answered %q", id, h.CaptureReference, want.capture)
	case want.final == "released" && (h.ReleaseReference == "" || want.release != "" && h.ReleaseReference != want.release):
		c.failf("payout %s: releaseReference %q, answered %q", id, h.ReleaseReference, want.release)
	case want.final == "captured" && h.ReleaseReference != "" || want.final == "released" && h.CaptureReference != "":
		c.failf("payout %s: both captured and released", id)
	}
}

// listTimeout bounds the listing of a run's holds (a page is 100 holds).
const listTimeout = 15 * time.Minute

// listRunHolds lists the holds placed since (newest first, until an older
// one) and keeps those of the run's payouts. A listing that fails is
// returned with its error: the caller then reads each payout alone.
func listRunHolds(ctx context.Context, adm *adminClient, m *model, since time.Time) (map[string][]adminapi.Hold, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	out := map[string][]adminapi.Hold{}
	for h, err := range adm.Holds.ListIter(ctx, &adminapi.HoldListOptions{Limit: 100}) {
		if err != nil {
			return out, err
		}
		if h.PlacedAt.Before(since) {
			break
		}
		if _, ok := m.payouts[h.PayoutID]; ok {
			out[h.PayoutID] = append(out[h.PayoutID], *h)
		}
	}
	return out, nil
}
