package reconciliation

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
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
	hold         candidate // zero but for the kinds of classify
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

// compare reads the payments list of every customer this ledger knows
// (the owners of customer accounts, a page of them at a time, with the
// senders of the candidate holds and the recipients), each once: is every
// payout the service reports where its hold here says it should be, and
// every hold where its payout says (a held hold's list is read back to
// its placing), and was every request for payment the service completed
// credited? The owners are compared a page at a time (pages): up
// to Config.ProviderConcurrency lists of the page are read at a time,
// then the holds of every payout the page's lists show are read in one
// query. The discrepancies come out in the participants' order whatever
// the order of the reads. complete is false when a list could not be
// read. From a checkpoint (from), only the senders of the candidates
// (held, or placed or settled since) and the recipients credited since
// are read, their payouts back to ListSlack before the checkpoint (or
// further, to a held hold's placing).
func (r *Reconciler) compare(ctx context.Context, snap snapshot, from ledger.Checkpoint) (out []discrepancy, complete bool, err error) {
	b := bounds{payouts: r.now().Add(-r.cfg.PayoutLookback), credits: r.now().Add(-r.cfg.CreditLookback), snapshot: snap.at}
	if from.CheckpointID != "" {
		if at := from.TakenOn.Add(-ListSlack); at.After(b.payouts) {
			b.payouts = at
		}
	}
	complete = true
	for pg, err := range r.pages(ctx, snap, from) {
		if err != nil {
			return nil, false, err
		}
		found, pageComplete, err := r.comparePage(ctx, pg.owners, pg.bySender, snap.recipients, b)
		if err != nil {
			return nil, false, err
		}
		out = append(out, found...)
		complete = complete && pageComplete
	}
	return out, complete, nil
}

