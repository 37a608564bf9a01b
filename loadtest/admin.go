package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// adminClient is what the load tester does through ledgerd's admin API
// (contract §4): seeding, reading back, the signing secret,
// reconciling, and reading /metrics. The calls are adminapi's.
type adminClient struct {
	*adminapi.Client
}

// newAdminClient returns a client of the admin API at base, sending token
// when it is not empty. hc should have no overall timeout: calls are bounded
// by their contexts (a reconciliation run may take minutes).
func newAdminClient(base, token string, hc *http.Client) (*adminClient, error) {
	c, err := adminapi.NewClient(base, adminapi.WithToken(token), adminapi.WithHTTPClient(hc),
		adminapi.WithUserAgent("provider-ledger-loadtest/2"))
	if err != nil {
		return nil, err
	}
	return &adminClient{c}, nil
}

// adminCallTimeout bounds one admin call (reconciliation has its own).
const adminCallTimeout = 30 * time.Second

// retryAdmin calls f until it succeeds, fails with a 4xx, or 60 s have
// passed: a transport error, 429 or 5xx is retried with backoff, as the
// service would, so that seeding and checks ride out a ledgerd restart.
// Every call it retries is idempotent (reads, and writes with a key or of
// a fixed state).
func retryAdmin[T any](ctx context.Context, f func(ctx context.Context) (T, *adminapi.Response, error)) (T, *adminapi.Response, error) {
	deadline := time.Now().Add(defaultGiveUpAfter)
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
		v, resp, err := f(cctx)
		cancel()
		var ae *adminapi.Error
		retryable := err != nil && ctx.Err() == nil &&
			(!errors.As(err, &ae) || ae.Status == http.StatusTooManyRequests || ae.Status >= 500)
		if !retryable || time.Now().After(deadline) {
			return v, resp, err
		}
		wait := min(50*time.Millisecond<<min(attempt, 6), 2*time.Second)
		select {
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		case <-ctx.Done():
			return v, resp, err
		}
	}
}

// seed creates the account (an existing one with the same owner and currency
// is accepted, so a recorded storm can be replayed twice), funds it once
// (the adjustment key makes a second seeding a replay) and maps its two
// instruments. It returns the funding transaction.
func (c *adminClient) seed(ctx context.Context, a accountSeed) (string, error) {
	_, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
		return c.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: a.AccountID, OwnerExternalID: a.OwnerExternalID, Currency: stormCurrency})
	})
	if errors.Is(err, adminapi.ErrConflict) {
		got, _, gerr := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
			return c.Accounts.Get(ctx, a.AccountID)
		})
		if gerr != nil {
			return "", gerr
		}
		if got.OwnerExternalID != a.OwnerExternalID || got.Currency != stormCurrency || got.Status != adminapi.AccountOpen {
			return "", fmt.Errorf("account %s exists with owner %q, currency %s, status %s", a.AccountID, got.OwnerExternalID, got.Currency, got.Status)
		}
	} else if err != nil {
		return "", fmt.Errorf("creating account %s: %w", a.AccountID, err)
	}
	tx, err := c.fund(ctx, a)
	if err != nil {
		return "", err
	}
	for _, in := range []adminapi.Instrument{
		{Token: a.SourceToken, Kind: adminapi.KindSource, AccountID: a.AccountID},
		{Token: a.DestinationToken, Kind: adminapi.KindDestination, AccountID: a.AccountID},
	} {
		if _, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Instrument, *adminapi.Response, error) {
			return c.Instruments.Add(ctx, &in)
		}); err != nil {
			return "", fmt.Errorf("instrument of account %s: %w", a.AccountID, err)
		}
	}
	return tx, nil
}

// fund posts the account's funding adjustment (a round's, or the seed's)
// and returns its transaction.
func (c *adminClient) fund(ctx context.Context, a accountSeed) (string, error) {
	funding := adminapi.Amount(a.Funding)
	adj, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Adjustment, *adminapi.Response, error) {
		return c.Accounts.Adjust(ctx, a.AccountID, &adminapi.AdjustmentRequest{Amount: &funding, IdempotencyKey: a.FundingKey, Memo: "loadtest funding"})
	})
	if err != nil {
		return "", fmt.Errorf("funding account %s: %w", a.AccountID, err)
	}
	return adj.TransactionID, nil
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

// generateSecret installs a fresh signing secret and returns it as a key.
func (c *adminClient) generateSecret(ctx context.Context) (envelope.Key, error) {
	out, _, err := c.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Generate: true})
	if err != nil {
		return envelope.Key{}, fmt.Errorf("installing a signing secret: %w", cli.AdminAPI.Explain(err))
	}
	if out.Secret == "" {
		return envelope.Key{}, errors.New("installing a signing secret: the answer carries no secret")
	}
	raw, err := envelope.ParseSecret(out.Secret)
	if err != nil {
		return envelope.Key{}, fmt.Errorf("the generated signing secret: %w", err)
	}
	key := envelope.Key{ID: out.SecretID, Secret: raw}
	if key.Fingerprint() != out.Fingerprint {
		return envelope.Key{}, fmt.Errorf("the generated secret's fingerprint is %s, the admin API said %s", key.Fingerprint(), out.Fingerprint)
	}
	return key, nil
}

