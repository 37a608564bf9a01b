package provider

import (
	"context"
	"fmt"
)

// TokensService mints sender tokens.
type TokensService service

// Client types of a sender token.
const (
	ClientWeb     = "web"     // a browser flow built on the API
	ClientDevice  = "device"  // the mobile SDK
	ClientService = "service" // server-initiated, no SDK
)

// TokenRequest mints a token for the participant ExternalID with the API key.
type TokenRequest struct {
	ExternalID string `json:"externalID"`
	// ClientType is web (the server's default when empty), device or service.
	ClientType string `json:"clientType,omitempty"`
}

// SenderToken is a short-lived token scoped to one participant. There is no
// refresh token: mint a new one before ExpiresIn runs out.
type SenderToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// String redacts the token.
func (t SenderToken) String() string {
	return fmt.Sprintf("SenderToken{type=%s expires_in=%d}", t.TokenType, t.ExpiresIn)
}

// Create mints a sender token with the API key (HTTP Basic; the key needs
// the transfers.write scope). 401, 403 and 404 come back bodiless as *Error.
// It is not retried: the endpoint takes no idempotency key.
func (s *TokensService) Create(ctx context.Context, body *TokenRequest, opts ...RequestOption) (*SenderToken, *Response, error) {
	req, err := s.client.newRequest("POST", "provider-participant-token", body, opts)
	if err != nil {
		return nil, nil, err
	}
	return s.mint(ctx, req)
}

// CreateForLogin mints a token with a participant login instead of the API
// key: HTTP Basic with the login's credentials and an empty body; the
// service resolves the participant from the login.
func (s *TokensService) CreateForLogin(ctx context.Context, username, password string, opts ...RequestOption) (*SenderToken, *Response, error) {
	req, err := s.client.newRequest("POST", "provider-participant-token", nil, opts)
	if err != nil {
		return nil, nil, err
	}
	req.user, req.pass = &username, &password
	return s.mint(ctx, req)
}

func (s *TokensService) mint(ctx context.Context, req *request) (*SenderToken, *Response, error) {
	t := new(SenderToken)
	resp, err := s.client.do(ctx, req, into(t))
	if err != nil {
		return nil, resp, err
	}
	return t, resp, nil
}
