package providertest

// Conformance scenarios of payouts: Reviews and ParticipantPayments.

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// seedReview seeds a payout of ext in status with one pending review.
func (c *conformance) seedReview(t *testing.T, ext, status string) (payoutID, reviewID string) {
	t.Helper()
	payoutID, err := c.tg.Hooks.SeedPayout(ext, USD("42.00"), status)
	if err != nil {
		t.Fatal(err)
	}
	return payoutID, c.addReview(t, payoutID)
}

func (c *conformance) addReview(t *testing.T, payoutID string) string {
	t.Helper()
	if c.tg.Hooks.Advance != nil {
		c.tg.Hooks.Advance(time.Second)
	}
	reviewID, err := c.tg.Hooks.SeedReview(payoutID)
	if err != nil {
		t.Fatal(err)
	}
	return reviewID
}

func (c *conformance) resolve(t *testing.T, reviewID, resolution string) reply {
	t.Helper()
	return c.req(t, "POST", c.p("/reviews/%s/resolutions", reviewID),
		fmt.Sprintf(`{"resolution":%q,"notes":"checked"}`, resolution), nil)
}

func reviewIDs(t *testing.T, r reply) []string {
	t.Helper()
	expect(t, r, http.StatusOK)
	page := decode[reviewsAnswer](t, r)
	if page.Reviews == nil {
		t.Fatalf("no reviews list: %s", r.Body)
	}
	var ids []string
	for _, rv := range *page.Reviews {
		ids = append(ids, rv.ReviewID)
	}
	return ids
}

func (c *conformance) reviews(t *testing.T) {
	expectProblem(t, c.req(t, "GET", c.p("/reviews?status=escalated"), "", nil), http.StatusBadRequest)
	expectProblem(t, c.req(t, "GET", c.p("/reviews?limit=0"), "", nil), http.StatusBadRequest)
	need(t, c.tg.Hooks.SeedPayout != nil && c.tg.Hooks.SeedReview != nil, "SeedPayout and SeedReview")
	_, ext := c.active(t)
	_, older := c.seedReview(t, ext, PayoutAuthorized)
	_, newer := c.seedReview(t, ext, PayoutAccepted)

	t.Run("PendingNewestFirst", func(t *testing.T) {
		ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews"), "", nil))
		i, j := slices.Index(ids, newer), slices.Index(ids, older)
		if i < 0 || j < 0 || i > j {
			t.Fatalf("pending reviews %v: want %s before %s", ids, newer, older)
		}
		if !slices.Equal(ids, reviewIDs(t, c.req(t, "GET", c.p("/reviews?status=pending"), "", nil))) {
			t.Fatal("status defaults to pending")
		}
	})
	t.Run("GetCarriesPayout", func(t *testing.T) {
		r := c.req(t, "GET", c.p("/reviews/%s", older), "", nil)
		expect(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), `"payoutID"`) {
			t.Fatalf("no payout: %s", r.Body)
		}
		expect(t, c.req(t, "GET", c.p("/reviews/%s", "rev-missing-"+c.run), "", nil), http.StatusNotFound)
	})
	t.Run("ResolveOnceThenConflict", func(t *testing.T) {
		expectProblem(t, c.req(t, "POST", c.p("/reviews/%s/resolutions", older), `{"resolution":"maybe"}`, nil), http.StatusBadRequest)
		r := c.resolve(t, older, ReviewApproved)
		expect(t, r, http.StatusOK)
		expectProblem(t, c.resolve(t, older, ReviewRejected), http.StatusConflict)
		expectProblem(t, c.resolve(t, older, ReviewApproved), http.StatusConflict)
		if ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews?status=approved"), "", nil)); !slices.Contains(ids, older) {
			t.Fatalf("approved list %v lacks %s", ids, older)
		}
		if ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews"), "", nil)); slices.Contains(ids, older) {
			t.Fatalf("pending list %v still has %s", ids, older)
		}
	})
	t.Run("OtherProvidersReviewIsNotFound", func(t *testing.T) { c.otherProvidersReview(t, newer) })
	t.Run("RejectingLastPendingReviewCancels", func(t *testing.T) { c.rejectingLastReviewCancels(t, ext) })
	t.Run("RejectingWhileClaimingDoesNotCancel", func(t *testing.T) { c.rejectingWhileClaiming(t, ext) })
	t.Run("ApprovingLastReviewDoesNotCancel", func(t *testing.T) { c.approvingLastReview(t, ext) })
}

