package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// maxSealLifetime is the longest lifetime (exp - iat) seal gives a request:
// ledgerd's default LEDGER_MAX_TOKEN_LIFETIME, past which it refuses one.
const maxSealLifetime = 10 * time.Minute

// sealConfig is `loadtest seal`.
type sealConfig struct {
	callbacks, admin, adminToken, providerID, secretFile string
	out, format, mix                                     string
	count, accounts                                      int
	seed                                                 int64
	lifetime                                             time.Duration
	seedAccounts                                         bool
}

// VegetaTarget is one line of vegeta's JSON target format
// (vegeta attack -format=json): Body is the request's bytes, which
// encoding/json writes as Base64.
type VegetaTarget struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Body   []byte              `json:"body"`
	Header map[string][]string `json:"header"`
}

// K6Request is one element of the JSON array seal writes for k6: the
// arguments of http.request(method, url, body, params).
type K6Request struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   string `json:"body"`
	Params struct {
		Headers map[string]string `json:"headers"`
	} `json:"params"`
}

const sealLong = `seal writes a generated storm's authorizes and credits as sealed callback
requests, ready for another load tool: vegeta's JSON targets, one per line
(--format vegeta, for vegeta attack -format=json), or a JSON array for k6's
open() (--format k6). Each request carries its own idempotency key and is
sealed with --secret-file's signing secret, with iat the time of sealing and
exp iat + --lifetime: replay it before exp, against a ledgerd that knows the
secret. Captures and releases are not written: they name the hold reference
ledgerd answers the authorize, unknown until it is sent.

The accounts and instruments the requests name must exist: --seed-accounts
creates and funds them through the admin API (as storm does) and waits until
ledgerd's keyring holds the secret. Sent once, every authorize and credit is
approved; sent again, each answers the same (a stored answer).`

func newSealCmd(h Hooks) *cobra.Command {
	var cfg sealConfig
	cmd := &cobra.Command{
		Use:     "seal",
		Short:   "Write sealed authorizes and credits as vegeta JSON targets or a k6 array, for any load tool to replay",
		Long:    sealLong,
		Example: "  loadtest seal --secret-file secret --seed-accounts --count 5000 --out targets.json\n  vegeta attack -format=json -targets=targets.json -rate=500 -duration=10s | vegeta report",
		Args:    cli.NoArgs,
	}
	cli.ExitStatus(cmd, "0  written\n2  usage error, seeding failed, or the file could not be written")
	fs := cmd.Flags()
	fs.StringVar(&cfg.callbacks, "callbacks", "http://127.0.0.1:8080/ledger", "base URL of ledgerd's callbacks, the targets' URL")
	cli.Env(fs, "callbacks", "LEDGER_CALLBACKS_URL")
	fs.StringVar(&cfg.admin, "admin", "http://127.0.0.1:8081", "base URL of ledgerd's admin API (with --seed-accounts)")
	cli.Env(fs, "admin", "LEDGER_ADMIN_URL")
	fs.StringVar(&cfg.adminToken, "admin-token", "", "bearer token of the admin API")
	cli.Env(fs, "admin-token", "LEDGER_ADMIN_TOKEN")
	providerFlag(cmd, &cfg.providerID)
	fs.StringVar(&cfg.secretFile, "secret-file", "", "file holding the Base64 signing secret that seals the requests; ledgerd must know it (required)")
	fs.IntVar(&cfg.count, "count", 1000, "requests to write")
	fs.StringVar(&cfg.mix, "mix", "authorize=80,credit=20", "relative weights of authorizes and credits")
	fs.IntVar(&cfg.accounts, "accounts", 20, "customer accounts the requests name")
	fs.Int64Var(&cfg.seed, "seed", 0, "seed of the generated requests (default: random); the prefix adds the time")
	fs.DurationVar(&cfg.lifetime, "lifetime", 5*time.Minute, "exp - iat of every request: the time left to replay them (at most 10m, ledgerd's default LEDGER_MAX_TOKEN_LIFETIME)")
	fs.StringVar(&cfg.format, "format", "vegeta", "vegeta (JSON targets, one per line) or k6 (a JSON array)")
	fs.StringVar(&cfg.out, "out", "-", "file to write the requests to (- for stdout)")
	fs.BoolVar(&cfg.seedAccounts, "seed-accounts", false, "create and fund the accounts through the admin API and wait until ledgerd's keyring holds the secret")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := cfg.validate(); err != nil {
			return err
		}
		if !cmd.Flags().Changed("seed") {
			cfg.seed = rand.Int64N(1 << 40)
		}
		return runSeal(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), h)
	}
	return cmd
}

func (cfg *sealConfig) validate() error {
	if cfg.secretFile == "" {
		return cli.Usagef("--secret-file is required: ledgerd must know the secret that seals the requests")
	}
	if cfg.count < 1 || cfg.count > 10_000_000 {
		return cli.Usagef("--count must be 1 to 10000000")
	}
	if cfg.accounts < 1 || cfg.accounts > 100000 {
		return cli.Usagef("--accounts must be 1 to 100000")
	}
	if cfg.lifetime < time.Second || cfg.lifetime > maxSealLifetime {
		return cli.Usagef("--lifetime must be 1s to %s", maxSealLifetime)
	}
	if cfg.format != "vegeta" && cfg.format != "k6" {
		return cli.Usagef("--format %q: vegeta or k6", cfg.format)
	}
	if cfg.providerID == "" {
		return cli.Usagef("--provider-id must not be empty")
	}
	if _, _, err := parseMix(cfg.mix); err != nil {
		return err
	}
	for _, u := range [][2]string{{"callbacks", cfg.callbacks}, {"admin", cfg.admin}} {
		if err := validURL(u[0], u[1]); err != nil {
			return err
		}
	}
	return nil
}

