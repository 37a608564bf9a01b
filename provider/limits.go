package provider

import (
	"context"
	"time"
)

// LimitsService manages participant limit overrides and reads the provider's
// default policy. Resolution, per the spec: an override beats the
// participant's groups, a group beats the provider default, and the platform
// maximum clamps every ceiling.
type LimitsService service

// Override is the latest version of a participant limit override.
type Override struct {
	Limits
	// ExpiresOn nil means permanent.
	ExpiresOn  *time.Time `json:"expiresOn"`
	Reason     string     `json:"reason,omitempty"`
	Reference  string     `json:"reference,omitempty"`
	VersionID  string     `json:"versionID"`
	CreatedOn  time.Time  `json:"createdOn"`
	DisabledOn *time.Time `json:"disabledOn,omitempty"`
	Currency   string     `json:"currency"`
}

// OverrideUpdate creates or updates an override: absent fields stay, Null
// clears a dimension to inherit (or makes ExpiresOn permanent), Value sets.
// A support override carries Reason and Reference and must expire within 24
// hours.
type OverrideUpdate struct {
	LimitsUpdate
	ExpiresOn Field[time.Time] `json:"expiresOn,omitempty"`
	Reason    string           `json:"reason,omitempty"`
	Reference string           `json:"reference,omitempty"`
	// ExpectedVersionID is the VersionID last read; omit it on the first
	// write.
	ExpectedVersionID string `json:"expectedVersionID,omitempty"`
}

// Policy is the provider's default limit policy.
type Policy struct {
	Limits
	VersionID string    `json:"versionID"`
	CreatedOn time.Time `json:"createdOn"`
	Currency  string    `json:"currency"`
}

// PutOverride creates or updates the override of a participant
// (participantID or externalID).
func (s *LimitsService) PutOverride(ctx context.Context, participant string, body *OverrideUpdate, opts ...RequestOption) (*Override, *Response, error) {
	path, err := s.client.providerPath("participants", participant, "limits")
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("PUT", path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	o := new(Override)
	resp, err := s.client.do(ctx, req, wrapped("override", o))
	if err != nil {
		return nil, resp, err
	}
	return o, resp, nil
}

// DeleteOverride removes a participant's override; the participant falls
// back to its groups and the provider default.
func (s *LimitsService) DeleteOverride(ctx context.Context, participant string, opts ...RequestOption) (*Response, error) {
	path, err := s.client.providerPath("participants", participant, "limits")
	if err != nil {
		return nil, err
	}
	req, err := s.client.newRequest("DELETE", path, nil, opts)
	if err != nil {
		return nil, err
	}
	return s.client.do(ctx, req, nil)
}

// GetPolicy reads the provider's default limit policy.
func (s *LimitsService) GetPolicy(ctx context.Context, opts ...RequestOption) (*Policy, *Response, error) {
	path, err := s.client.providerPath("limits")
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("GET", path, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	p := new(Policy)
	resp, err := s.client.do(ctx, req, wrapped("policy", p))
	if err != nil {
		return nil, resp, err
	}
	return p, resp, nil
}
