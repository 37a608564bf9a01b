package loadtest

import (
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
)

// The measured window of a run with --duration: no request is started
// after start + duration (the deadline). What is in flight then finishes:
// its retries, and the resending of what was given up (runner.resolve), so
// that every request sent has a known outcome; that drain is timed and
// reported apart. The requests of the round not started by the deadline
// are withdrawn from the model (model.withdraw): the checks hold the ledger
// to what was sent.

// setDeadline makes the runner stop starting requests at deadline.
func (x *runner) setDeadline(deadline time.Time) {
	x.deadline = deadline
	x.stop = make(chan struct{})
	time.AfterFunc(time.Until(deadline), func() { close(x.stop) })
}

// stopped reports whether the deadline has passed.
func (x *runner) stopped() bool {
	select {
	case <-x.stop:
		return true
	default:
		return false
	}
}

// withdraw records reqs as never sent: they leave the model.
func (x *runner) withdraw(reqs []request) {
	for _, r := range reqs {
		x.model.withdraw(r)
	}
	x.unsent.Add(int64(len(reqs)))
	x.done.Add(int64(len(reqs)))
}

// withdraw undoes what add folded in for r, a request never sent: an
// authorize's payout leaves the model (with the funds it held or
// captured); a capture or release not sent leaves its payout held; a
// credit not sent leaves its account uncredited; a second credit not sent
// is no longer an expected duplicate finding.
func (m *model) withdraw(r request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case r.Endpoint == claims.CreditAccount && r.SecondOf != 0:
		delete(m.secondCredits, str(r.Service, "requestID"))
	case r.SecondOf != 0:
	case r.Endpoint == claims.Authorize:
		id := str(r.Service, "payoutID")
		p := m.payouts[id]
		if p == nil {
			return
		}
		m.unhold(p)
		delete(m.payouts, id)
		for i, o := range m.order {
			if o == id {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
	case r.Endpoint == claims.Capture || r.Endpoint == claims.Release:
		if p := m.payouts[r.HoldOf]; p != nil && p.final != "held" {
			m.unhold(p)
			p.final = "held"
			m.accounts[p.account].held += p.amount
		}
	case r.Endpoint == claims.CreditAccount:
		rq := str(r.Service, "requestID")
		amt, err := amountOf(r.Service)
		c, cerr := cents(amt)
		if a, ok := m.destOf[str(r.Service, "fundingDestination")]; ok && m.credited[rq] && err == nil && cerr == nil {
			m.accounts[a].balance -= c
			delete(m.credited, rq)
		}
	}
}

// unhold takes p's effect off its account: the hold it left held, or the
// amount it captured. m.mu must be held.
func (m *model) unhold(p *payoutModel) {
	switch p.final {
	case "held":
		m.accounts[p.account].held -= p.amount
	case "captured":
		m.accounts[p.account].balance += p.amount
	}
}
