package providertest

import (
	"errors"
	"net/http"
	"slices"
	"time"
)

// SeedPayout records a payout sent by the participant named by
// p.SenderExternalID (it must be registered with providerID). Empty PayoutID,
// Status and CreatedOn default to a fresh ID, authorized and now.
func (s *Service) SeedPayout(providerID string, p Payout) (Payout, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Payout{}, err
	}
	if ps.byExternal[p.SenderExternalID] == nil {
		return Payout{}, errNoParticipant
	}
	if p.PayoutID == "" {
		p.PayoutID = s.nextID("pay")
	}
	if p.Status == "" {
		p.Status = PayoutAuthorized
	}
	if p.CreatedOn.IsZero() {
		p.CreatedOn = s.Now()
	}
	if _, dup := ps.payouts[p.PayoutID]; dup {
		return Payout{}, errors.New("providertest: payout exists")
	}
	ps.payouts[p.PayoutID] = &p
	ps.sentBy[p.SenderExternalID] = append(ps.sentBy[p.SenderExternalID], &p)
	delete(ps.listings, ps.byExternal[p.SenderExternalID].ParticipantID)
	return p, nil
}

// Payout returns a payout as the fake knows it now.
func (s *Service) Payout(providerID, payoutID string) (Payout, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Payout{}, err
	}
	p, ok := ps.payouts[payoutID]
	if !ok {
		return Payout{}, errors.New("providertest: unknown payout")
	}
	return *p, nil
}

// SetPayoutStatus moves a seeded payout to status (no rule is applied).
func (s *Service) SetPayoutStatus(providerID, payoutID, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	p, ok := ps.payouts[payoutID]
	if !ok {
		return errors.New("providertest: unknown payout")
	}
	p.Status = status
	return nil
}

// SeedReview puts a seeded payout into manual review: a pending review,
// created now.
func (s *Service) SeedReview(providerID, payoutID, reason string) (Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Review{}, err
	}
	p, ok := ps.payouts[payoutID]
	if !ok {
		return Review{}, errors.New("providertest: unknown payout")
	}
	rv := &Review{ReviewID: s.nextID("rev"), Status: ReviewPending, CreatedOn: s.Now(), Reason: reason,
		RiskAssessmentID: s.nextID("risk"), Payout: PayoutSummary{PayoutID: p.PayoutID}}
	ps.reviews = append(ps.reviews, rv)
	return ps.reviewView(rv), nil
}

// Review returns a review with its current payout summary.
func (s *Service) Review(providerID, reviewID string) (Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Review{}, err
	}
	rv := ps.review(reviewID)
	if rv == nil {
		return Review{}, errors.New("providertest: unknown review")
	}
	return ps.reviewView(rv), nil
}

// Releases returns the release callbacks the service would have sent, oldest
// first.
func (s *Service) Releases() []Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Release(nil), s.releases...)
}

// SeedPayment adds an item to a participant's payments list (for requests for
// payment and received payments; sent payouts are listed from SeedPayout).
func (s *Service) SeedPayment(providerID, ref string, p Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	pt := ps.lookup(ref)
	if pt == nil {
		return errNoParticipant
	}
	if p.CreatedOn.IsZero() {
		p.CreatedOn = s.Now()
	}
	ps.payments[pt.ParticipantID] = append(ps.payments[pt.ParticipantID], p)
	delete(ps.listings, pt.ParticipantID)
	return nil
}

func (ps *providerState) review(id string) *Review {
	for _, rv := range ps.reviews {
		if rv.ReviewID == id {
			return rv
		}
	}
	return nil
}

// reviewView fills in the payout summary as of now.
func (ps *providerState) reviewView(rv *Review) Review {
	out := *rv
	if p := ps.payouts[rv.Payout.PayoutID]; p != nil {
		out.Payout = PayoutSummary{PayoutID: p.PayoutID, Amount: p.Amount, RecipientName: p.RecipientName, Status: p.Status}
	}
	return out
}

