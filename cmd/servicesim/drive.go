package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
)

// driveConfig configures `servicesim drive`.
type driveConfig struct {
	CallbacksURL string // e.g. http://127.0.0.1:8080/ledger
	AdminURL     string // e.g. http://127.0.0.1:8081
	AdminToken   string // bearer token of the admin API (LEDGER_ADMIN_TOKEN)
	ProviderID   string
	SecretFile   string // Base64 signing secret; "": defaultSecretFile
	Payouts      int
	Requests     int
	Seed         uint64 // 0: derived from the clock
}

// defaultDriveConfig is the configuration with no flags or env set.
func defaultDriveConfig() driveConfig {
	return driveConfig{CallbacksURL: "http://127.0.0.1:8080/ledger", AdminURL: "http://127.0.0.1:8081",
		ProviderID: "local", Payouts: 10, Requests: 5}
}

// defaultSecretFile is the dev secret an embedded ledgerd writes: the file
// keyring.SecretFile (signing-secret) in its data directory, LEDGER_DATA_DIR or else var/ledgerd
// under the source tree's root.
func defaultSecretFile() string {
	dir := os.Getenv("LEDGER_DATA_DIR")
	if dir == "" {
		dir = datadir.Default()
	}
	return filepath.Join(dir, keyring.SecretFile)
}

const driveLong = `drive plays the service against a running ledgerd: through the admin API it
seeds a funded sender with a source instrument and a recipient with a
destination instrument (IDs unique to the run); then it runs payout
lifecycles (authorize a random amount, 1.00 to 50.00 USD, then capture, or
release for cancelled, expired or review_rejected; every third payout
delivers both callbacks again, which must answer the same) and paid
requests (credit-account, 1.00 to 20.00 USD, delivered twice under one
key). Like the service, it retries 408, 429, 5xx and transport errors with
the same key (5 attempts, backoff from 50ms, Retry-After honoured up to 2s)
and stops at any other non-200. It prints one line per lifecycle and a
summary, then reads both accounts back: the sender must hold funded minus
captured with nothing held, the recipient the sum credited.

The signing secret must be one ledgerd knows: by default the dev secret an
embedded ledgerd writes, ` + keyring.SecretFile + ` in its data directory
(LEDGER_DATA_DIR, else var/ledgerd under the source tree's root).`

const driveExitStatus = `0  every lifecycle approved and the balances match
1  a check failed, or a callback was refused (or retried in vain)
2  usage or setup error: flags, the secret file, seeding through the admin API`

// newDriveCmd returns the drive command, which fills cfg from its flags.
func newDriveCmd(cfg *driveConfig) *cobra.Command {
	*cfg = defaultDriveConfig()
	cmd := &cobra.Command{
		Use:     "drive",
		Short:   "Play payout and request lifecycles against a running ledgerd and check the balances",
		Long:    driveLong,
		Example: "  go run ./cmd/ledgerd            # in another terminal\n  go run ./cmd/servicesim drive",
		Args:    cli.NoArgs,
	}
	cli.ExitStatus(cmd, driveExitStatus)
	fs := cmd.Flags()
	fs.StringVar(&cfg.CallbacksURL, "callbacks", cfg.CallbacksURL, "callback base URL of the ledgerd under test")
	cli.Env(fs, "callbacks", "LEDGER_CALLBACKS_URL")
	fs.StringVar(&cfg.AdminURL, "admin", cfg.AdminURL, "base URL of ledgerd's admin API")
	cli.Env(fs, "admin", "LEDGER_ADMIN_URL")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "bearer token of the admin API")
	cli.Env(fs, "admin-token", "LEDGER_ADMIN_TOKEN")
	fs.StringVar(&cfg.ProviderID, "provider-id", cfg.ProviderID, "providerID claim of the callbacks: the provider ledgerd serves")
	cli.Env(fs, "provider-id", "LEDGER_PROVIDER_ID")
	fs.StringVar(&cfg.SecretFile, "secret-file", cfg.SecretFile,
		"file holding the Base64 signing secret (default: an embedded ledgerd's, "+keyring.SecretFile+" in LEDGER_DATA_DIR, else in var/ledgerd under the source tree's root)")
	fs.IntVar(&cfg.Payouts, "payouts", cfg.Payouts, "number of payout lifecycles")
	fs.IntVar(&cfg.Requests, "requests", cfg.Requests, "number of payment request (credit-account) lifecycles")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the amounts and lifecycle choices (0: from the clock)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if cfg.SecretFile == "" {
			cfg.SecretFile = defaultSecretFile()
		}
		if err := cfg.validate(); err != nil {
			return err
		}
		err := drive(cmd.Context(), *cfg, cmd.OutOrStdout())
		var se errSetup
		switch {
		case err == nil:
			return nil
		case errors.As(err, &se):
			return &cli.ExitError{Code: 2, Err: err}
		}
		return &cli.ExitError{Code: 1, Err: err}
	}
	return cmd
}

