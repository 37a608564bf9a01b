package provider

import (
	"context"
	"iter"
	"time"
)

// PaymentsService lists a participant's payments.
type PaymentsService service

// Counterparty of a payment.
type Counterparty struct {
	DisplayName string `json:"displayName,omitempty"`
	PhoneNumber string `json:"phoneNumber,omitempty"`
}

// Payment is an item of a participant's payments list: a payout or a
// request for payment.
type Payment struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Direction    string       `json:"direction"` // sent or received
	Status       string       `json:"status"`
	Amount       Money        `json:"amount"`
	Counterparty Counterparty `json:"counterparty"`
	Memo         string       `json:"memo,omitempty"`
	CreatedOn    time.Time    `json:"createdOn"`
}

// List returns one page of a participant's payments, newest first.
func (s *PaymentsService) List(ctx context.Context, participant string, opts *ListOptions, ro ...RequestOption) ([]*Payment, *Response, error) {
	path, err := s.client.providerPath("participants", participant, "payments")
	if err != nil {
		return nil, nil, err
	}
	return list[Payment](ctx, s.client, path, "payments", nil, opts, ro)
}

// ListIter iterates over all of a participant's payments.
func (s *PaymentsService) ListIter(ctx context.Context, participant string, opts *ListOptions, ro ...RequestOption) iter.Seq2[*Payment, error] {
	return iterate(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*Payment, *Response, error) {
		return s.List(ctx, participant, o, ro...)
	})
}
