package loadtest

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

// adminClient talks to the admin API of ledgerd (design section 4).
type adminClient struct {
	base  string
	token string
	http  *http.Client
}

// apiError is a non-2xx answer of the admin API.
type apiError struct {
	Status int
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("admin API answered %d", e.Status)
	if e.Title != "" {
		s += " " + e.Title
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// do sends one request and decodes a 2xx JSON answer into out. It returns
// the status; a non-2xx status is an *apiError.
func (c *adminClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.base, "/")+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &apiError{Status: resp.StatusCode}
		_ = json.Unmarshal(raw, ae)
		return resp.StatusCode, ae
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// account is GET /v1/accounts/{id}.
type account struct {
	AccountID       string `json:"accountID"`
	OwnerExternalID string `json:"ownerExternalID"`
	Currency        string `json:"currency"`
	Balance         string `json:"balance"`
	Held            string `json:"held"`
	Available       string `json:"available"`
	Status          string `json:"status"`
}

// hold is one hold of GET /v1/holds.
type hold struct {
	HoldReference    string `json:"holdReference"`
	PayoutID         string `json:"payoutID"`
	AccountID        string `json:"accountID"`
	FundingSource    string `json:"fundingSource"`
	Amount           string `json:"amount"`
	Currency         string `json:"currency"`
	Status           string `json:"status"`
	CaptureReference string `json:"captureReference"`
	ReleaseReference string `json:"releaseReference"`
}

// seed creates the account (an existing one with the same owner and currency
// is accepted, so a recorded storm can be replayed twice), funds it once
// (the adjustment key makes a second seeding a replay) and maps its two
// instruments.
func (c *adminClient) seed(ctx context.Context, a AccountSeed) error {
	_, err := c.do(ctx, http.MethodPost, "/v1/accounts", map[string]string{
		"accountID": a.AccountID, "ownerExternalID": a.OwnerExternalID, "currency": Currency}, nil)
	if statusOf(err) == http.StatusConflict {
		got, gerr := c.account(ctx, a.AccountID)
		if gerr != nil {
			return gerr
		}
		if got.OwnerExternalID != a.OwnerExternalID || got.Currency != Currency || got.Status != "open" {
			return fmt.Errorf("account %s exists with owner %q, currency %s, status %s", a.AccountID, got.OwnerExternalID, got.Currency, got.Status)
		}
	} else if err != nil {
		return fmt.Errorf("creating account %s: %w", a.AccountID, err)
	}
	if _, err := c.do(ctx, http.MethodPost, "/v1/accounts/"+url.PathEscape(a.AccountID)+"/adjustments", map[string]string{
		"amount": a.Funding, "idempotencyKey": a.FundingKey, "memo": "loadtest funding"}, nil); err != nil {
		return fmt.Errorf("funding account %s: %w", a.AccountID, err)
	}
	for _, in := range [][2]string{{a.SourceToken, "source"}, {a.DestinationToken, "destination"}} {
		if _, err := c.do(ctx, http.MethodPost, "/v1/instruments", map[string]string{
			"token": in[0], "kind": in[1], "accountID": a.AccountID}, nil); err != nil {
			return fmt.Errorf("instrument of account %s: %w", a.AccountID, err)
		}
	}
	return nil
}

func (c *adminClient) account(ctx context.Context, id string) (account, error) {
	var a account
	_, err := c.do(ctx, http.MethodGet, "/v1/accounts/"+url.PathEscape(id), nil, &a)
	return a, err
}

// holdsOf returns every hold of a payout, all pages.
func (c *adminClient) holdsOf(ctx context.Context, payoutID string) ([]hold, error) {
	var all []hold
	cursor := ""
	for range 100 {
		q := url.Values{"payoutID": {payoutID}, "limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Holds      []hold `json:"holds"`
			NextCursor string `json:"nextCursor"`
			HasMore    bool   `json:"hasMore"`
		}
		if _, err := c.do(ctx, http.MethodGet, "/v1/holds?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Holds...)
		if !page.HasMore || page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return all, errors.New("holds of one payout span more than 100 pages")
}

// generateSecret installs a fresh signing secret and returns it (Base64)
// and its fingerprint.
func (c *adminClient) generateSecret(ctx context.Context) (secret, secretID, fingerprint string, err error) {
	var out struct {
		SecretID    string `json:"secretID"`
		Fingerprint string `json:"fingerprint"`
		Secret      string `json:"secret"`
	}
	if _, err := c.do(ctx, http.MethodPost, "/v1/signing-secrets", map[string]bool{"generate": true}, &out); err != nil {
		return "", "", "", fmt.Errorf("installing a signing secret: %w", err)
	}
	if out.Secret == "" {
		return "", "", "", errors.New("installing a signing secret: the answer carries no secret")
	}
	return out.Secret, out.SecretID, out.Fingerprint, nil
}

// Finding is one reconciliation finding (design section 5).
type Finding struct {
	Kind     string          `json:"kind"`
	Severity string          `json:"severity"`
	Subject  string          `json:"subject"`
	Detail   json.RawMessage `json:"detail,omitempty"`
	Fixed    bool            `json:"fixed"`
}

// reconcile runs POST /v1/reconciliation/runs {"fix": false}. available is
// false when the endpoint does not exist (404/405).
func (c *adminClient) reconcile(ctx context.Context) (runID string, findings []Finding, available bool, err error) {
	var out struct {
		RunID    any       `json:"runID"`
		Findings []Finding `json:"findings"`
	}
	status, err := c.do(ctx, http.MethodPost, "/v1/reconciliation/runs", map[string]bool{"fix": false}, &out)
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, true, err
	}
	if status != http.StatusCreated {
		return "", nil, true, fmt.Errorf("reconciliation answered %d, want 201", status)
	}
	if out.RunID != nil {
		runID = fmt.Sprint(out.RunID)
	}
	return runID, out.Findings, true, nil
}

// retireSecret retires a signing secret (DELETE /v1/signing-secrets/{id}).
func (c *adminClient) retireSecret(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/signing-secrets/"+url.PathEscape(id), nil, nil)
	return err
}