// validate checks the flags: a usage error for each bad one.
func (cfg driveConfig) validate() error {
	if cfg.Payouts < 0 || cfg.Requests < 0 || cfg.Payouts > 10000 || cfg.Requests > 10000 {
		return cli.Usagef("--payouts and --requests must be between 0 and 10000")
	}
	for _, u := range []struct{ name, v string }{{"callbacks", cfg.CallbacksURL}, {"admin", cfg.AdminURL}} {
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return cli.Usagef("--%s %q is not an http(s) URL", u.name, u.v)
		}
	}
	if cfg.ProviderID == "" {
		return cli.Usagef("--provider-id must not be empty")
	}
	return nil
}

// errSetup marks an error before any lifecycle ran (exit status 2).
type errSetup struct{ err error }

func (e errSetup) Error() string { return e.err.Error() }
func (e errSetup) Unwrap() error { return e.err }

func setupErr(format string, a ...any) error { return errSetup{fmt.Errorf(format, a...)} }

// Amounts are USD cents; the money claim carries 2 decimal places.
func usd(cents int64) ledger.Money {
	return ledger.Money{Currency: "USD", Value: decimal.New(cents, -2)}
}

// callback is one callback of a lifecycle: its endpoint, its idempotency
// key (for messages), and its service claims (claims.AuthorizeService,
// …), sent as they are on every attempt and every replay.
type callback struct {
	endpoint, key string
	service       any
}

func cents2(c int64) string { return decimal.New(c, -2).StringFixed(2) }

// driver holds one run's state.
type driver struct {
	cfg     driveConfig
	cb      *caller.Client
	admin   *adminapi.Client
	out     io.Writer
	rng     *mrand.Rand // amounts and lifecycle choices
	run     string      // the run's ID, prefix of every ID it creates
	sent    int         // callbacks sent, every attempt
	retry   int         // attempts retried after 408/429/5xx/transport errors
	replays int         // same-key replays that answered the same

	// The seeded accounts and instruments.
	sender, recipient, source, dest string

	funded, captured, credited int64 // USD cents
	nCaptured, nReleased       int
}

// maxAttempts bounds the retries of one callback, as the service does.
const maxAttempts = 5

