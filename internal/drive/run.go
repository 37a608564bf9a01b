package drive

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
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// driver holds one run's state.
type driver struct {
	cfg     Config
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

// Payout amounts are drawn from 1.00 to 50.00 USD, credit amounts from 1.00
// to 20.00 USD; in cents.
const maxPayout, maxCredit = 5000, 2000

// Run plays one run, writing its progress to out: it seeds the accounts,
// runs the payout and request lifecycles, prints the summary and checks the
// balances. cfg must be valid (Config.Validate); an empty SecretFile is
// DefaultSecretFile(). An error before any lifecycle ran is a SetupError.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if cfg.SecretFile == "" {
		cfg.SecretFile = DefaultSecretFile()
	}
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
func newDriver(cfg Config, secret []byte, seed uint64, out io.Writer) (*driver, error) {
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