// comparePage compares one page of owners: their lists first (up to
// Config.ProviderConcurrency at a time), then the holds of every payout
// they show, in one query read after all of the page's lists.
func (r *Reconciler) comparePage(ctx context.Context, owners []string, bySender map[string][]candidate,
	recipients map[string]map[string]bool, b bounds) (out []discrepancy, complete bool, err error) {
	lists := make([]listed, len(owners))
	found := make([][]discrepancy, len(owners))
	unread := make([]bool, len(owners))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(r.cfg.ProviderConcurrency, len(owners)) {
		wg.Go(func() {
			for i := range next {
				_, recipient := recipients[owners[i]]
				lists[i], found[i], unread[i] = r.readList(ctx, owners[i], bySender[owners[i]], recipient, b)
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
	var ids []string
	for _, l := range lists {
		for _, p := range l.payouts {
			ids = append(ids, p.ID)
		}
	}
	hs, err := r.cfg.DB.HoldsByPayout(ctx, ids)
	if err != nil {
		return nil, false, fmt.Errorf("reconciliation: read the holds of the listed payouts: %w", err)
	}
	complete = true
	for i, owner := range owners {
		if unread[i] {
			complete = false
		} else {
			found[i] = listDiscrepancies(owner, bySender[owner], recipients[owner], lists[i], hs, b)
		}
		out = append(out, found[i]...)
	}
	return out, complete, nil
}

// customersPage is how many customers a run reads from the database at a
// time, and so how many owners it compares at a time (Reconciler.page).
const customersPage = 1000

// page is one page of owners to compare: in order, each once, with the
// candidate holds of each.
type page struct {
	owners   []string
	bySender map[string][]candidate
}

// pages returns the pages of owners a run compares, in order. A full run
// reads the customers a page (Reconciler.page of them) at a time and, for
// each, the candidates of the owners in its range (after the previous
// page's last customer, up to its own last), as of the snapshot
// (Store.CandidatesPage), so that it holds one page's candidates at a
// time: a page's owners are its customers and the senders and recipients
// in its range (an owner with a hold or a credit who is no customer is
// an oddity: such a page is larger). The held holds placed before the
// comparison's cutoff (stale holds: few, each a finding) came with the
// snapshot and join their owner's page. From a checkpoint, the snapshot
// read every candidate (held now, or placed or settled since: bounded by
// the activity since), and the owners are their senders and the
// recipients.
func (r *Reconciler) pages(ctx context.Context, snap snapshot, from ledger.Checkpoint) iter.Seq2[page, error] {
	return func(yield func(page, error) bool) {
		read := groupByOwner(snap.candidates) // with the snapshot
		if from.CheckpointID != "" {
			for owners := range slices.Chunk(activeOwners(read, snap.recipients), r.page) {
				if !yield(page{owners: owners, bySender: read}, nil) {
					return
				}
			}
			return
		}
		// The senders of the stale holds and the recipients, in order: each
		// page takes those of its range from the front.
		stale, recipients := slices.Sorted(maps.Keys(read)), slices.Sorted(maps.Keys(snap.recipients))
		for after, first := "", true; ; first = false {
			customers, err := r.cfg.DB.Customers(ctx, after, r.page)
			if err != nil {
				yield(page{}, fmt.Errorf("reconciliation: read the customers: %w", err))
				return
			}
			last := len(customers) < r.page
			through := ""
			if !last {
				through = customers[len(customers)-1]
			}
			inRange := func(o string) bool { return last || o <= through }
			cs, err := r.cfg.DB.CandidatesPage(ctx, ledger.CandidatesPage{Snapshot: snap.token, After: after, First: first,
				Through: through, Since: snap.comparedSince})
			if err != nil {
				yield(page{}, fmt.Errorf("reconciliation: read the candidates: %w", err))
				return
			}
			pg := page{owners: customers, bySender: groupByOwner(cs)}
			for o := range pg.bySender {
				pg.owners = append(pg.owners, o)
			}
			for ; len(stale) > 0 && inRange(stale[0]); stale = stale[1:] {
				o := stale[0]
				// Placed before the cutoff: before the page's own.
				pg.bySender[o] = append(slices.Clip(read[o]), pg.bySender[o]...)
				pg.owners = append(pg.owners, o)
			}
			for ; len(recipients) > 0 && inRange(recipients[0]); recipients = recipients[1:] {
				pg.owners = append(pg.owners, recipients[0])
			}
			slices.Sort(pg.owners)
			pg.owners = slices.Compact(pg.owners)
			if len(pg.owners) > 0 && !yield(pg, nil) {
				return
			}
			if last {
				return
			}
			after = through
		}
	}
}

// activeOwners returns, in order and each once, the senders of the
// candidates and the recipients.
func activeOwners(bySender map[string][]candidate, recipients map[string]map[string]bool) []string {
	owners := make([]string, 0, len(bySender)+len(recipients))
	for o := range bySender {
		owners = append(owners, o)
	}
	for o := range recipients {
		if _, ok := bySender[o]; !ok {
			owners = append(owners, o)
		}
	}
	slices.Sort(owners)
	return owners
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

// bounds are how far back a run reads the payments lists: a sender's
// payouts since payouts (or further, to a candidate hold's placing), a
// recipient's completed requests for payment since credits.
type bounds struct {
	payouts, credits time.Time
	// snapshot is when the snapshot of the candidates was taken.
	snapshot time.Time
}

// readList reads owner's payments list; unread is true when it could not
// be read (then the one discrepancy is provider_unreachable). A
// participant the service does not know (404) with no candidate hold and
// no destination has nothing to compare (an empty list, read).
func (r *Reconciler) readList(ctx context.Context, owner string, group []candidate, recipient bool,
	b bounds) (seen listed, out []discrepancy, unread bool) {
	seen, err := r.payments(ctx, owner, group, recipient, b)
	if err != nil {
		if ctx.Err() != nil {
			return listed{}, nil, true // the run ends with ctx's error
		}
		if errors.Is(err, provider.ErrNotFound) && len(group) == 0 && !recipient {
			return listed{}, nil, false
		}
		r.log.Warn("reconciliation: payments list not read", "participant", owner, "err", err)
		return listed{}, []discrepancy{{finding: newFinding(KindProviderUnreachable, owner,
			fmt.Sprintf("payments list not read (holds not compared: %d): %v", len(group), err))}}, true
	}
	return seen, nil, false
}

// listDiscrepancies returns the discrepancies of the payouts owner's list
// shows (and, through them, of its candidate holds, group; hs are the
// holds of the listed payouts, by payoutID, read after the list) and, for
// a recipient, of the requests for payment it was paid (credited: the
// requests credited here).
func listDiscrepancies(owner string, group []candidate, credited map[string]bool, seen listed,
	hs map[string]holds.Hold, b bounds) (out []discrepancy) {
	byPayout := make(map[string]candidate, len(group))
	for _, c := range group {
		byPayout[c.PayoutID] = c
	}
	for _, p := range seen.payouts {
		out = append(out, payoutDiscrepancies(owner, p, hs, byPayout, b.snapshot)...)
	}
	for _, p := range seen.requests {
		if !credited[p.ID] {
			out = append(out, discrepancy{finding: newFinding(KindMissingCredit, p.ID, fmt.Sprintf(
				"request for payment %s of %s %s to participant %s completed at the service on %s; no credit of it here",
				p.ID, p.Amount.Value.String(), p.Amount.Currency.Code, owner, p.CreatedOn.UTC().Format(time.RFC3339)))})
		}
	}
	return out
}

// payoutDiscrepancies compares payout p of owner's list with its hold
// here, if any (hs, by payoutID, read after the list). The hold's status
// compared is the snapshot's (candidates, by payoutID), read before the
// list, so that a callback landing while the list is read is no
// discrepancy; a hold that is no candidate is compared when it was placed
// before the snapshot (then it is settled, and a settled hold never
// changes), and left to the next run otherwise.
func payoutDiscrepancies(owner string, p *provider.Payment, hs map[string]holds.Hold, candidates map[string]candidate,
	snapshotAt time.Time) []discrepancy {
	amount := ledger.FormatAmount(p.Amount.Currency.Code, p.Amount.Value) + " " + p.Amount.Currency.Code
	h, ok := hs[p.ID]
	if !ok {
		kind := unheldKind(p.Status)
		if kind == "" {
			return nil
		}
		return []discrepancy{{finding: newFinding(kind, p.ID, fmt.Sprintf(
			"payout %s of %s from participant %s is %s at the service (created %s); no hold of it here",
			p.ID, amount, owner, p.Status, p.CreatedOn.UTC().Format(time.RFC3339)))}}
	}
	var out []discrepancy
	if !h.Amount.Equal(p.Amount.Value) || h.Currency != p.Amount.Currency.Code {
		out = append(out, discrepancy{finding: newFinding(KindPayoutAmountMismatch, p.ID, fmt.Sprintf(
			"payout %s is %s at the service for %s; its hold %s here is %s %s (%s)",
			p.ID, p.Status, amount, h.HoldReference, ledger.FormatAmount(h.Currency, h.Amount), h.Currency, h.Status))})
	}
	c, ok := candidates[p.ID]
	if !ok {
		if !h.PlacedAt.Before(snapshotAt) {
			return out
		}
		c = candidate{HoldReference: h.HoldReference, PayoutID: h.PayoutID, Owner: owner, Status: h.Status, PlacedAt: h.PlacedAt}
	}
	if c.Status == holds.StatusReleased && reserved(p.Status) {
		out = append(out, discrepancy{finding: newFinding(KindPayoutNotHeld, p.ID, fmt.Sprintf(
			"payout %s of %s from participant %s is %s at the service; its hold %s here was released",
			p.ID, amount, owner, p.Status, h.HoldReference))})
	}
	if kind := classify(c.Status, p.Status); kind != "" {
		out = append(out, discrepancy{finding: newFinding(kind, h.HoldReference, detail(kind, c, h, p.Status)), hold: c,
			payoutStatus: p.Status})
	}
	return out
}

// reserved reports whether a payout in status has money reserved for it
// at the service's word: a hold must be held here.
func reserved(status string) bool {
	switch status {
	case "authorized", "accepted", "claiming", "payout_failed":
		return true
	}
	return false
}

// unheldKind is the kind of finding for a payout in status with no hold
// here at all: "" when none is needed (initiated, or ended without money
// moving).
func unheldKind(status string) string {
	switch {
	case status == statusCompleted || status == "claiming":
		// A capture of an unknown hold is approved (spec): a claim pays
		// out money never debited here.
		return KindPayoutNotDebited
	case reserved(status):
		return KindPayoutNotHeld
	}
	return ""
}

// listed is what one participant's payments list showed: its payouts
// (sent), newest first, and the completed requests for payment received.
type listed struct {
	payouts  []*provider.Payment
	requests []*provider.Payment
}

// ListSlack is how much older than its hold a payout may be listed: a
// payout is created when its authorize is sent, so a sender's list is read
// back to this before the oldest candidate hold when that is older than
// the payout lookback.
const ListSlack = 24 * time.Hour

// payments reads owner's payments list, newest first, back to b.payouts
// (or ListSlack before the oldest hold of group, if older) and, for a
// recipient, back to b.credits (completed requests since b.credits are
// kept).
func (r *Reconciler) payments(ctx context.Context, owner string, group []candidate, recipient bool, b bounds) (listed, error) {
	payoutsSince := b.payouts
	for _, c := range group {
		if at := c.PlacedAt.Add(-ListSlack); at.Before(payoutsSince) {
			payoutsSince = at
		}
	}
	var got listed
	for p, err := range r.cfg.Provider.Payments.ListIter(ctx, owner, &provider.ListOptions{Limit: pageSize}) {
		if err != nil {
			return listed{}, err
		}
		switch {
		case p.Type == paymentTypeRequest && p.Direction == directionReceived:
			if recipient && p.Status == statusCompleted && !p.CreatedOn.Before(b.credits) {
				got.requests = append(got.requests, p)
			}
		case p.Type != paymentTypeRequest && p.Direction != directionReceived && !p.CreatedOn.Before(payoutsSince):
			// A payment to the participant is never its payout.
			got.payouts = append(got.payouts, p)
		}
		sent := p.CreatedOn.Before(payoutsSince)
		received := !recipient || p.CreatedOn.Before(b.credits)
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

// detail says what a discrepancy of kind is about: the payout, its status,
// and the hold h.
func detail(kind string, c candidate, h holds.Hold, payoutStatus string) string {
	what := fmt.Sprintf("hold of %s %s on account %s", ledger.FormatAmount(h.Currency, h.Amount), h.Currency, h.AccountID)
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