// send posts one callback, retrying 408, 429, 5xx and transport errors with
// the same claims (so the same idempotency key), re-sealed per attempt. Any
// other non-200 is terminal.
func (d *driver) send(ctx context.Context, cb callback) (*caller.Reply, error) {
	backoff := 50 * time.Millisecond
	var last string
	var lastErr error // the last transport error, if the last attempt had one
	for attempt := 1; ; attempt++ {
		d.sent++
		r, err := d.cb.Send(ctx, cb.endpoint, cb.service)
		switch {
		case err != nil && r != nil && r.Status == http.StatusOK:
			return nil, fmt.Errorf("%s: %w", cb.endpoint, err) // a 200 we cannot open: not retryable
		case err != nil:
			last, lastErr = err.Error(), err
		case r.Status == http.StatusOK:
			return r, nil
		case r.Retryable():
			last, lastErr = fmt.Sprintf("%d %v", r.Status, r.ProblemType()), nil
			if s, perr := strconv.Atoi(r.RetryAfter); perr == nil && s >= 0 {
				backoff = max(backoff, min(time.Duration(s)*time.Second, 2*time.Second))
			}
		default:
			return nil, fmt.Errorf("%s key %s refused: %d %v (%v)%s", cb.endpoint, cb.key, r.Status,
				r.ProblemType(), r.ProblemDetail(), refusalHint(r, d.cfg.SecretFile))
		}
		if attempt == maxAttempts {
			if lastErr != nil {
				last = cli.Callbacks.Explain(lastErr).Error()
			}
			return nil, fmt.Errorf("%s key %s: gave up after %d attempts: %s", cb.endpoint, cb.key, attempt, last)
		}
		d.retry++
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// refusalHint is the next step after a refusal a person can fix.
func refusalHint(r *caller.Reply, secretFile string) string {
	typ := r.ProblemType()
	switch {
	case r.Status == http.StatusBadRequest && strings.HasSuffix(typ, ":undecryptable"):
		return "; ledgerd does not know the signing secret of " + secretFile + ": pass the one it has with --secret-file " +
			"(an embedded ledgerd writes " + keyring.SecretFile + " in its data directory, LEDGER_DATA_DIR)"
	case r.Status == http.StatusForbidden:
		return "; ledgerd serves another provider: set --provider-id to its LEDGER_PROVIDER_ID"
	}
	return ""
}

// replay sends the same claims again and requires the same answer.
func (d *driver) replay(ctx context.Context, cb callback, first *caller.Reply) error {
	r, err := d.send(ctx, cb)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(r.Service, first.Service) {
		return fmt.Errorf("%s key %s: replay answered %s, first %s", cb.endpoint, cb.key, r.Raw, first.Raw)
	}
	d.replays++
	return nil
}

// expect requires an approval answering the endpoint's reference.
func expect(r *caller.Reply, endpoint string) error {
	if ref := claims.ReferenceClaim(endpoint); r.Outcome() != ledger.OutcomeApproved || r.Str(ref) == "" {
		return fmt.Errorf("%s answered %s, want approved with %s", endpoint, r.Raw, ref)
	}
	return nil
}

// Payout amounts are drawn from 1.00 to 50.00 USD, credit amounts from 1.00
// to 20.00 USD; in cents.
const maxPayout, maxCredit = 5000, 2000

// drive plays one run: it seeds the accounts, runs the payout and request
// lifecycles, prints the summary and checks the balances.
func drive(ctx context.Context, cfg driveConfig, out io.Writer) error {
	secret, err := readSecret(cfg.SecretFile)
	if err != nil {
		return err
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	d, err := newDriver(cfg, secret, seed, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "servicesim drive: run %s, seed %d, %d payouts, %d requests against %s\n", d.run, seed, cfg.Payouts, cfg.Requests, cfg.CallbacksURL)
	if err := d.seedAccounts(ctx); err != nil {
		return err
	}
	for i := range cfg.Payouts {
		if err := d.payout(ctx, i); err != nil {
			return err
		}
	}
	for i := range cfg.Requests {
		if err := d.request(ctx, i); err != nil {
			return err
		}
	}
	d.printSummary()
	return d.checkBalances(ctx)
}

// readSecret reads and decodes the Base64 signing secret in path.
func readSecret(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, setupErr("reading the signing secret: %w; is ledgerd running in embedded mode (it writes its dev secret there)? "+
			"Otherwise pass a secret ledgerd has with --secret-file", err)
	} else if err != nil {
		return nil, setupErr("reading the signing secret: %w", err)
	}
	secret, err := envelope.ParseSecret(string(raw))
	if err != nil {
		return nil, setupErr("%s: %w", path, err)
	}
	return secret, nil
}

// newDriver sets up a run: its random source, its unique ID and the
// callback and admin API clients.
func newDriver(cfg driveConfig, secret []byte, seed uint64, out io.Writer) (*driver, error) {
	rng := mrand.New(mrand.NewPCG(seed, seed>>1|1))
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	run := "sim-" + hex.EncodeToString(nonce[:]) // unique per run, whatever the seed
	hc := &http.Client{Timeout: 15 * time.Second}
	adm, err := adminapi.NewClient(cfg.AdminURL, adminapi.WithToken(cfg.AdminToken), adminapi.WithHTTPClient(hc),
		adminapi.WithUserAgent("servicesim-drive/1"))
	if err != nil {
		return nil, setupErr("--admin: %w", err)
	}
	return &driver{
		cfg:   cfg,
		cb:    &caller.Client{BaseURL: cfg.CallbacksURL, Key: envelope.Key{Secret: secret}, HTTP: hc},
		admin: adm,
		out:   out,
		rng:   rng,
		run:   run,

		sender:    run + "-sender",
		recipient: run + "-recipient",
		source:    run + "-src",
		dest:      run + "-dst",
		// Every payout is at most 50.00, so the sender is never short of funds.
		funded: int64(cfg.Payouts)*maxPayout + 10000,
	}, nil
}

// seedAccounts creates, through the admin API, a funded sender with a
// source instrument and a recipient with a destination instrument.
func (d *driver) seedAccounts(ctx context.Context) error {
	for _, a := range []struct{ id, owner string }{{d.sender, d.run + "-alice"}, {d.recipient, d.run + "-bob"}} {
		if _, _, err := d.admin.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: a.id, OwnerExternalID: a.owner, Currency: "USD"}); err != nil {
			return setupErr("creating account %s: %w", a.id, cli.AdminAPI.Explain(err))
		}
	}
	if _, _, err := d.admin.Accounts.Adjust(ctx, d.sender, &adminapi.AdjustmentRequest{Amount: adminapi.Ptr(adminapi.Amount(cents2(d.funded))),
		IdempotencyKey: d.run + "-funding", Memo: "servicesim drive funding"}); err != nil {
		return setupErr("funding %s: %w", d.sender, cli.AdminAPI.Explain(err))
	}
	for _, in := range []adminapi.Instrument{{Token: d.source, Kind: adminapi.KindSource, AccountID: d.sender},
		{Token: d.dest, Kind: adminapi.KindDestination, AccountID: d.recipient}} {
		if _, _, err := d.admin.Instruments.Add(ctx, &in); err != nil {
			return setupErr("instrument %s: %w", in.Token, cli.AdminAPI.Explain(err))
		}
	}
	fmt.Fprintf(d.out, "seeded %s (owner %s-alice, funded %s USD, source %s) and %s (owner %s-bob, destination %s)\n",
		d.sender, d.run, cents2(d.funded), d.source, d.recipient, d.run, d.dest)
	return nil
}

