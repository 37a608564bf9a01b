package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks"
)

// Check is one invariant or consistency check of a run.
type Check struct {
	Name    string   `json:"name"`
	OK      bool     `json:"ok"`
	Checked int      `json:"checked"`
	Failed  int      `json:"failed"`
	Detail  []string `json:"detail,omitempty"`
}

func (c *Check) failf(format string, args ...any) {
	c.Failed++
	if len(c.Detail) < maxListed {
		c.Detail = append(c.Detail, fmt.Sprintf(format, args...))
	}
}

// payoutExpect is what the storm leaves of one payout.
type payoutExpect struct {
	account string
	amount  decimal.Decimal
	final   string // held, captured, released
}

// expectation is the ledger state the storm implies, derived from the plan
// alone: funding − captured + credited (each requestID once) per account,
// the holds left held, and each payout's last state.
type expectation struct {
	balance map[string]decimal.Decimal
	held    map[string]decimal.Decimal
	payouts map[string]payoutExpect
	order   []string // payoutIDs in plan order
}

func amountOf(svc map[string]any) (decimal.Decimal, error) {
	m, _ := svc["amount"].(map[string]any)
	v, _ := m["value"].(string)
	return decimal.NewFromString(v)
}

func expect(p Plan) (expectation, error) {
	e := expectation{balance: map[string]decimal.Decimal{}, held: map[string]decimal.Decimal{}, payouts: map[string]payoutExpect{}}
	bySource, byDest := map[string]string{}, map[string]string{}
	for _, a := range p.Header.Accounts {
		f, err := decimal.NewFromString(a.Funding)
		if err != nil {
			return e, fmt.Errorf("account %s: funding %q: %w", a.AccountID, a.Funding, err)
		}
		e.balance[a.AccountID] = f
		e.held[a.AccountID] = decimal.Zero
		bySource[a.SourceToken], byDest[a.DestinationToken] = a.AccountID, a.AccountID
	}
	final := map[string]string{}
	credited := map[string]bool{}
	for _, r := range p.Requests {
		switch r.Endpoint {
		case callbacks.Capture:
			final[r.HoldOf] = "captured"
		case callbacks.Release:
			final[r.HoldOf] = "released"
		}
	}
	for _, r := range p.Requests {
		if r.SecondOf != 0 {
			continue
		}
		switch r.Endpoint {
		case callbacks.Authorize:
			acct, ok := bySource[str(r.Service, "fundingSource")]
			amt, err := amountOf(r.Service)
			if !ok || err != nil {
				return e, fmt.Errorf("seq %d: authorize from an unseeded source or without an amount", r.Seq)
			}
			id := str(r.Service, "payoutID")
			pe := payoutExpect{account: acct, amount: amt, final: final[id]}
			if r.LeaveHeld || pe.final == "" {
				pe.final = "held"
				e.held[acct] = e.held[acct].Add(amt)
			} else if pe.final == "captured" {
				e.balance[acct] = e.balance[acct].Sub(amt)
			}
			e.payouts[id] = pe
			e.order = append(e.order, id)
		case callbacks.CreditAccount:
			acct, ok := byDest[str(r.Service, "fundingDestination")]
			amt, err := amountOf(r.Service)
			if !ok || err != nil {
				return e, fmt.Errorf("seq %d: credit to an unseeded destination or without an amount", r.Seq)
			}
			if rq := str(r.Service, "requestID"); !credited[rq] {
				credited[rq] = true
				e.balance[acct] = e.balance[acct].Add(amt)
			}
		}
	}
	return e, nil
}

