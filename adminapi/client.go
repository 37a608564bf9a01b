package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// DefaultUserAgent is the User-Agent a Client sends unless told otherwise.
const DefaultUserAgent = "provider-ledger-adminapi/1"

// Client calls ledgerd's admin API. Build one with NewClient; it is safe for
// concurrent use. The routes hang off its service fields.
type Client struct {
	baseURL   *url.URL // ends with "/"
	token     string
	userAgent string
	hc        *http.Client

	common service

	Accounts       *AccountsService
	Instruments    *InstrumentsService
	Holds          *HoldsService
	Journal        *JournalService
	SigningSecrets *SigningSecretsService
	Reconciliation *ReconciliationService
	Tokens         *TokensService
	Audit          *AuditService
	Adjustments    *AdjustmentsService
}

type service struct{ client *Client }

// Option configures a Client.
type Option func(*Client) error

// WithToken sets the bearer token sent on every request (ledgerd's
// LEDGER_ADMIN_TOKEN); "" sends none.
func WithToken(token string) Option {
	return func(c *Client) error { c.token = token; return nil }
}

// WithHTTPClient sets the HTTP client. The default has no overall timeout
// (a reconciliation run may take minutes): bound calls with their context.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("adminapi: nil http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) error { c.userAgent = ua; return nil }
}

// NewClient returns a client of the admin API at baseURL, an absolute
// http(s) URL that may carry a path prefix (http://127.0.0.1:8081,
// https://ops.example/ledger/).
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("adminapi: base URL %q is not an absolute http(s) URL", baseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	c := &Client{baseURL: u, userAgent: DefaultUserAgent, hc: &http.Client{}}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	c.common.client = c
	c.Accounts = (*AccountsService)(&c.common)
	c.Instruments = (*InstrumentsService)(&c.common)
	c.Holds = (*HoldsService)(&c.common)
	c.Journal = (*JournalService)(&c.common)
	c.SigningSecrets = (*SigningSecretsService)(&c.common)
	c.Reconciliation = (*ReconciliationService)(&c.common)
	c.Tokens = (*TokensService)(&c.common)
	c.Audit = (*AuditService)(&c.common)
	c.Adjustments = (*AdjustmentsService)(&c.common)
	return c, nil
}

// BaseURL returns a copy of the base URL (with its trailing slash).
func (c *Client) BaseURL() *url.URL {
	u := *c.baseURL
	return &u
}

// Response is the HTTP answer of a call (its body read and closed) with
// what the API put around the payload.
type Response struct {
	*http.Response
	// NextCursor and HasMore are set by the methods that read a page
	// (Holds.List, Accounts.List, Journal.ListEntries, …).
	NextCursor string
	HasMore    bool
}

// NewRequest builds a request of path, relative to the base URL (without
// a leading slash: "v1/holds", "metrics"), with body encoded as JSON when
// it is not nil. It sends the token, Accept and User-Agent.
func (c *Client) NewRequest(method, path string, body any) (*http.Request, error) {
	if strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("adminapi: path %q must be relative to the base URL", path)
	}
	u, err := c.baseURL.Parse(path)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("adminapi: encoding the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// Do sends req under ctx and decodes a 2xx answer into v: JSON into a pointer, the
// raw body into an io.Writer (all of it: the writer bounds it), nothing when v is nil. A non-2xx answer is an
// *Error (see CheckResponse); a transport failure is returned as the HTTP
// client gives it, so errors.Is works on its causes (connection refused,
// deadline exceeded).
func (c *Client) Do(ctx context.Context, req *http.Request, v any) (*Response, error) {
	req = req.WithContext(ctx)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &Response{Response: resp}
	if err := CheckResponse(resp); err != nil {
		return r, err
	}
	switch v := v.(type) {
	case nil:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	case io.Writer:
		// No limit: a statement may be larger than any JSON answer, and
		// cutting it short would hand the caller a truncated one.
		if _, err := io.Copy(v, resp.Body); err != nil {
			return r, err
		}
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err != nil {
			return r, err
		}
		if err := json.Unmarshal(body, v); err != nil {
			return r, fmt.Errorf("adminapi: decoding the answer of %s %s: %w", req.Method, req.URL.Path, err)
		}
	}
	return r, nil
}

// call builds and sends one request and decodes its answer into v.
func (c *Client) call(ctx context.Context, method, path string, body, v any) (*Response, error) {
	req, err := c.NewRequest(method, path, body)
	if err != nil {
		return nil, err
	}
	return c.Do(ctx, req, v)
}

// Ptr returns a pointer to v, for the required members of request bodies
// (AccountUpdateRequest.Status, AdjustmentRequest.Amount).
func Ptr[T any](v T) *T { return &v }
