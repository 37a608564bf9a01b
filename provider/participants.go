package provider

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// ParticipantsService registers participants and reads their status.
type ParticipantsService service

// Participant statuses.
const (
	StatusPending  = "pending"
	StatusActive   = "active"
	StatusDenied   = "denied"
	StatusDisabled = "disabled"
)

// Address is a participant's postal address; every field but AddressLine2 is
// required on registration.
type Address struct {
	AddressLine1    string `json:"addressLine1"`
	AddressLine2    string `json:"addressLine2,omitempty"`
	City            string `json:"city"`
	StateOrProvince string `json:"stateOrProvince"`
	PostalCode      string `json:"postalCode"`
	Country         string `json:"country"`
}

// ParticipantCreateRequest registers a participant.
type ParticipantCreateRequest struct {
	ExternalID   string   `json:"externalID"`
	GivenName    string   `json:"givenName"`
	FamilyName   string   `json:"familyName"`
	Address      Address  `json:"address"`
	PhoneNumbers []string `json:"phoneNumbers"`
}

// Participant is a participant as the service shows it. The spec shows only
// the identifier and status on read; other fields are filled when the
// service sends them.
type Participant struct {
	ParticipantID string    `json:"participantID"`
	ExternalID    string    `json:"externalID,omitempty"`
	Status        string    `json:"status,omitempty"`
	GivenName     string    `json:"givenName,omitempty"`
	FamilyName    string    `json:"familyName,omitempty"`
	CreatedOn     time.Time `json:"createdOn,omitzero"`
}

// Create registers a participant with an Idempotency-Key (a fresh UUID
// unless WithIdempotencyKey gives one; Response.IdempotencyKey tells which),
// so transport failures and 5xx are retried safely. A 409 is returned as
// *AlreadyRegisteredError (errors.Is(err, ErrAlreadyRegistered)).
func (s *ParticipantsService) Create(ctx context.Context, body *ParticipantCreateRequest, opts ...RequestOption) (*Participant, *Response, error) {
	path, err := s.client.providerPath("participants")
	if err != nil {
		return nil, nil, err
	}
	b := *body
	if b.PhoneNumbers == nil {
		b.PhoneNumbers = []string{}
	}
	req, err := s.client.newRequest("POST", path, &b, opts)
	if err != nil {
		return nil, nil, err
	}
	req.idempotencyHeader = "Idempotency-Key"
	if req.opts.idempotencyKey == "" {
		req.opts.idempotencyKey = uuid.NewString()
	}
	p := new(Participant)
	resp, err := s.client.do(ctx, req, wrapped("participant", p))
	if err != nil {
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.Status == 409 {
			return nil, resp, &AlreadyRegisteredError{ExternalID: body.ExternalID, Err: apiErr}
		}
		return nil, resp, err
	}
	if p.ExternalID == "" {
		p.ExternalID = body.ExternalID
	}
	return p, resp, nil
}

// Get reads a participant by participantID or externalID.
func (s *ParticipantsService) Get(ctx context.Context, participant string, opts ...RequestOption) (*Participant, *Response, error) {
	path, err := s.client.providerPath("participants", participant)
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("GET", path, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	p := new(Participant)
	resp, err := s.client.do(ctx, req, wrapped("participant", p))
	if err != nil {
		return nil, resp, err
	}
	return p, resp, nil
}

// Ensure registers the participant, or reads it when its externalID is
// already registered.
func (s *ParticipantsService) Ensure(ctx context.Context, body *ParticipantCreateRequest, opts ...RequestOption) (*Participant, *Response, error) {
	p, resp, err := s.Create(ctx, body, opts...)
	if errors.Is(err, ErrAlreadyRegistered) {
		return s.Get(ctx, body.ExternalID, opts...)
	}
	return p, resp, err
}

// DefaultAwaitInterval is the poll interval of Await when given none.
const DefaultAwaitInterval = time.Second

// Await polls the participant every interval (DefaultAwaitInterval when not
// positive) until the signup check has landed (status other than pending)
// or ctx ends.
func (s *ParticipantsService) Await(ctx context.Context, participant string, interval time.Duration, opts ...RequestOption) (*Participant, error) {
	if interval <= 0 {
		interval = DefaultAwaitInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p, _, err := s.Get(ctx, participant, opts...)
		if err != nil {
			return nil, err
		}
		if p.Status != StatusPending {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-t.C:
		}
	}
}
