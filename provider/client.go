package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultVersion is the X-Service-Version a Client sends unless told
// otherwise.
const DefaultVersion = "v2026.10.00"

// DefaultUserAgent is the User-Agent a Client sends unless told otherwise.
const DefaultUserAgent = "provider-ledger-adapter/1 (+https://github.com/provider-ledger/adapter)"

// maxResponseBody bounds how much of an answer the client reads.
const maxResponseBody = 10 << 20

// ErrAnswerTooLarge is returned, wrapped (test with errors.Is), for an
// answer whose body exceeds 10 MiB: the body is refused whole rather than
// truncated, and the request is not retried.
var ErrAnswerTooLarge = errors.New("provider: answer larger than 10 MiB")

// readBody reads at most maxResponseBody bytes of r, and fails with
// ErrAnswerTooLarge when r holds more.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxResponseBody+1))
	if err != nil {
		return body, err
	}
	if len(body) > maxResponseBody {
		return nil, ErrAnswerTooLarge
	}
	return body, nil
}

// ErrNoProviderID is returned by provider-scoped methods of a Client built
// without WithProviderID.
var ErrNoProviderID = errors.New("provider: client has no provider ID (use WithProviderID)")

// Client calls the service's provider API. Build one with NewClient; it is
// safe for concurrent use. Each resource's endpoints hang off a service field.
type Client struct {
	baseURL    string // no trailing slash
	providerID string
	keyID      string
	keySecret  string
	version    string
	userAgent  string
	hc         *http.Client
	retry      RetryPolicy

	common service

	Participants   *ParticipantsService
	Tokens         *TokensService
	LimitGroups    *LimitGroupsService
	Limits         *LimitsService
	Reviews        *ReviewsService
	Payments       *PaymentsService
	FundingSources *FundingSourcesService
	SigningSecrets *SigningSecretsService
	Provider       *ProviderService
}

type service struct{ client *Client }

// Option configures a Client.
type Option func(*Client) error

// WithProviderID sets the provider account every {providerID} path names.
func WithProviderID(id string) Option {
	return func(c *Client) error { c.providerID = id; return nil }
}

// WithAPIKey sets the API key sent with HTTP Basic on every request.
func WithAPIKey(id, secret string) Option {
	return func(c *Client) error { c.keyID, c.keySecret = id, secret; return nil }
}

// WithVersion sets the X-Service-Version sent by default (DefaultVersion
// unless set; "" sends no header, letting the server apply its default).
func WithVersion(v string) Option { return func(c *Client) error { c.version = v; return nil } }

// WithHTTPClient sets the HTTP client (default: one with a 30s timeout).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("provider: nil http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) error { c.userAgent = ua; return nil } }

// WithRetryPolicy sets the retry policy (see RetryPolicy for the defaults).
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) error { c.retry = p; return nil } }

// NewClient returns a client of the provider API at baseURL, which may carry
// a path prefix (https://sandbox.example/api).
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("provider: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("provider: base URL %q must be an absolute http(s) URL", baseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	c := &Client{
		baseURL:   strings.TrimSuffix(u.String(), "/"),
		version:   DefaultVersion,
		userAgent: DefaultUserAgent,
		hc:        &http.Client{Timeout: 30 * time.Second},
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	c.retry = c.retry.withDefaults()
	c.common.client = c
	c.Participants = (*ParticipantsService)(&c.common)
	c.Tokens = (*TokensService)(&c.common)
	c.LimitGroups = (*LimitGroupsService)(&c.common)
	c.Limits = (*LimitsService)(&c.common)
	c.Reviews = (*ReviewsService)(&c.common)
	c.Payments = (*PaymentsService)(&c.common)
	c.FundingSources = (*FundingSourcesService)(&c.common)
	c.SigningSecrets = (*SigningSecretsService)(&c.common)
	c.Provider = (*ProviderService)(&c.common)
	return c, nil
}

// ProviderID is the provider account the client acts for.
func (c *Client) ProviderID() string { return c.providerID }

