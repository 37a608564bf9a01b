package reconciliation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
)

// discrepancy is a finding of the comparison with the service, with what a
// fix needs to know.
type discrepancy struct {
	finding      Finding
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
// for payment the service completed credited?). complete is false when a
// list could not be read.
func (r *Reconciler) compare(ctx context.Context, snap snapshot) (out []discrepancy, complete bool, err error) {
	bySender := map[string][]candidate{}
	for _, c := range snap.candidates {
		bySender[c.Owner] = append(bySender[c.Owner], c)
	}
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
	complete = true
	creditsSince := r.now().Add(-r.cfg.CreditLookback)
	for _, owner := range owners {
		group := bySender[owner]
		credited, recipient := snap.recipients[owner]
		seen, err := r.payments(ctx, owner, group, recipient, creditsSince)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			complete = false
			r.log.Warn("reconciliation: payments list not read", "participant", owner, "err", err)
			out = append(out, discrepancy{finding: newFinding(KindProviderUnreachable, owner,
				fmt.Sprintf("payments list not read (holds not compared: %d): %v", len(group), err))})
			continue
		}
		for _, c := range group {
			st, ok := seen.payouts[c.PayoutID]
			if !ok {
				continue // not listed: nothing to compare
			}
			if kind, detail := classify(c, st); kind != "" {
				out = append(out, discrepancy{finding: newFinding(kind, c.HoldReference, detail), hold: c, payoutStatus: st})
			}
		}
		for _, p := range seen.requests {
			if !credited[p.ID] {
				out = append(out, discrepancy{finding: newFinding(KindMissingCredit, p.ID, fmt.Sprintf(
					"request for payment %s of %s %s to participant %s completed at the service on %s; no credit of it here",
					p.ID, p.Amount.Value.String(), p.Amount.Currency.Code, owner, p.CreatedOn.UTC().Format(time.RFC3339)))})
			}
		}
	}
	return out, complete, nil
}

// listed is what one participant's payments list showed: the status of
// each candidate payout, and the completed requests for payment received.
type listed struct {
	payouts  map[string]string
	requests []*provider.Payment
}

// payments reads owner's payments list: until every payout of group is
// seen, or, for a recipient, to the end (completed requests since
// creditsSince are kept).
func (r *Reconciler) payments(ctx context.Context, owner string, group []candidate, recipient bool, creditsSince time.Time) (listed, error) {
	want := make(map[string]bool, len(group))
	for _, c := range group {
		want[c.PayoutID] = true
	}
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
		// The list is newest first: done once every payout is seen and,
		// for a recipient, the list is past the credit lookback.
		if len(got.payouts) == len(want) && (!recipient || p.CreatedOn.Before(creditsSince)) {
			break
		}
	}
	return got, nil
}

// classify returns the finding, if any, for a hold in its status whose
// payout is payoutStatus at the service.
func classify(c candidate, payoutStatus string) (kind, detail string) {
	what := fmt.Sprintf("hold of %s %s on account %s", ledger.FormatAmount(c.Currency, c.Amount), c.Currency, c.AccountID)
	ended := payoutStatus == "cancelled" || payoutStatus == "expired" || payoutStatus == "denied" || payoutStatus == "failed"
	switch c.Status {
	case holds.StatusHeld:
		switch {
		case payoutStatus == statusCompleted:
			return KindMissedCapture, fmt.Sprintf("payout %s is completed at the service; %s is still held", c.PayoutID, what)
		case ended:
			// Not payout_failed: a failed claim keeps the hold (spec).
			return KindMissedRelease, fmt.Sprintf("payout %s is %s at the service; %s is still held", c.PayoutID, payoutStatus, what)
		}
	case holds.StatusReleased:
		if payoutStatus == statusCompleted {
			return KindCaptureReleaseConflict, fmt.Sprintf("payout %s is completed at the service; %s was released", c.PayoutID, what)
		}
	case holds.StatusCaptured:
		if ended {
			return KindCaptureCancelConflict, fmt.Sprintf("payout %s is %s at the service; %s was captured: the sender was debited for a payout that did not happen",
				c.PayoutID, payoutStatus, what)
		}
	}
	return "", ""
}