// parseMix reads "authorize=W,credit=W" (either may be left out: weight 0).
func parseMix(s string) (auth, credit float64, err error) {
	bad := cli.Usagef("--mix %q: give authorize=W,credit=W with weights not negative, not both 0", s)
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		w, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || perr != nil || !(w >= 0) || w > 1e9 {
			return 0, 0, bad
		}
		switch strings.TrimSpace(name) {
		case "authorize":
			auth = w
		case "credit":
			credit = w
		default:
			return 0, 0, bad
		}
	}
	if auth+credit == 0 {
		return 0, 0, bad
	}
	return auth, credit, nil
}

// sealPlan generates the storm whose authorizes and credits seal writes:
// no duplicates or second attempts (a replaying tool delivers as it
// likes), every payout left held.
func sealPlan(cfg sealConfig, now time.Time) Plan {
	auth, credit, _ := parseMix(cfg.mix)
	payouts := int(float64(cfg.count)*auth/(auth+credit) + 0.5)
	s := Shape{Seed: cfg.seed, Prefix: newPrefix(cfg.seed, now), ProviderID: cfg.providerID,
		Accounts: cfg.accounts, Payouts: payouts, Credits: cfg.count - payouts, LeaveHeld: 1}
	p := Generate(s)
	kept := p.Requests[:0]
	for _, r := range p.Requests {
		if (r.Endpoint == claims.Authorize || r.Endpoint == claims.CreditAccount) && r.SecondOf == 0 && r.HoldOf == "" {
			kept = append(kept, r)
		}
	}
	p.Requests = kept
	return p
}

func runSeal(ctx context.Context, cfg sealConfig, stdout, stderr io.Writer, h Hooks) error {
	key, err := readSecret(cfg.secretFile)
	if err != nil {
		return setupExit(err)
	}
	p := sealPlan(cfg, h.now())
	if cfg.seedAccounts {
		if err := sealSeed(ctx, cfg, key, p); err != nil {
			return setupExit(err)
		}
	}
	w := stdout
	if cfg.out != "-" {
		f, err := os.OpenFile(cfg.out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return setupExit(err)
		}
		defer f.Close()
		w = f
	}
	// iat after seeding: the lifetime is the time left to replay.
	iat := h.now()
	if err := writeSealed(w, cfg, key, p, iat); err != nil {
		return setupExit(fmt.Errorf("writing the requests: %w", err))
	}
	fmt.Fprintf(stderr, "loadtest seal: %d requests for %d accounts, prefix %s, valid until %s\n",
		len(p.Requests), len(p.Header.Accounts), p.Header.Prefix, iat.Add(cfg.lifetime).UTC().Format(time.RFC3339))
	return nil
}

// sealSeed creates and funds the plan's accounts and waits until ledgerd's
// keyring holds key.
func sealSeed(ctx context.Context, cfg sealConfig, key envelope.Key, p Plan) error {
	hc := &http.Client{Transport: newTransport(16)}
	defer hc.CloseIdleConnections()
	adm, err := newAdminClient(cfg.admin, cfg.adminToken, hc)
	if err != nil {
		return cli.Usagef("--admin: %v", err)
	}
	if err := adm.waitForKey(ctx, key, cfg.secretFile); err != nil {
		return err
	}
	m := newModel(p.Header.Prefix)
	if err := m.add(p); err != nil {
		return err
	}
	if err := seedAll(ctx, adm, p.Header.Accounts, 16, m); err != nil {
		return fmt.Errorf("seeding through the admin API: %w", cli.AdminAPI.Explain(err))
	}
	return nil
}

// sealedBody is the body of one request as the service posts it:
// {"request":"<compact JWE>"}, its claims valid from iat for lifetime.
func sealedBody(key envelope.Key, r request, iat time.Time, lifetime time.Duration) ([]byte, error) {
	svc, err := json.Marshal(r.Service)
	if err != nil {
		return nil, err
	}
	c, err := json.Marshal(struct {
		Iat     int64           `json:"iat"`
		Exp     int64           `json:"exp"`
		Typ     string          `json:"typ"`
		Service json.RawMessage `json:"service"`
	}{iat.Unix(), iat.Unix() + int64(lifetime/time.Second), r.Endpoint, svc})
	if err != nil {
		return nil, err
	}
	token, err := envelope.Seal(key, envelope.FormClaims, c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Request string `json:"request"`
	}{token})
}

// writeSealed writes the plan's requests in cfg.format.
func writeSealed(w io.Writer, cfg sealConfig, key envelope.Key, p Plan, iat time.Time) error {
	bw := bufio.NewWriter(w)
	base := strings.TrimSuffix(cfg.callbacks, "/") + "/"
	if cfg.format == "k6" {
		bw.WriteString("[\n")
	}
	for i, r := range p.Requests {
		body, err := sealedBody(key, r, iat, cfg.lifetime)
		if err != nil {
			return err
		}
		var line []byte
		if cfg.format == "k6" {
			k := K6Request{Method: http.MethodPost, URL: base + r.Endpoint, Body: string(body)}
			k.Params.Headers = map[string]string{"Content-Type": "application/json"}
			line, err = json.Marshal(k)
			if i > 0 {
				bw.WriteString(",\n")
			}
		} else {
			line, err = json.Marshal(VegetaTarget{Method: http.MethodPost, URL: base + r.Endpoint, Body: body,
				Header: map[string][]string{"Content-Type": {"application/json"}}})
			line = append(line, '\n')
		}
		if err != nil {
			return err
		}
		bw.Write(line)
	}
	if cfg.format == "k6" {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}
