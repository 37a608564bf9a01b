package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/adminapi"
)

// adminClient is what the load tester does through ledgerd's admin API
// (design section 4): seeding, reading back, installing a signing secret,
// reconciling. The calls are adminapi's.
type adminClient struct {
	*adminapi.Client
}

// newAdminClient returns a client of the admin API at base, sending token
// when it is not empty.
func newAdminClient(base, token string, hc *http.Client) (*adminClient, error) {
	c, err := adminapi.NewClient(base, adminapi.WithToken(token), adminapi.WithHTTPClient(hc),
		adminapi.WithUserAgent("provider-ledger-loadtest/1"))
	if err != nil {
		return nil, err
	}
	return &adminClient{c}, nil
}

// seed creates the account (an existing one with the same owner and currency
// is accepted, so a recorded storm can be replayed twice), funds it once
// (the adjustment key makes a second seeding a replay) and maps its two
// instruments.
func (c *adminClient) seed(ctx context.Context, a AccountSeed) error {
	_, _, err := c.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: a.AccountID, OwnerExternalID: a.OwnerExternalID, Currency: Currency})
	if errors.Is(err, adminapi.ErrConflict) {
		got, _, gerr := c.Accounts.Get(ctx, a.AccountID)
		if gerr != nil {
			return gerr
		}
		if got.OwnerExternalID != a.OwnerExternalID || got.Currency != Currency || got.Status != adminapi.AccountOpen {
			return fmt.Errorf("account %s exists with owner %q, currency %s, status %s", a.AccountID, got.OwnerExternalID, got.Currency, got.Status)
		}
	} else if err != nil {
		return fmt.Errorf("creating account %s: %w", a.AccountID, err)
	}
	funding := adminapi.Amount(a.Funding)
	if _, _, err := c.Accounts.Adjust(ctx, a.AccountID, &adminapi.AdjustmentRequest{
		Amount: &funding, IdempotencyKey: a.FundingKey, Memo: "loadtest funding"}); err != nil {
		return fmt.Errorf("funding account %s: %w", a.AccountID, err)
	}
	for _, in := range []adminapi.Instrument{
		{Token: a.SourceToken, Kind: adminapi.KindSource, AccountID: a.AccountID},
		{Token: a.DestinationToken, Kind: adminapi.KindDestination, AccountID: a.AccountID},
	} {
		if _, _, err := c.Instruments.Add(ctx, &in); err != nil {
			return fmt.Errorf("instrument of account %s: %w", a.AccountID, err)
		}
	}
	return nil
}

// maxHoldPages bounds the pages read for one payout.
const maxHoldPages = 100

// holdsOf returns every hold of a payout, all pages.
func (c *adminClient) holdsOf(ctx context.Context, payoutID string) ([]adminapi.Hold, error) {
	var all []adminapi.Hold
	for h, err := range c.Holds.ListIter(ctx, &adminapi.HoldListOptions{PayoutID: payoutID, Limit: 100}) {
		if err != nil {
			return nil, err
		}
		all = append(all, *h)
		if len(all) > maxHoldPages*100 {
			return all, fmt.Errorf("holds of one payout span more than %d pages", maxHoldPages)
		}
	}
	return all, nil
}

// generateSecret installs a fresh signing secret and returns it (Base64)
// and its fingerprint.
func (c *adminClient) generateSecret(ctx context.Context) (secret, secretID, fingerprint string, err error) {
	out, _, err := c.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Generate: true})
	if err != nil {
		return "", "", "", fmt.Errorf("installing a signing secret: %w", err)
	}
	if out.Secret == "" {
		return "", "", "", errors.New("installing a signing secret: the answer carries no secret")
	}
	return out.Secret, out.SecretID, out.Fingerprint, nil
}

// Finding is one reconciliation finding (design section 5).
type Finding = adminapi.Finding

// reconcile runs POST /v1/reconciliation/runs {"fix": false}. available is
// false when the endpoint does not exist (404/405).
func (c *adminClient) reconcile(ctx context.Context) (runID string, findings []Finding, available bool, err error) {
	run, resp, err := c.Reconciliation.Run(ctx, &adminapi.ReconciliationRunRequest{Fix: false})
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, true, err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", nil, true, fmt.Errorf("reconciliation answered %d, want 201", resp.StatusCode)
	}
	return run.RunID, run.Findings, true, nil
}

// retireSecret retires a signing secret (DELETE /v1/signing-secrets/{id}).
func (c *adminClient) retireSecret(ctx context.Context, id string) error {
	_, err := c.SigningSecrets.Retire(ctx, id)
	return err
}

// cpuSeconds reads process_cpu_seconds_total from ledgerd's /metrics, on
// the admin listener.
func (c *adminClient) cpuSeconds(ctx context.Context) (time.Duration, bool) {
	req, err := c.NewRequest(http.MethodGet, "metrics", nil)
	if err != nil {
		return 0, false
	}
	var body strings.Builder
	if _, err := c.Do(ctx, req, &body); err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(strings.NewReader(body.String()))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return time.Duration(f * float64(time.Second)), err == nil
		}
	}
	return 0, false
}