// sendApproved sends one callback and requires it approved with its
// endpoint's reference.
func (d *driver) sendApproved(ctx context.Context, cb callback) (*caller.Reply, error) {
	r, err := d.send(ctx, cb)
	if err != nil {
		return nil, err
	}
	if err := expect(r, cb.endpoint); err != nil {
		return nil, err
	}
	return r, nil
}

// payout plays payout lifecycle i (from 0): authorize a random amount, then
// capture or release it, every third time delivering both callbacks again;
// it prints one line.
func (d *driver) payout(ctx context.Context, i int) error {
	payout := fmt.Sprintf("%s-p%03d", d.run, i+1)
	amount := 100 + d.rng.Int64N(maxPayout-100+1)
	auth := callback{claims.Authorize, payout + "-auth", claims.AuthorizeService(holds.AuthorizeRequest{PayoutID: payout,
		ProviderID: d.cfg.ProviderID, ExternalID: d.run + "-alice", FundingSource: d.source, Amount: usd(amount),
		IdempotencyKey: payout + "-auth", CallerSubject: "servicesim", RequestID: payout + "-rq"})}
	ar, err := d.sendApproved(ctx, auth)
	if err != nil {
		return fmt.Errorf("payout %s: %w", payout, err)
	}
	hold := ar.Str(claims.ReferenceClaim(claims.Authorize))
	line := fmt.Sprintf("payout %s %s USD: authorize approved %s", payout, cents2(amount), hold)

	final, reason := d.settlement(payout, hold)
	fr, err := d.sendApproved(ctx, final)
	if err != nil {
		return fmt.Errorf("payout %s: %w", payout, err)
	}
	ref := fr.Str(claims.ReferenceClaim(final.endpoint))
	if final.endpoint == claims.Capture {
		d.captured += amount
		d.nCaptured++
		line += " → capture approved " + ref
	} else {
		d.nReleased++
		line += fmt.Sprintf(" → release (%s) approved %s", reason, ref)
	}
	// Every third payout, the service delivers both callbacks again
	// under their keys: the stored answers must come back.
	if i%3 == 0 {
		if err := d.replay(ctx, auth, ar); err != nil {
			return fmt.Errorf("payout %s: %w", payout, err)
		}
		if err := d.replay(ctx, final, fr); err != nil {
			return fmt.Errorf("payout %s: %w", payout, err)
		}
		line += "; authorize and " + final.endpoint + " replayed: same answers"
	}
	fmt.Fprintln(d.out, line)
	return nil
}

