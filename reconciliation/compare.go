package reconciliation

import (
	"context"
	"fmt"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
)

// discrepancy is a finding of the comparison with the service, with what a
// fix needs to know.
type discrepancy struct {
	finding      Finding
	hold         candidate // zero for provider_unreachable
	payoutStatus string
}

// pageSize is the payments list page the comparison asks for (the API's
// largest).
const pageSize = 100

// compare looks up each candidate's payout in its sender's payments list,
// reading every sender's list once. cands is ordered by owner.
func (r *Reconciler) compare(ctx context.Context, cands []candidate) ([]discrepancy, error) {
	var out []discrepancy
	for i := 0; i < len(cands); {
		j := i
		for j < len(cands) && cands[j].Owner == cands[i].Owner {
			j++
		}
		group, owner := cands[i:j], cands[i].Owner
		i = j
		statuses, err := r.payoutStatuses(ctx, owner, group)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.log.Warn("reconciliation: payments list not read", "participant", owner, "err", err)
			out = append(out, discrepancy{finding: newFinding(KindProviderUnreachable, owner,
				fmt.Sprintf("payments list not read (holds not compared: %d): %v", len(group), err))})
			continue
		}
		for _, c := range group {
			st, ok := statuses[c.PayoutID]
			if !ok {
				continue // not listed: nothing to compare
			}
			if kind, detail := classify(c, st); kind != "" {
				out = append(out, discrepancy{finding: newFinding(kind, c.HoldReference, detail), hold: c, payoutStatus: st})
			}
		}
	}
	return out, nil
}

// payoutStatuses reads owner's payments list until every payout of group is
// seen or the list ends, and returns the status of each payout seen.
func (r *Reconciler) payoutStatuses(ctx context.Context, owner string, group []candidate) (map[string]string, error) {
	want := make(map[string]bool, len(group))
	for _, c := range group {
		want[c.PayoutID] = true
	}
	got := make(map[string]string, len(group))
	for p, err := range r.cfg.Provider.Payments.ListIter(ctx, owner, &provider.ListOptions{Limit: pageSize}) {
		if err != nil {
			return nil, err
		}
		if p.Direction == "received" || !want[p.ID] {
			continue // a payment to the participant is never its payout
		}
		got[p.ID] = p.Status
		if len(got) == len(want) {
			break
		}
	}
	return got, nil
}

// classify returns the finding, if any, for a hold in its status whose
// payout is payoutStatus at the service.
func classify(c candidate, payoutStatus string) (kind, detail string) {
	what := fmt.Sprintf("hold of %s %s on account %s", ledger.FormatAmount(c.Currency, c.Amount), c.Currency, c.AccountID)
	switch c.Status {
	case holds.StatusHeld:
		switch payoutStatus {
		case "completed":
			return KindMissedCapture, fmt.Sprintf("payout %s is completed at the service; %s is still held", c.PayoutID, what)
		case "cancelled", "expired", "denied", "failed":
			// Not payout_failed: a failed claim keeps the hold (spec).
			return KindMissedRelease, fmt.Sprintf("payout %s is %s at the service; %s is still held", c.PayoutID, payoutStatus, what)
		}
	case holds.StatusReleased:
		if payoutStatus == "completed" {
			return KindCaptureReleaseConflict, fmt.Sprintf("payout %s is completed at the service; %s was released", c.PayoutID, what)
		}
	}
	return "", ""
}