// Response wraps the HTTP response of a call (its body already read and
// closed) with what the API put around the payload.
type Response struct {
	*http.Response
	// NextCursor and HasMore are set on list calls.
	NextCursor string
	HasMore    bool
	// IdempotencyKey is the key the call sent (given or generated), so a
	// caller can retry the same logical request with it.
	IdempotencyKey string
	// Attempts is how many HTTP requests the call made.
	Attempts int
}

// RequestOption adjusts one call.
type RequestOption func(*requestConfig)

type requestConfig struct {
	version        *string
	idempotencyKey string
}

// WithRequestVersion sends v as X-Service-Version on this call ("" sends
// none).
func WithRequestVersion(v string) RequestOption {
	return func(rc *requestConfig) { rc.version = &v }
}

// WithIdempotencyKey sets the idempotency key of a call that takes one
// (participant registration, signing-secret creation); without it the client
// generates a UUID. Other calls ignore it.
func WithIdempotencyKey(k string) RequestOption {
	return func(rc *requestConfig) { rc.idempotencyKey = k }
}

func newRequestConfig(opts []RequestOption) requestConfig {
	var rc requestConfig
	for _, o := range opts {
		o(&rc)
	}
	return rc
}

// request is one logical call; do may send it several times.
type request struct {
	method string
	path   string // relative to the base URL, segments already escaped
	query  url.Values
	body   []byte // nil: no body
	header http.Header
	// idempotencyHeader names the header carrying rc.idempotencyKey, if the
	// endpoint takes one; such a write may be retried.
	idempotencyHeader string
	// keyMayBeIgnored marks a write whose idempotency key the server is not
	// known to honor (signing-secret creation before v2026.10.00): the key
	// is still sent, but the write is not retried.
	keyMayBeIgnored bool
	// user and pass override the API key (participant login).
	user, pass *string
	opts       requestConfig
}

func (c *Client) newRequest(method, path string, body any, opts []RequestOption) (*request, error) {
	r := &request{method: method, path: path, header: http.Header{}, opts: newRequestConfig(opts)}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("provider: encoding request: %w", err)
		}
		r.body = b
	}
	return r, nil
}

// providerPath joins escaped segments under providers/{providerID}.
func (c *Client) providerPath(segments ...string) (string, error) {
	if c.providerID == "" {
		return "", ErrNoProviderID
	}
	p := "providers/" + url.PathEscape(c.providerID)
	for _, s := range segments {
		p += "/" + url.PathEscape(s)
	}
	return p, nil
}

// retryable says whether sending r again cannot apply its effect twice.
func (r *request) retryable() bool {
	return r.method == http.MethodGet || r.method == http.MethodHead || r.idempotencyHeader != "" && !r.keyMayBeIgnored
}

// versionOf is the X-Service-Version r is sent with ("" for none).
func (c *Client) versionOf(r *request) string {
	if r.opts.version != nil {
		return *r.opts.version
	}
	return c.version
}

var versionRe = regexp.MustCompile(`^v[0-9]{4}\.[0-9]{2}\.[0-9]{2}$`)

// versionAtLeast reports whether v is a well-formed version (v2026.10.00)
// no older than minimum. "" (the server's default, not shown by the spec)
// and malformed versions are not known to be at least anything.
func versionAtLeast(v, minimum string) bool {
	return versionRe.MatchString(v) && v >= minimum
}

func (c *Client) build(ctx context.Context, r *request) (*http.Request, error) {
	u := c.baseURL + "/" + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if version := c.versionOf(r); version != "" {
		req.Header.Set("X-Service-Version", version)
	}
	if r.user != nil {
		req.SetBasicAuth(*r.user, *r.pass)
	} else if c.keyID != "" || c.keySecret != "" {
		req.SetBasicAuth(c.keyID, c.keySecret)
	}
	if r.idempotencyHeader != "" {
		req.Header.Set(r.idempotencyHeader, r.opts.idempotencyKey)
	}
	return req, nil
}