// checkLedger reads every seeded account and every payout's holds through
// the admin API and compares them with what the storm implies and with
// what the callbacks answered.
func checkLedger(ctx context.Context, adm *adminClient, p Plan, x *runner, conc int) ([]Check, error) {
	e, err := expect(p)
	if err != nil {
		return nil, err
	}
	accounts := Check{Name: "accounts: balance = funded − captured + credited (each requestID once); held = holds left held; available = balance − held ≥ 0"}
	holdsCheck := Check{Name: "holds: one per payout, in the state of the storm's last action, with the references answered"}
	var mu sync.Mutex
	jobs := make(chan func(), conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for j := range jobs {
				j()
			}
		})
	}
	for _, a := range p.Header.Accounts {
		jobs <- func() {
			got, _, err := adm.Accounts.Get(ctx, a.AccountID)
			mu.Lock()
			defer mu.Unlock()
			accounts.Checked++
			if err != nil {
				accounts.failf("%s: %v", a.AccountID, err)
				return
			}
			bal, err1 := got.Balance.Decimal()
			held, err2 := got.Held.Decimal()
			avail, err3 := got.Available.Decimal()
			switch {
			case err1 != nil || err2 != nil || err3 != nil:
				accounts.failf("%s: amounts not decimal: %+v", a.AccountID, got)
			case !bal.Equal(e.balance[a.AccountID]):
				accounts.failf("%s: balance %s, want %s", a.AccountID, got.Balance, e.balance[a.AccountID].StringFixed(decimalPlaces))
			case !held.Equal(e.held[a.AccountID]):
				accounts.failf("%s: held %s, want %s", a.AccountID, got.Held, e.held[a.AccountID].StringFixed(decimalPlaces))
			case !avail.Equal(bal.Sub(held)) || avail.IsNegative():
				accounts.failf("%s: available %s with balance %s and held %s", a.AccountID, got.Available, got.Balance, got.Held)
			case got.Currency != Currency || got.OwnerExternalID != a.OwnerExternalID || got.Status != "open":
				accounts.failf("%s: currency %s owner %s status %s", a.AccountID, got.Currency, got.OwnerExternalID, got.Status)
			}
		}
	}
	x.mu.Lock()
	answered := map[string][3]string{} // payoutID → hold, capture, release reference answered
	for _, r := range p.Requests {
		svc, ok := x.finals[r.Seq]
		if !ok || r.SecondOf != 0 {
			continue
		}
		switch r.Endpoint {
		case callbacks.Authorize:
			v := answered[str(r.Service, "payoutID")]
			v[0] = str(svc, "holdReference")
			answered[str(r.Service, "payoutID")] = v
		case callbacks.Capture:
			v := answered[r.HoldOf]
			v[1] = str(svc, "captureReference")
			answered[r.HoldOf] = v
		case callbacks.Release:
			v := answered[r.HoldOf]
			v[2] = str(svc, "releaseReference")
			answered[r.HoldOf] = v
		}
	}
	x.mu.Unlock()
	for _, id := range e.order {
		want := e.payouts[id]
		ans := answered[id]
		jobs <- func() {
			hs, err := adm.holdsOf(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			holdsCheck.Checked++
			if err != nil {
				holdsCheck.failf("payout %s: %v", id, err)
				return
			}
			if len(hs) != 1 {
				holdsCheck.failf("payout %s: %d holds, want 1", id, len(hs))
				return
			}
			h := hs[0]
			amt, err := h.Amount.Decimal()
			switch {
			case h.Status != want.final:
				holdsCheck.failf("payout %s: hold %s, want %s", id, h.Status, want.final)
			case err != nil || !amt.Equal(want.amount) || h.AccountID != want.account || h.Currency != Currency:
				holdsCheck.failf("payout %s: hold of %s %s on %s, want %s on %s", id, h.Amount, h.Currency, h.AccountID, want.amount.StringFixed(decimalPlaces), want.account)
			case ans[0] != "" && h.HoldReference != ans[0]:
				holdsCheck.failf("payout %s: holdReference %s, answered %s", id, h.HoldReference, ans[0])
			case want.final == "captured" && (h.CaptureReference == "" || ans[1] != "" && h.CaptureReference != ans[1]):
				holdsCheck.failf("payout %s: captureReference %q, answered %q", id, h.CaptureReference, ans[1])
			case want.final == "released" && (h.ReleaseReference == "" || ans[2] != "" && h.ReleaseReference != ans[2]):
				holdsCheck.failf("payout %s: releaseReference %q, answered %q", id, h.ReleaseReference, ans[2])
			case want.final == "captured" && h.ReleaseReference != "" || want.final == "released" && h.CaptureReference != "":
				holdsCheck.failf("payout %s: both captured and released", id)
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	accounts.OK, holdsCheck.OK = accounts.Failed == 0, holdsCheck.Failed == 0
	slices.Sort(accounts.Detail)
	slices.Sort(holdsCheck.Detail)
	return []Check{accounts, holdsCheck}, nil
}
