package reconciliation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
)

// discrepancy is a finding of the comparison with the service, with what a
// fix needs to know.
type discrepancy struct {
	finding      ledger.Finding
	hold         candidate // zero for provider_unreachable and missing_credit
	payoutStatus string
}

// pageSize is the payments list page the comparison asks for (the API's
// largest).
const pageSize = 100

// Payment types and statuses of the payments list the comparison reads.
const (
	paymentTypeRequest = "request"
	directionReceived  = "received"
	statusCompleted    = "completed"
)

// compare reads each participant's payments list once: the senders of the
// candidate holds (is each hold where its payout says it should be?) and
// the recipients (owners of destination instruments: was every request
// for payment the service completed credited?). Up to
// Config.ProviderConcurrency lists are read at a time; the discrepancies
// come out in the participants' order whatever the order of the reads.
// complete is false when a list could not be read.
func (r *Reconciler) compare(ctx context.Context, snap snapshot) (out []discrepancy, complete bool, err error) {
	bySender := groupByOwner(snap.candidates)
	owners := make([]string, 0, len(bySender)+len(snap.recipients))
	for o := range bySender {
		owners = append(owners, o)
	}
	for o := range snap.recipients {
		if _, ok := bySender[o]; !ok {
			owners = append(owners, o)
		}
	}
	slices.Sort(owners)
	creditsSince := r.now().Add(-r.cfg.CreditLookback)
	found := make([][]discrepancy, len(owners))
	unread := make([]bool, len(owners))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(r.cfg.ProviderConcurrency, len(owners)) {
		wg.Go(func() {
			for i := range next {
				credited, recipient := snap.recipients[owners[i]]
				found[i], unread[i] = r.compareOne(ctx, owners[i], bySender[owners[i]], credited, recipient, creditsSince)
			}
		})
	}
feed:
	for i := range owners {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	complete = true
	for i := range owners {
		out = append(out, found[i]...)
		complete = complete && !unread[i]
	}
	if err := r.describe(ctx, out); err != nil {
		return nil, false, err
	}
	return out, complete, nil
}

// groupByOwner groups the candidates by owner, without copying the runs
// of one owner (the snapshot orders them by owner).
func groupByOwner(cs []candidate) map[string][]candidate {
	by := map[string][]candidate{}
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Owner == cs[i].Owner {
			j++
		}
		if by[cs[i].Owner] == nil {
			by[cs[i].Owner] = cs[i:j:j]
		} else {
			by[cs[i].Owner] = append(by[cs[i].Owner], cs[i:j]...)
		}
		i = j
	}
	return by
}

// compareOne reads owner's payments list and returns the discrepancies of
// its candidate holds (group) and, for a recipient, of the requests for
// payment it was paid; unread is true when the list could not be read
// (then the one discrepancy is provider_unreachable).
func (r *Reconciler) compareOne(ctx context.Context, owner string, group []candidate, credited map[string]bool,
	recipient bool, creditsSince time.Time) (out []discrepancy, unread bool) {
	seen, err := r.payments(ctx, owner, group, recipient, creditsSince)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true // the run ends with ctx's error
		}
		r.log.Warn("reconciliation: payments list not read", "participant", owner, "err", err)
		return []discrepancy{{finding: newFinding(KindProviderUnreachable, owner,
			fmt.Sprintf("payments list not read (holds not compared: %d): %v", len(group), err))}}, true
	}
	for _, c := range group {
		st, ok := seen.payouts[c.PayoutID]
		if !ok {
			continue // not listed: nothing to compare
		}
		if kind := classify(c.Status, st); kind != "" {
			out = append(out, discrepancy{finding: newFinding(kind, c.HoldReference, ""), hold: c, payoutStatus: st})
		}
	}
	for _, p := range seen.requests {
		if !credited[p.ID] {
			out = append(out, discrepancy{finding: newFinding(KindMissingCredit, p.ID, fmt.Sprintf(
				"request for payment %s of %s %s to participant %s completed at the service on %s; no credit of it here",
				p.ID, p.Amount.Value.String(), p.Amount.Currency.Code, owner, p.CreatedOn.UTC().Format(time.RFC3339)))})
		}
	}
	return out, false
}

// listed is what one participant's payments list showed: the status of
// each candidate payout, and the completed requests for payment received.
type listed struct {
	payouts  map[string]string
	requests []*provider.Payment
}