// do sends r, retrying where safe, and hands a 2xx body to decode (which
// may be nil). A non-2xx answer is returned as *Error.
func (c *Client) do(ctx context.Context, r *request, decode func([]byte) error) (*Response, error) {
	pol := c.retry
	for attempt := 1; ; attempt++ {
		req, err := c.build(ctx, r)
		if err != nil {
			return nil, err
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if r.retryable() && attempt < pol.MaxAttempts {
				if err := pol.Sleep(ctx, pol.backoff(attempt)); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		body, readErr := readBody(resp.Body)
		resp.Body.Close()
		out := &Response{Response: resp, Attempts: attempt}
		if r.idempotencyHeader != "" {
			out.IdempotencyKey = r.opts.idempotencyKey
		}
		if errors.Is(readErr, ErrAnswerTooLarge) {
			return out, readErr
		}
		if readErr != nil {
			if r.retryable() && attempt < pol.MaxAttempts && ctx.Err() == nil {
				if err := pol.Sleep(ctx, pol.backoff(attempt)); err != nil {
					return out, err
				}
				continue
			}
			return out, fmt.Errorf("provider: reading response: %w", readErr)
		}
		if apiErr := errorFromResponse(resp, body); apiErr != nil {
			if r.retryable() && attempt < pol.MaxAttempts && retryStatus(resp.StatusCode) {
				delay, ok := pol.delay(attempt, resp.Header.Get("Retry-After"))
				if ok {
					if err := pol.Sleep(ctx, delay); err != nil {
						return out, err
					}
					continue
				}
			}
			return out, apiErr
		}
		if decode != nil && len(bytes.TrimSpace(body)) > 0 {
			if err := decode(body); err != nil {
				return out, fmt.Errorf("provider: decoding %s %s: %w", r.method, r.path, err)
			}
		}
		return out, nil
	}
}

func retryStatus(code int) bool { return code == http.StatusTooManyRequests || code >= 500 }

// into decodes a JSON body into v.
func into(v any) func([]byte) error {
	return func(b []byte) error { return json.Unmarshal(b, v) }
}

// wrapped decodes a body that is either {key: v} or v itself; the spec nests
// some answers and leaves others "not shown".
func wrapped(key string, v any) func([]byte) error {
	return func(b []byte) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		if inner, ok := m[key]; ok && len(inner) > 0 && inner[0] == '{' {
			return json.Unmarshal(inner, v)
		}
		return json.Unmarshal(b, v)
	}
}

// RetryPolicy bounds the client's retries. A call is retried only when
// sending it again is safe (GET, or a write carrying an idempotency key), on
// 429, 5xx and transport errors, with full-jitter exponential backoff, or
// after the server's Retry-After when it gives one.
type RetryPolicy struct {
	// MaxAttempts counts every HTTP request of one call (default 4; 1 turns
	// retries off).
	MaxAttempts int
	// BaseDelay is the first backoff ceiling (default 200ms); it doubles per
	// attempt up to MaxDelay (default 5s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits out (default
	// 30s); a longer one ends the call with the error.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx ends (default: a timer). Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 200 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 5 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 30 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	return p
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is a full-jitter delay after the given attempt.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	ceil := p.BaseDelay << (attempt - 1)
	if ceil > p.MaxDelay || ceil <= 0 {
		ceil = p.MaxDelay
	}
	return rand.N(ceil) + 1
}

// delay picks the wait before the next attempt: the server's Retry-After
// (seconds or an HTTP date) when present, else backoff. ok is false when the
// server asks for a longer wait than MaxRetryAfter.
func (p RetryPolicy) delay(attempt int, retryAfter string) (time.Duration, bool) {
	if retryAfter == "" {
		return p.backoff(attempt), true
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && secs >= 0 {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(retryAfter); err == nil {
		d = max(time.Until(at), 0)
	} else {
		return p.backoff(attempt), true
	}
	return d, d <= p.MaxRetryAfter
}