func (s *Service) listReviews(w http.ResponseWriter, r *http.Request, pid string) {
	status := r.URL.Query().Get("status")
	switch status {
	case "":
		status = ReviewPending
	case ReviewPending, ReviewApproved, ReviewRejected:
	default:
		invalid(w, r, "status must be pending, approved or rejected")
		return
	}
	off, lim, ok := pageParams(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	var items []Review
	for _, rv := range slices.Backward(ps.reviews) { // newest first
		if rv.Status == status {
			items = append(items, ps.reviewView(rv))
		}
	}
	s.mu.Unlock()
	page, more := pageOf(items, off, lim)
	writeJSON(w, http.StatusOK, reviewsPage{page, more})
}

func (s *Service) getReview(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	ps, _ := s.state(pid)
	rv := ps.review(r.PathValue("reviewID"))
	var body reviewDetailBody
	if rv != nil {
		body.Review = reviewDetail{Review: ps.reviewView(rv), Payout: *ps.payouts[rv.Payout.PayoutID]}
	}
	s.mu.Unlock()
	if rv == nil {
		notFound(w, r, "review")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Service) resolveReview(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		Resolution string `json:"resolution"`
		Notes      string `json:"notes"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Resolution != ReviewApproved && req.Resolution != ReviewRejected {
		var v validation
		v.add("/resolution", "must be approved or rejected")
		v.write(w, r, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	rv := ps.review(r.PathValue("reviewID"))
	if rv == nil {
		s.mu.Unlock()
		notFound(w, r, "review")
		return
	}
	if rv.Status != ReviewPending {
		s.mu.Unlock()
		problem(w, r, http.StatusConflict, "already-resolved", "Review already resolved",
			"the review was resolved "+rv.Status)
		return
	}
	now := s.Now()
	rv.Status, rv.ResolvedOn, rv.Notes = req.Resolution, &now, req.Notes
	var rel *Release
	if req.Resolution == ReviewRejected {
		p := ps.payouts[rv.Payout.PayoutID]
		pending := false
		for _, o := range ps.reviews {
			pending = pending || (o.Payout.PayoutID == p.PayoutID && o.Status == ReviewPending)
		}
		if !pending && (p.Status == PayoutAuthorized || p.Status == PayoutAccepted) {
			p.Status = PayoutCancelled
			rel = &Release{ProviderID: pid, PayoutID: p.PayoutID, Reason: "review_rejected", At: now}
			s.releases = append(s.releases, *rel)
		}
	}
	out := ps.reviewView(rv)
	hook := s.cfg.onRelease
	s.mu.Unlock()
	if rel != nil && hook != nil {
		hook(*rel)
	}
	// Success body not shown by the spec: the fake answers 200 {review}.
	writeJSON(w, http.StatusOK, reviewBody{out})
}

func (s *Service) listPayments(w http.ResponseWriter, r *http.Request, pid string) {
	off, lim, ok := pageParams(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	var page []Payment
	end, total := 0, 0
	if p != nil {
		all := ps.listing(p)
		total = len(all)
		off = min(off, total)
		end = min(off+lim, total)
		page = make([]Payment, 0, end-off)
		for _, it := range all[off:end] {
			page = append(page, it.payment())
		}
	}
	s.mu.Unlock()
	if p == nil {
		notFound(w, r, "participant")
		return
	}
	writeJSON(w, http.StatusOK, paymentsPage{page, pageAt(end, total)})
}

// listed is an item of a payments list: a seeded payment, or a payout the
// participant sent (read at each page, so that its status is current).
type listed struct {
	seeded *Payment
	payout *Payout
}

func (l listed) payment() Payment {
	if l.seeded != nil {
		return *l.seeded
	}
	po := l.payout
	return Payment{ID: po.PayoutID, Type: "payout", Direction: "sent", Status: po.Status, Amount: po.Amount,
		Counterparty: Counterparty{DisplayName: po.RecipientName, PhoneNumber: po.RecipientPhone},
		Memo:         po.Memo, CreatedOn: po.CreatedOn}
}

func (l listed) key() (time.Time, string) {
	if l.seeded != nil {
		return l.seeded.CreatedOn, l.seeded.ID
	}
	return l.payout.CreatedOn, l.payout.PayoutID
}

// listing returns p's payments list, newest first, then by ID descending;
// callers hold s.mu. It is sorted once per change of the list (SeedPayout
// and SeedPayment drop it).
func (ps *providerState) listing(p *participant) []listed {
	if l, ok := ps.listings[p.ParticipantID]; ok {
		return l
	}
	seeded := ps.payments[p.ParticipantID]
	l := make([]listed, 0, len(seeded)+len(ps.sentBy[p.ExternalID]))
	for i := range seeded {
		l = append(l, listed{seeded: &seeded[i]})
	}
	for _, po := range ps.sentBy[p.ExternalID] {
		l = append(l, listed{payout: po})
	}
	slices.SortStableFunc(l, func(a, b listed) int {
		at, aid := a.key()
		bt, bid := b.key()
		if c := bt.Compare(at); c != 0 {
			return c
		}
		return cmpString(bid, aid)
	})
	ps.listings[p.ParticipantID] = l
	return l
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
