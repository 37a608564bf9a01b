package reconciliation_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// pagingStore is the bundle's database, counting the candidates of each
// page a full run reads, and running before (once) when the first page is
// asked for: between the run's snapshot and its pages.
type pagingStore struct {
	reconciliation.Store
	mu     sync.Mutex
	pages  []int
	before func()
}

func (s *pagingStore) CandidatesPage(ctx context.Context, p ledger.CandidatesPage) ([]ledger.Candidate, error) {
	s.mu.Lock()
	if s.before != nil {
		s.before()
		s.before = nil
	}
	s.mu.Unlock()
	out, err := s.Store.CandidatesPage(ctx, p)
	s.mu.Lock()
	s.pages = append(s.pages, len(out))
	s.mu.Unlock()
	return out, err
}

// pagedRun runs a full reconciliation comparing page customers at a time
// through s.
func (b *bundle) pagedRun(t *testing.T, s *pagingStore, page int) reconciliation.Report {
	t.Helper()
	r := b.reconciler(t, func(c *reconciliation.Config) { c.DB = s })
	reconciliation.SetPage(r, page)
	rep, err := r.RunWith(context.Background(), reconciliation.RunOptions{Full: true})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

// described are a report's findings as kind, severity, subject and
// detail, in the report's order.
func described(rep reconciliation.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s %s %s: %s", f.Kind, f.Severity, f.Subject, f.Detail))
	}
	return out
}

// TestFullRunInPagesFindsWhatOnePageFinds: a full run comparing its
// customers two at a time, its candidates read a page at a time, reports
// the same findings in the same order as one reading them all in one
// page: discrepancies of every kind spread over several senders, stale
// held holds (read with the snapshot, not with the pages) among them, a
// customer the service does not know, and a recipient.
func TestFullRunInPagesFindsWhatOnePageFinds(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	now := b.clock()
	var stale []string
	for i := range 7 {
		s := b.sender(t, fmt.Sprintf("page%d-", i), "1000.00")
		for j, c := range []struct{ status, end string }{
			{providertest.PayoutCompleted, ""}, {providertest.PayoutCancelled, ""}, {providertest.PayoutAuthorized, ""},
			{providertest.PayoutCompleted, "released"}, {providertest.PayoutCancelled, "captured"},
			{providertest.PayoutCompleted, "captured"}, {"", ""},
		} {
			if (i+j)%3 == 0 {
				continue // not every sender has every case
			}
			b.endedHold(t, s, c.end, c.status)
		}
		if i%2 == 0 {
			// Older than the payout lookback: compared only as a candidate
			// (its sender's list is read back to its placing).
			at := now.Add(-reconciliation.DefaultPayoutLookback - 24*time.Hour)
			h := b.hold(t, s, "5.00", at)
			b.payout(t, s, h, providertest.PayoutCompleted, at)
			stale = append(stale, h.ref)
		}
		if i%3 == 0 {
			b.payout(t, s, hold{payoutID: storetest.Unique("pay-lost-"), amount: "3.00"}, providertest.PayoutAuthorized, time.Time{})
		}
	}
	storetest.Account(t, b.db, storetest.AccountOpts{Owner: storetest.Unique("unknown-"), Funds: "10.00",
		Source: storetest.Unique("card-")})
	storetest.Account(t, b.db, storetest.AccountOpts{Owner: storetest.Unique("recipient-"), Dest: storetest.Unique("dst-")})

	paged := &pagingStore{Store: b.db}
	inPages := b.pagedRun(t, paged, 2)
	whole := &pagingStore{Store: b.db}
	inOne := b.pagedRun(t, whole, 1000)
	if len(inOne.Findings) < 20 {
		t.Fatalf("one page: %d findings, want discrepancies of every kind:\n%v", len(inOne.Findings), described(inOne))
	}
	for _, ref := range stale {
		if !slices.ContainsFunc(findings(inPages, reconciliation.KindMissedCapture), func(f ledger.Finding) bool { return f.Subject == ref }) {
			t.Errorf("stale hold %s: no missed_capture", ref)
		}
	}
	if got, want := described(inPages), described(inOne); !slices.Equal(got, want) {
		t.Errorf("in pages of two customers:\n%v\nin one page:\n%v", got, want)
	}
	withCandidates := 0
	for _, n := range paged.pages {
		if n > 0 {
			withCandidates++
		}
	}
	if len(paged.pages) < 5 || withCandidates < 3 || len(whole.pages) != 1 {
		t.Errorf("candidates per page %v (one page: %v), want them spread over pages", paged.pages, whole.pages)
	}
}

// TestFullRunReadsItsPagesAsOfItsSnapshot: the candidates a full run reads
// a page at a time are the holds as its snapshot saw them: a hold placed
// after the snapshot, while the run reads its pages, is left to the next
// run, and one released meanwhile is compared as held.
func TestFullRunReadsItsPagesAsOfItsSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	var senders []sender
	for i := range 3 {
		senders = append(senders, b.sender(t, fmt.Sprintf("snap%d-", i), "100.00"))
	}
	s := senders[1]
	released := b.hold(t, s, "10.00", time.Time{})
	b.payout(t, s, released, providertest.PayoutCancelled, time.Time{})
	var placed hold
	st := &pagingStore{Store: b.db, before: func() {
		b.release(t, released)
		placed = b.hold(t, s, "7.00", time.Time{})
		b.payout(t, s, placed, providertest.PayoutCancelled, time.Time{})
	}}
	rep := b.pagedRun(t, st, 1)
	if len(st.pages) < 3 {
		t.Fatalf("pages %v, want one per customer", st.pages)
	}
	wantMap(t, kinds(rep), map[string]string{released.ref: "missed_release warning false"})

	next := b.pagedRun(t, &pagingStore{Store: b.db}, 1)
	wantMap(t, kinds(next), map[string]string{placed.ref: "missed_release warning false"})
}