// settlement draws how an authorized payout ends: a capture one time in
// four, else a release (cancelled, expired or review_rejected). It returns
// the callback, and the reason of a release.
func (d *driver) settlement(payout, hold string) (cb callback, reason string) {
	choice := d.rng.IntN(4)
	if choice == 0 {
		key := payout + "-capture"
		return callback{claims.Capture, key, claims.CaptureService(holds.CaptureRequest{PayoutID: payout,
			ProviderID: d.cfg.ProviderID, HoldReference: hold, IdempotencyKey: key})}, ""
	}
	reason = []string{"cancelled", "expired", "review_rejected"}[choice-1]
	key := payout + "-release"
	return callback{claims.Release, key, claims.ReleaseService(holds.ReleaseRequest{HoldReference: hold,
		IdempotencyKey: key, PayoutID: payout, ProviderID: d.cfg.ProviderID, Reason: reason})}, reason
}

// request plays paid request i (from 0): a credit-account of a random
// amount, delivered twice under one key; it prints one line.
func (d *driver) request(ctx context.Context, i int) error {
	req := fmt.Sprintf("%s-r%03d", d.run, i+1)
	amount := 100 + d.rng.Int64N(maxCredit-100+1)
	credit := callback{claims.CreditAccount, req + "-credit", claims.CreditService(ledger.CreditRequest{ProviderID: d.cfg.ProviderID,
		IdempotencyKey: req + "-credit", RequesterExternalID: d.run + "-bob", FundingDestination: d.dest, Amount: usd(amount),
		RequestID: req})}
	cr, err := d.sendApproved(ctx, credit)
	if err != nil {
		return fmt.Errorf("request %s: %w", req, err)
	}
	if err := d.replay(ctx, credit, cr); err != nil {
		return fmt.Errorf("request %s: %w", req, err)
	}
	d.credited += amount
	fmt.Fprintf(d.out, "request %s %s USD: credit-account approved %s; replayed: same answer\n", req, cents2(amount), cr.Str(claims.ReferenceClaim(claims.CreditAccount)))
	return nil
}

// printSummary prints the run's totals: lifecycles, amounts and callbacks.
func (d *driver) printSummary() {
	fmt.Fprintf(d.out, "summary: %d payouts (%d captured, %s USD; %d released), %d requests (%s USD credited); %d callbacks sent, %d retried, %d replays answered the same\n",
		d.cfg.Payouts, d.nCaptured, cents2(d.captured), d.nReleased, d.cfg.Requests, cents2(d.credited), d.sent, d.retry, d.replays)
}

// checkBalances reads both accounts back and requires exactly what the
// lifecycles imply, printing one line per account and then ok.
func (d *driver) checkBalances(ctx context.Context) error {
	var failed []string
	for _, want := range []struct {
		id             string
		balance, avail int64
	}{{d.sender, d.funded - d.captured, d.funded - d.captured}, {d.recipient, d.credited, d.credited}} {
		acc, _, err := d.admin.Accounts.Get(ctx, want.id)
		if err != nil {
			return fmt.Errorf("reading account %s: %w", want.id, cli.AdminAPI.Explain(err))
		}
		ok := decEq(acc.Balance, want.balance) && decEq(acc.Held, 0) && decEq(acc.Available, want.avail)
		verdict := "ok"
		if !ok {
			verdict = fmt.Sprintf("MISMATCH (want balance %s, held 0.00, available %s)", cents2(want.balance), cents2(want.avail))
			failed = append(failed, want.id)
		}
		fmt.Fprintf(d.out, "check %s: balance %s held %s available %s: %s\n", want.id, acc.Balance, acc.Held, acc.Available, verdict)
	}
	if len(failed) > 0 {
		return fmt.Errorf("balances do not match the lifecycles: %s", strings.Join(failed, ", "))
	}
	fmt.Fprintln(d.out, "ok")
	return nil
}

// decEq reports whether a is exactly cents/100.
func decEq(a adminapi.Amount, cents int64) bool {
	v, err := a.Decimal()
	return err == nil && v.Equal(decimal.New(cents, -2))
}
