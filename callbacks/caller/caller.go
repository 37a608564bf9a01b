// Package caller is the payments service's side of the ledger callbacks:
// a Client seals a request's claims with a signing secret, posts it to a
// callback route, and opens and checks the answer. The load tester, the
// sandbox and the tests use it; it imports no database code, so they link
// no database driver.
package caller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/strictjson"
)

// Client plays the payments service: it seals callback requests with a
// signing secret and opens the answers. Tests, the load tester and the
// sandbox use it.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080/ledger
	Key     envelope.Key
	Form    envelope.Form // default FormClaims
	HTTP    *http.Client  // default http.DefaultClient
	Now     func() time.Time
	// RawOnly leaves Reply.Service nil: the answer's service claims are
	// only in Reply.Raw, which Outcome and Str read. A load generator
	// saves a map per answer.
	RawOnly bool
}

// Reply is the answer to one callback.
type Reply struct {
	Status int
	// Service is the response's service claims (200 only).
	Service map[string]any
	// Raw is the decrypted service object as sent (200 only).
	Raw json.RawMessage
	// Problem is the problem+json body (non-200), as decoded; ProblemType,
	// ProblemDetail and ProblemPointers read its members.
	Problem map[string]any
	// RetryAfter is the Retry-After header, if any.
	RetryAfter string
}

// Outcome returns the service claim "outcome".
func (r *Reply) Outcome() string { return r.Str("outcome") }

// Str returns a string claim of the response's service object.
func (r *Reply) Str(name string) string {
	if r.Service != nil {
		s, _ := r.Service[name].(string)
		return s
	}
	var out string
	_ = strictjson.EachMember(r.Raw, func(n, v []byte) error {
		if len(n) == len(name)+2 && string(n[1:len(n)-1]) == name {
			if u, ok := strictjson.UnquoteBytes(v); ok && len(v) > 0 && v[0] == '"' {
				out = string(u)
			}
		}
		return nil
	})
	return out
}

// ProblemType returns the problem's type, a URN (problem.TypeBase and a
// slug); "" when the answer has no problem+json body or its type is not
// a string.
func (r *Reply) ProblemType() string { return r.problemString("type") }

// ProblemDetail returns the problem's detail ("" when none).
func (r *Reply) ProblemDetail() string { return r.problemString("detail") }

// ProblemPointers returns the JSON pointers of the problem's field errors,
// in order (none when it has none).
func (r *Reply) ProblemPointers() []string {
	errs, _ := r.Problem["errors"].([]any)
	var out []string
	for _, e := range errs {
		if m, ok := e.(map[string]any); ok {
			if p, ok := m["pointer"].(string); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

func (r *Reply) problemString(name string) string {
	s, _ := r.Problem[name].(string)
	return s
}

// Retryable reports whether the service retries this answer: 408, 429 and 5xx.
func (r *Reply) Retryable() bool {
	return r.Status == http.StatusRequestTimeout || r.Status == http.StatusTooManyRequests || r.Status >= 500
}

// Send seals service (the object claim) for endpoint with fresh iat/exp
// and posts it. A transport error is returned as an error.
func (c *Client) Send(ctx context.Context, endpoint string, service any) (*Reply, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	body, err := claims.BuildRequest(now(), endpoint, service)
	if err != nil {
		return nil, err
	}
	return c.SendClaims(ctx, endpoint, body)
}

// SendClaims seals a whole claims object built by the caller (iat, exp,
// typ and service, as claims.BuildRequest makes it) and posts it.
func (c *Client) SendClaims(ctx context.Context, endpoint string, claims []byte) (*Reply, error) {
	body, err := envelope.AppendSeal([]byte(`{"request":"`), c.Key, c.form(), claims)
	if err != nil {
		return nil, err
	}
	// The token is Base64url segments and dots: nothing to escape.
	return c.PostBody(ctx, endpoint, append(body, `"}`...))
}

// Post posts an already sealed request token to endpoint.
func (c *Client) Post(ctx context.Context, endpoint, token string) (*Reply, error) {
	// The token is Base64url segments and dots: nothing to escape.
	body := make([]byte, 0, len(token)+16)
	body = append(body, `{"request":"`...)
	body = append(body, token...)
	body = append(body, `"}`...)
	return c.PostBody(ctx, endpoint, body)
}

// PostBody posts a raw body to endpoint and opens a 200 answer: sealed with
// the client's key, in the client's form, with exp - iat the claims'
// Lifetime and no typ. Any other 200 is returned with an error.
func (c *Client) PostBody(ctx context.Context, endpoint string, body []byte) (*Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+"/"+endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	r := &Reply{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode != http.StatusOK {
		_ = json.Unmarshal(raw, &r.Problem)
		return r, nil
	}
	token, ok := responseToken(raw)
	if !ok {
		return r, fmt.Errorf("caller: 200 without a response token")
	}
	opened, err := envelope.Open(token, []envelope.Key{c.Key})
	if err != nil {
		return r, fmt.Errorf("caller: opening the response: %w", err)
	}
	if opened.Form != c.form() {
		return r, fmt.Errorf("caller: response in form %v, request in %v", opened.Form, c.form())
	}
	hdr, err := claims.Parse(opened.Claims)
	if err != nil {
		return r, fmt.Errorf("caller: response claims: %w", err)
	}
	if hdr.Typ != "" || hdr.Exp-hdr.Iat != int64(claims.Lifetime/time.Second) {
		return r, fmt.Errorf("caller: response claims typ %q, exp-iat %d", hdr.Typ, hdr.Exp-hdr.Iat)
	}
	r.Raw = hdr.Service
	if c.RawOnly {
		return r, nil
	}
	if err := json.Unmarshal(hdr.Service, &r.Service); err != nil {
		return r, fmt.Errorf("caller: response service claims: %w", err)
	}
	return r, nil
}

// responseToken returns the string member "response" of a 200 body.
func responseToken(body []byte) (string, bool) {
	// The body ledgerd writes, {"response":"<token>"} with a token of
	// Base64url characters and dots, is read without the JSON scanner.
	const head, tail = `{"response":"`, `"}`
	if t, ok := bytes.CutPrefix(body, []byte(head)); ok {
		if t, ok = bytes.CutSuffix(t, []byte(tail)); ok && len(t) > 0 && plainToken(t) {
			return string(t), true
		}
	}
	if !json.Valid(body) {
		return "", false
	}
	var token string
	_ = strictjson.EachMember(body, func(n, v []byte) error {
		if string(n) == `"response"` && len(v) > 0 && v[0] == '"' {
			if u, ok := strictjson.UnquoteBytes(v); ok {
				token = string(u)
			}
		}
		return nil
	})
	return token, token != ""
}

// form is the inner form the client seals in, and expects answers in.
func (c *Client) form() envelope.Form {
	if c.Form == 0 {
		return envelope.FormClaims
	}
	return c.Form
}

// plainToken reports whether t holds only Base64url characters and dots.
func plainToken(t []byte) bool {
	for _, c := range t {
		if !tokenChar[c] {
			return false
		}
	}
	return true
}

// tokenChar holds the Base64url alphabet and the dot.
var tokenChar = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") {
		t[c] = true
	}
	return t
}()