// otherProvidersReview checks that another provider can neither get,
// resolve nor list our review reviewID.
func (c *conformance) otherProvidersReview(t *testing.T, reviewID string) {
	need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
	other, id, secret, err := c.tg.Hooks.OtherProvider()
	if err != nil {
		t.Fatal(err)
	}
	auth := hdr{"Authorization": basic(id, secret)}
	expect(t, c.req(t, "GET", "/providers/"+other+"/reviews/"+reviewID, "", auth), http.StatusNotFound)
	expect(t, c.req(t, "POST", "/providers/"+other+"/reviews/"+reviewID+"/resolutions", `{"resolution":"approved"}`, auth), http.StatusNotFound)
	if ids := reviewIDs(t, c.req(t, "GET", "/providers/"+other+"/reviews", "", auth)); slices.Contains(ids, reviewID) {
		t.Fatal("another provider lists our review")
	}
}

// rejectingLastReviewCancels checks that rejecting a review of an accepted
// payout of ext cancels and releases it only when no other review is
// pending.
func (c *conformance) rejectingLastReviewCancels(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil && c.tg.Hooks.Released != nil, "PayoutStatus and Released")
	payout, first := c.seedReview(t, ext, PayoutAccepted)
	second := c.addReview(t, payout)
	expect(t, c.resolve(t, first, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutAccepted || c.tg.Hooks.Released(payout) {
		t.Fatalf("a review is still pending, yet payout is %s (released %v)", st, c.tg.Hooks.Released(payout))
	}
	expect(t, c.resolve(t, second, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutCancelled || !c.tg.Hooks.Released(payout) {
		t.Fatalf("payout %s after its last review was rejected (released %v)", st, c.tg.Hooks.Released(payout))
	}
}

// rejectingWhileClaiming checks that rejecting the review of a payout of
// ext being claimed neither cancels nor releases it.
func (c *conformance) rejectingWhileClaiming(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil && c.tg.Hooks.Released != nil, "PayoutStatus and Released")
	payout, rv := c.seedReview(t, ext, PayoutClaiming)
	expect(t, c.resolve(t, rv, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutClaiming || c.tg.Hooks.Released(payout) {
		t.Fatalf("payout %s (released %v)", st, c.tg.Hooks.Released(payout))
	}
}

// approvingLastReview checks that approving the last review of an
// authorized payout of ext leaves it authorized.
func (c *conformance) approvingLastReview(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil, "PayoutStatus")
	payout, rv := c.seedReview(t, ext, PayoutAuthorized)
	expect(t, c.resolve(t, rv, ReviewApproved), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutAuthorized {
		t.Fatalf("payout %s", st)
	}
}

func (c *conformance) payments(t *testing.T) {
	_, ext := c.active(t)
	path := c.p("/participants/%s/payments", url.PathEscape(ext))
	r := c.req(t, "GET", path, "", nil)
	if m := decode[paymentsAnswer](t, r); m.Payments == nil || len(*m.Payments) != 0 || m.HasMore == nil || *m.HasMore {
		t.Fatalf("fresh participant's payments: %s", r.Body)
	}
	expectProblem(t, c.req(t, "GET", path+"?limit=101", "", nil), http.StatusBadRequest)
	expect(t, c.req(t, "GET", c.p("/participants/%s/payments", c.externalID("nobody-")), "", nil), http.StatusNotFound)

	need(t, c.tg.Hooks.SeedPayout != nil, "SeedPayout")
	var want []string
	for range 3 {
		if c.tg.Hooks.Advance != nil {
			c.tg.Hooks.Advance(time.Second)
		}
		id, err := c.tg.Hooks.SeedPayout(ext, USD("5.00"), PayoutCompleted)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...) // newest first
	}
	var got []string
	cursor := ""
	for {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.req(t, "GET", path+q, "", nil)
		m := decode[paymentsAnswer](t, r)
		if m.Payments == nil {
			t.Fatalf("no payments list: %s", r.Body)
		}
		for _, p := range *m.Payments {
			got = append(got, p.ID)
			if p.Direction != "sent" || !isUSD(p.Amount, "5.00") || p.Status != PayoutCompleted {
				t.Fatalf("payment item %s in %s", p.ID, r.Body)
			}
		}
		if m.HasMore == nil || !*m.HasMore {
			break
		}
		cursor, _ = value(m.NextCursor)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("payments %v, want newest first %v", got, want)
	}
}
