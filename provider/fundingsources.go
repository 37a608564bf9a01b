package provider

import (
	"context"
	"time"
)

// FundingSourcesService registers and updates participants' funding sources.
type FundingSourcesService service

// Funding types.
const (
	FundingCard        = "card"
	FundingBankAccount = "bank_account"
)

// FundingSource is a card or bank account registered on a participant.
type FundingSource struct {
	FundingSourceID  string     `json:"fundingSourceID"`
	FundingType      string     `json:"fundingType,omitempty"`
	ProviderSourceID string     `json:"providerSourceID,omitempty"`
	DisplayName      string     `json:"displayName,omitempty"`
	Last4            string     `json:"last4,omitempty"`
	CreatedOn        time.Time  `json:"createdOn,omitzero"`
	UpdatedOn        time.Time  `json:"updatedOn,omitzero"`
	DisabledOn       *time.Time `json:"disabledOn,omitempty"`
}

// FundingSourceCreateRequest registers a funding source. The service is
// idempotent on (participant, FundingType, ProviderSourceID): a resend
// returns the existing ID and reactivates a removed source.
type FundingSourceCreateRequest struct {
	ProviderSourceID string `json:"providerSourceID"`
	DisplayName      string `json:"displayName"`
	FundingType      string `json:"fundingType"`
	Last4            string `json:"last4,omitempty"`
}

// FundingSourceUpdate changes the display fields; nil leaves one unchanged.
// ProviderSourceID and FundingType are immutable.
type FundingSourceUpdate struct {
	DisplayName *string `json:"displayName,omitempty"`
	Last4       *string `json:"last4,omitempty"`
}

// Create registers a funding source on a participant and returns it with
// its FundingSourceID (the only field the spec's 201 carries).
func (s *FundingSourcesService) Create(ctx context.Context, participant string, body *FundingSourceCreateRequest, opts ...RequestOption) (*FundingSource, *Response, error) {
	return s.send(ctx, "POST", participant, "", body, opts)
}

// Get reads a funding source; another provider's and a missing one are both
// ErrNotFound.
func (s *FundingSourcesService) Get(ctx context.Context, participant, fundingSourceID string, opts ...RequestOption) (*FundingSource, *Response, error) {
	return s.send(ctx, "GET", participant, fundingSourceID, nil, opts)
}

// Update changes a funding source's display name or last four digits.
func (s *FundingSourcesService) Update(ctx context.Context, participant, fundingSourceID string, body *FundingSourceUpdate, opts ...RequestOption) (*FundingSource, *Response, error) {
	return s.send(ctx, "PATCH", participant, fundingSourceID, body, opts)
}

func (s *FundingSourcesService) send(ctx context.Context, method, participant, id string, body any, opts []RequestOption) (*FundingSource, *Response, error) {
	seg := []string{"participants", participant, "funding-sources"}
	if id != "" {
		seg = append(seg, id)
	}
	path, err := s.client.providerPath(seg...)
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest(method, path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	fs := new(FundingSource)
	resp, err := s.client.do(ctx, req, wrapped("fundingSource", fs))
	if err != nil {
		return nil, resp, err
	}
	return fs, resp, nil
}