// retireSecret retires a signing secret (DELETE /v1/signing-secrets/{id}).
func (c *adminClient) retireSecret(ctx context.Context, id string) error {
	_, err := c.SigningSecrets.Retire(ctx, id)
	return err
}

// Keyring propagation (keyring package, contract §1): every replica reloads
// its keyring from the database every 2 s, so a secret is in every
// keyring one interval plus one load after it commits.
const (
	keyringReload = 2 * time.Second
	keyringMargin = 700 * time.Millisecond
	keyWaitLimit  = 15 * time.Second
)

// waitForKey makes sure ledgerd will open callbacks sealed with key
// without sending any: it polls GET /v1/signing-secrets until the key's
// fingerprint is listed active (the database has it), then waits out one
// keyring reload after the moment it was first seen, unless it was added
// long enough ago. Nothing reaches the callbacks, so the adapter's
// undecryptable count stays untouched.
func (c *adminClient) waitForKey(ctx context.Context, key envelope.Key, fromFile string) error {
	fp := key.Fingerprint()
	deadline := time.Now().Add(keyWaitLimit)
	for {
		list, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.SigningSecretList, *adminapi.Response, error) {
			return c.SigningSecrets.List(ctx)
		})
		if err != nil {
			return fmt.Errorf("reading ledgerd's signing secrets: %w", cli.AdminAPI.Explain(err))
		}
		seen := time.Now()
		for _, s := range list.SigningSecrets {
			if s.Fingerprint != fp {
				continue
			}
			if s.RetiredOn != nil {
				return fmt.Errorf("the signing secret %s (fingerprint %s) is retired in ledgerd's keyring; give another --secret-file, or none to have one installed", s.SecretID, fp)
			}
			// Added long ago (by ledgerd's clock, with a generous margin for
			// clock skew): every keyring has it.
			if time.Since(s.AddedOn) > 30*time.Second {
				return nil
			}
			select {
			case <-time.After(time.Until(seen.Add(keyringReload + keyringMargin))):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if fromFile != "" {
			return fmt.Errorf("ledgerd's keyring does not hold the secret in %s (fingerprint %s): add it with `ledgerctl secrets add --from-file %s`, or give no --secret-file to have one installed", fromFile, fp, fromFile)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the signing secret %s is not listed by ledgerd after %s", fp, keyWaitLimit)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// metrics reads ledgerd's /metrics (on the admin listener) and returns the
// unlabelled samples of the names asked for, and go_info's version.
func (c *adminClient) metrics(ctx context.Context, names ...string) (map[string]float64, error) {
	req, err := c.NewRequest(http.MethodGet, "metrics", nil)
	if err != nil {
		return nil, err
	}
	var body strings.Builder
	if _, err := c.Do(ctx, req, &body); err != nil {
		return nil, err
	}
	return parseMetrics(body.String(), names...), nil
}

// parseMetrics reads the Prometheus text format: the value of each
// unlabelled sample named, and go_info's version label as "go_info:<v>"
// (value 1).
func parseMetrics(text string, names ...string) map[string]float64 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if v, ok := strings.CutPrefix(line, `go_info{version="`); ok {
			if i := strings.IndexByte(v, '"'); i > 0 {
				out["go_info:"+v[:i]] = 1
			}
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || !want[name] {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// cpuSeconds reads process_cpu_seconds_total from ledgerd's /metrics.
func (c *adminClient) cpuSeconds(ctx context.Context) (time.Duration, bool) {
	m, err := c.metrics(ctx, "process_cpu_seconds_total")
	if err != nil {
		return 0, false
	}
	f, ok := m["process_cpu_seconds_total"]
	return time.Duration(f * float64(time.Second)), ok
}

// seedAll seeds the accounts, conc at a time, and notes their funding
// transactions in m.
func seedAll(ctx context.Context, adm *adminClient, accounts []accountSeed, conc int, m *model) error {
	// The first account alone: on a fresh database it also creates the
	// system accounts of the currency, which concurrent first creations
	// could race on.
	tx, err := adm.seed(ctx, accounts[0])
	if err != nil {
		return err
	}
	m.reference(tx)
	return forEach(ctx, accounts[1:], conc, func(a accountSeed) error {
		tx, err := adm.seed(ctx, a)
		m.reference(tx)
		return err
	})
}

// fundAll posts a round's funding adjustments.
func fundAll(ctx context.Context, adm *adminClient, accounts []accountSeed, conc int, m *model) error {
	return forEach(ctx, accounts, conc, func(a accountSeed) error {
		tx, err := adm.fund(ctx, a)
		m.reference(tx)
		return err
	})
}

// forEach runs f on every item, conc at a time, and returns the first
// error.
func forEach[T any](ctx context.Context, items []T, conc int, f func(T) error) error {
	jobs := make(chan T)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range max(min(conc, len(items)), 1) {
		wg.Go(func() {
			for it := range jobs {
				if err := f(it); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, it := range items {
		select {
		case jobs <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