// ListSlack is how much older than its hold a payout may be listed: a
// payout is created when its authorize is sent, so a sender's list is read
// no further back than this before the oldest candidate hold (a payout the
// list does not show by then is not listed: nothing to compare), instead
// of to the end of the sender's history.
const ListSlack = 24 * time.Hour

// payments reads owner's payments list, newest first: until every payout
// of group is seen or the list is ListSlack past the oldest hold of group,
// and, for a recipient, past creditsSince (completed requests since
// creditsSince are kept).
func (r *Reconciler) payments(ctx context.Context, owner string, group []candidate, recipient bool, creditsSince time.Time) (listed, error) {
	want := make(map[string]bool, len(group))
	var payoutsSince time.Time
	for i, c := range group {
		want[c.PayoutID] = true
		if i == 0 || c.PlacedAt.Before(payoutsSince) {
			payoutsSince = c.PlacedAt
		}
	}
	payoutsSince = payoutsSince.Add(-ListSlack)
	got := listed{payouts: make(map[string]string, len(group))}
	for p, err := range r.cfg.Provider.Payments.ListIter(ctx, owner, &provider.ListOptions{Limit: pageSize}) {
		if err != nil {
			return listed{}, err
		}
		switch {
		case p.Type == paymentTypeRequest && p.Direction == directionReceived:
			if recipient && p.Status == statusCompleted && !p.CreatedOn.Before(creditsSince) {
				got.requests = append(got.requests, p)
			}
		case p.Direction != directionReceived && want[p.ID]:
			// A payment to the participant is never its payout.
			got.payouts[p.ID] = p.Status
		}
		sent := len(got.payouts) == len(want) || p.CreatedOn.Before(payoutsSince)
		received := !recipient || p.CreatedOn.Before(creditsSince)
		if sent && received {
			break
		}
	}
	return got, nil
}

// classify returns the kind of finding, if any, for a hold in status whose
// payout is payoutStatus at the service.
func classify(status, payoutStatus string) string {
	ended := payoutStatus == "cancelled" || payoutStatus == "expired" || payoutStatus == "denied" || payoutStatus == "failed"
	switch {
	case status == holds.StatusHeld && payoutStatus == statusCompleted:
		return KindMissedCapture
	case status == holds.StatusHeld && ended:
		// Not payout_failed: a failed claim keeps the hold (spec).
		return KindMissedRelease
	case status == holds.StatusReleased && payoutStatus == statusCompleted:
		return KindCaptureReleaseConflict
	case status == holds.StatusCaptured && ended:
		return KindCaptureCancelConflict
	}
	return ""
}

// describe writes the detail of each discrepancy about a hold, reading
// those holds (and only those) again: their amounts and accounts never
// change.
func (r *Reconciler) describe(ctx context.Context, ds []discrepancy) error {
	var refs []string
	for _, d := range ds {
		if d.hold.HoldReference != "" {
			refs = append(refs, d.hold.HoldReference)
		}
	}
	hs, err := r.cfg.DB.HoldsByReference(ctx, refs)
	if err != nil {
		return fmt.Errorf("reconciliation: read the holds found: %w", err)
	}
	for i := range ds {
		if d := &ds[i]; d.hold.HoldReference != "" {
			d.finding.Detail = detail(d.finding.Kind, d.hold, hs[d.hold.HoldReference], d.payoutStatus)
		}
	}
	return nil
}

// detail says what a discrepancy of kind is about: the payout, its status,
// and the hold h (zero when it could not be read).
func detail(kind string, c candidate, h holds.Hold, payoutStatus string) string {
	what := "hold " + c.HoldReference
	if h.HoldReference != "" {
		what = fmt.Sprintf("hold of %s %s on account %s", ledger.FormatAmount(h.Currency, h.Amount), h.Currency, h.AccountID)
	}
	switch kind {
	case KindMissedCapture:
		return fmt.Sprintf("payout %s is completed at the service; %s is still held", c.PayoutID, what)
	case KindMissedRelease:
		return fmt.Sprintf("payout %s is %s at the service; %s is still held", c.PayoutID, payoutStatus, what)
	case KindCaptureReleaseConflict:
		return fmt.Sprintf("payout %s is completed at the service; %s was released", c.PayoutID, what)
	}
	return fmt.Sprintf("payout %s is %s at the service; %s was captured: the sender was debited for a payout that did not happen",
		c.PayoutID, payoutStatus, what)
}
