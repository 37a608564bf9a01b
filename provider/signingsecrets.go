package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"time"

	"github.com/google/uuid"
)

// SigningSecretsService lists and creates the secrets that encrypt the
// ledger callbacks.
type SigningSecretsService service

// SigningSecret is a signing secret. Secret (Base64 of 32 bytes) is set only
// on the answer to Create: the service returns it once and never again.
type SigningSecret struct {
	SecretID  string     `json:"secretID"`
	CreatedOn time.Time  `json:"createdOn"`
	RevokedOn *time.Time `json:"revokedOn"`
	Secret    string     `json:"secret,omitempty"`
}

// Key decodes Secret into the 32-byte A256KW key.
func (s *SigningSecret) Key() ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(s.Secret)
	if err != nil {
		return nil, fmt.Errorf("provider: signing secret is not Base64: %w", err)
	}
	if len(k) != 32 {
		return nil, fmt.Errorf("provider: signing secret is %d bytes, want 32", len(k))
	}
	return k, nil
}

// List returns one page of active secrets (metadata only), newest first.
func (s *SigningSecretsService) List(ctx context.Context, opts *ListOptions, ro ...RequestOption) ([]*SigningSecret, *Response, error) {
	path, err := s.client.providerPath("signing-secrets")
	if err != nil {
		return nil, nil, err
	}
	return list[SigningSecret](ctx, s.client, path, "signingSecrets", nil, opts, ro)
}

// ListIter iterates over every active secret.
func (s *SigningSecretsService) ListIter(ctx context.Context, opts *ListOptions, ro ...RequestOption) iter.Seq2[*SigningSecret, error] {
	return iterate(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*SigningSecret, *Response, error) {
		return s.List(ctx, o, ro...)
	})
}

// NestedSecretVersion is the first version whose signing-secret create nests
// the secret under signingSecret and honors X-Idempotency-Key.
const NestedSecretVersion = "v2026.10.00"

// Create creates a signing secret and returns it with its plaintext. It
// sends X-Idempotency-Key (a fresh UUID unless WithIdempotencyKey gives one;
// Response.IdempotencyKey tells which). From v2026.10.00 the service honors
// the key, so the call is retried on transport errors, 429 and 5xx; with an
// older version, or none (the server's default is not shown), the key may be
// ignored and a retry could create a second secret, so the call is sent
// once. It decodes both bodies: {signingSecret} from v2026.10.00 and the
// bare secret before.
//
// A retry can reach the service after an earlier attempt already created the
// secret: the answer is then ErrIdempotencyKeyReused and the plaintext is
// lost; create another. ErrIdempotencyRequestInProgress means an earlier
// request with the key is still running.
func (s *SigningSecretsService) Create(ctx context.Context, opts ...RequestOption) (*SigningSecret, *Response, error) {
	path, err := s.client.providerPath("signing-secrets")
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("POST", path, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	req.idempotencyHeader = "X-Idempotency-Key"
	if req.opts.idempotencyKey == "" {
		req.opts.idempotencyKey = uuid.NewString()
	}
	req.keyMayBeIgnored = !versionAtLeast(s.client.versionOf(req), NestedSecretVersion)
	sec := new(SigningSecret)
	resp, err := s.client.do(ctx, req, wrapped("signingSecret", sec))
	if err != nil {
		return nil, resp, err
	}
	if sec.Secret == "" {
		return nil, resp, fmt.Errorf("provider: signing secret created (%s) but the answer carries no secret", sec.SecretID)
	}
	return sec, resp, nil
}
