package provider

import "context"

// ProviderService updates the provider's own record.
type ProviderService service

// ProviderRecord is the provider's record as the API shows it.
type ProviderRecord struct {
	// ShortName (2 to 12 ASCII letters and digits) starts the card statement
	// descriptor of payouts: short name, an asterisk, then a sender label.
	ShortName string `json:"shortName"`
}

// ProviderUpdateRequest updates the provider record; only ShortName exists.
type ProviderUpdateRequest struct {
	ShortName string `json:"shortName"`
}

// Update sets the provider's short name.
func (s *ProviderService) Update(ctx context.Context, body *ProviderUpdateRequest, opts ...RequestOption) (*ProviderRecord, *Response, error) {
	path, err := s.client.providerPath()
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("PATCH", path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	rec := new(ProviderRecord)
	resp, err := s.client.do(ctx, req, wrapped("provider", rec))
	if err != nil {
		return nil, resp, err
	}
	return rec, resp, nil
}
