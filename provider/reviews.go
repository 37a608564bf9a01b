package provider

import (
	"context"
	"iter"
	"net/url"
	"time"
)

// ReviewsService works the manual review queue. Nothing pushes new reviews:
// poll List.
type ReviewsService service

// Review statuses and resolutions.
const (
	ReviewPending  = "pending"
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
)

// Payout statuses.
const (
	PayoutInitiated    = "initiated"
	PayoutAuthorized   = "authorized"
	PayoutAccepted     = "accepted"
	PayoutClaiming     = "claiming"
	PayoutCompleted    = "completed"
	PayoutFailed       = "failed"
	PayoutPayoutFailed = "payout_failed"
	PayoutCancelled    = "cancelled"
	PayoutExpired      = "expired"
	PayoutDenied       = "denied"
)

// Review is a manual review of a held payout.
type Review struct {
	ReviewID         string     `json:"reviewID"`
	Status           string     `json:"status"`
	CreatedOn        time.Time  `json:"createdOn"`
	ResolvedOn       *time.Time `json:"resolvedOn,omitempty"`
	Reason           string     `json:"reason,omitempty"`
	RiskAssessmentID string     `json:"riskAssessmentID,omitempty"`
	Payout           Payout     `json:"payout"`
}

// Payout is the payout under review: the summary fields in lists; Get may
// fill more (the spec does not show the full payout's body).
type Payout struct {
	PayoutID         string    `json:"payoutID"`
	Amount           Money     `json:"amount"`
	RecipientName    string    `json:"recipientName,omitempty"`
	Status           string    `json:"status"`
	SenderExternalID string    `json:"senderExternalID,omitempty"`
	FundingSource    string    `json:"fundingSource,omitempty"`
	Memo             string    `json:"memo,omitempty"`
	CreatedOn        time.Time `json:"createdOn,omitzero"`
}

// ReviewListOptions filters the review list.
type ReviewListOptions struct {
	// Status is pending (the server's default when empty), approved or
	// rejected.
	Status string
	ListOptions
}

// ReviewResolution resolves a pending review.
type ReviewResolution struct {
	Resolution string `json:"resolution"` // approved or rejected
	Notes      string `json:"notes,omitempty"`
}

// List returns one page of reviews, newest first.
func (s *ReviewsService) List(ctx context.Context, opts *ReviewListOptions, ro ...RequestOption) ([]*Review, *Response, error) {
	path, err := s.client.providerPath("reviews")
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	var lo *ListOptions
	if opts != nil {
		if opts.Status != "" {
			q.Set("status", opts.Status)
		}
		lo = &opts.ListOptions
	}
	return list[Review](ctx, s.client, path, "reviews", q, lo, ro)
}

// ListIter iterates over every review of the status, newest first.
func (s *ReviewsService) ListIter(ctx context.Context, opts *ReviewListOptions, ro ...RequestOption) iter.Seq2[*Review, error] {
	o := ReviewListOptions{}
	if opts != nil {
		o = *opts
	}
	return iterate(ctx, &o.ListOptions, func(ctx context.Context, lo *ListOptions) ([]*Review, *Response, error) {
		return s.List(ctx, &ReviewListOptions{Status: o.Status, ListOptions: *lo}, ro...)
	})
}

// Get reads a review with its payout.
func (s *ReviewsService) Get(ctx context.Context, reviewID string, opts ...RequestOption) (*Review, *Response, error) {
	path, err := s.client.providerPath("reviews", reviewID)
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("GET", path, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	r := new(Review)
	resp, err := s.client.do(ctx, req, wrapped("review", r))
	if err != nil {
		return nil, resp, err
	}
	return r, resp, nil
}

// Resolve approves or rejects a pending review. A resolved review answers
// 409 (ErrConflict); another provider's review 404. Rejecting the last
// pending review of an authorized or accepted payout cancels it and the
// service sends the release callback. The returned review is what the
// service answered (the spec does not show the success body); at least its
// ID and new status are set.
func (s *ReviewsService) Resolve(ctx context.Context, reviewID string, body *ReviewResolution, opts ...RequestOption) (*Review, *Response, error) {
	path, err := s.client.providerPath("reviews", reviewID, "resolutions")
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("POST", path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	r := new(Review)
	resp, err := s.client.do(ctx, req, wrapped("review", r))
	if err != nil {
		return nil, resp, err
	}
	if r.ReviewID == "" {
		r.ReviewID = reviewID
	}
	if r.Status == "" {
		r.Status = body.Resolution
	}
	return r, resp, nil
}
