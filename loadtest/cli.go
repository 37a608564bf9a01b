package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/provider-ledger/adapter/internal/cli"
)

// Hooks lets tests reach into a run.
type Hooks struct {
	// BeforeCheck, when set, runs after the storm and before the checks.
	BeforeCheck func(ctx context.Context, p Plan) error
	// Now replaces time.Now for the run prefix.
	Now func() time.Time
	// Terminal draws the progress as a bar redrawn in place; otherwise it
	// is printed as lines. Run sets it when stderr is a terminal.
	Terminal bool
}

func (h Hooks) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Run is the whole program: args are what follows the command name. It
// returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	h := Hooks{}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		h.Terminal = true
	}
	return RunWith(ctx, args, stdout, stderr, h)
}

// RunWith is Run with hooks.
func RunWith(ctx context.Context, args []string, stdout, stderr io.Writer, h Hooks) int {
	return cli.Execute(ctx, newRoot(h), args, stdout, stderr)
}

const rootLong = `loadtest plays the payments service against a ledgerd: callback storms with
duplicate, concurrent and lost deliveries under the service's retry policy,
record and replay, sealed requests for other load tools (vegeta, k6), an
invariant check from the outside (admin API and reconciliation), latency
and throughput reports (JSON, and one HTML file with charts), soak and chaos runs, and the throughput bench against the
pgbench ceiling. "loadtest spawn" does it all in one command: it builds and
starts a ledgerd from this checkout on a scratch database, storms it, checks
it and tears it down.`

const exitStatus = `0  every check passed
1  an invariant, consistency or request check failed
2  usage or setup error (flags, ledgerd unreachable, seeding failed)`

func newRoot(h Hooks) *cobra.Command {
	root := &cobra.Command{
		Use:     "loadtest",
		Short:   "Play the payments service against a ledgerd: storms, checks, reports",
		Long:    rootLong,
		Version: cli.Version(),
		Args:    cli.NoCommand,
	}
	cli.Group(root)
	cli.ExitStatus(root, exitStatus)
	root.AddCommand(newStormCmd(h), newRecordCmd(h), newReplayCmd(h), newSpawnCmd(h), newCleanCmd(h), newBenchCmd(h), newSealCmd(h))
	return root
}

// targetFlags are the flags that point at a running ledgerd.
func targetFlags(cmd *cobra.Command, cfg *driveConfig, secretUsage string) {
	fs := cmd.Flags()
	fs.StringVar(&cfg.callbacks, "callbacks", "http://127.0.0.1:8080/ledger", "base URL of ledgerd's callbacks")
	cli.Env(fs, "callbacks", "LEDGER_CALLBACKS_URL")
	fs.StringVar(&cfg.admin, "admin", "http://127.0.0.1:8081", "base URL of ledgerd's admin API")
	cli.Env(fs, "admin", "LEDGER_ADMIN_URL")
	fs.StringVar(&cfg.adminToken, "admin-token", "", "bearer token of the admin API")
	cli.Env(fs, "admin-token", "LEDGER_ADMIN_TOKEN")
	providerFlag(cmd, &cfg.providerID)
	fs.StringVar(&cfg.secretFile, "secret-file", "", secretUsage)
}

func providerFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "provider-id", "local", "this provider's account ID (ledgerd's LEDGER_PROVIDER_ID): the providerID claim")
	cli.Env(cmd.Flags(), "provider-id", "LEDGER_PROVIDER_ID")
}

const secretUsage = "file holding a Base64 signing secret ledgerd knows (default: install a fresh one through the admin API, retired at the end)"

// shapeFlags are the flags of a generated storm.
func shapeFlags(cmd *cobra.Command, s *Shape, seed *int64, payouts, credits, accounts int) {
	fs := cmd.Flags()
	fs.Int64Var(seed, "seed", 0, "seed of the generated storm (default: random); the run prefix adds the time")
	fs.IntVar(&s.Accounts, "accounts", accounts, "customer accounts to seed")
	fs.IntVar(&s.Payouts, "payouts", payouts, "payout lifecycles (authorize, then capture or release); per round with --duration")
	fs.IntVar(&s.Credits, "credits", credits, "credit-account requests; per round with --duration")
	fs.Float64Var(&s.Duplicates, "duplicates", 0.05, "fraction of requests delivered twice in sequence")
	fs.Float64Var(&s.ConcurrentDupes, "concurrent-dupes", 0.02, "fraction of requests sent twice at once")
	fs.Float64Var(&s.Drop, "drop", 0.02, "fraction of requests whose first answer is lost (then retried with the same key)")
	fs.Float64Var(&s.CaptureRatio, "capture-ratio", 0.8, "fraction of settled payouts captured; the rest are released")
	fs.Float64Var(&s.LeaveHeld, "leave-held", 0.1, "fraction of payouts left held (unclaimed)")
	fs.Float64Var(&s.SecondAttempts, "second-attempts", 0.05, "fraction of authorizes and credits sent again under a new key (must answer the same reference)")
}

// driveFlags are the flags of sending a storm and reporting on it.
func driveFlags(cmd *cobra.Command, cfg *driveConfig, withDuration bool, duration time.Duration) {
	fs := cmd.Flags()
	fs.IntVar(&cfg.loop.conc, "concurrency", 16, "closed loop: requests in flight, each worker sending its next when the last is answered")
	fs.Float64Var(&cfg.loop.rate, "rate", 0, "open loop: requests started per second whatever is in flight, latency measured from each one's intended send time (0: closed loop)")
	fs.IntVar(&cfg.loop.maxInflight, "max-inflight", 2000, "open loop: most requests in flight at once (later starts wait, their latency still counts from the intended time)")
	if withDuration {
		fs.DurationVar(&cfg.duration, "duration", duration, "run the storm's shape in rounds until this much time has passed (soak: 5m); 0: one storm of the counts")
	}
	fs.StringVar(&cfg.report, "report", "", "file to write the JSON report to")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON on stdout instead of the table")
	fs.StringVar(&cfg.html, "html", "", "file to write the HTML report to: one self-contained page of charts")
	fs.DurationVar(&cfg.reconcile, "reconcile-timeout", defaultReconcileTimeout, "how long to wait for the final reconciliation run; past it the run says \"not checked\"")
	fs.DurationVar(&cfg.giveUpAfter, "give-up-after", defaultGiveUpAfter, "how long one request is retried (at most 30 attempts) before the storm gives it up and goes on; it is resent at the end of its phase")
	fs.DurationVar(&cfg.resolveFor, "resolve-timeout", defaultResolveTimeout, "how long the requests given up are resent, under their own keys, until answered; one still unanswered fails the run")
	fs.StringArrayVar(&cfg.thresholdExprs, "threshold", nil, "pass/fail criterion, repeatable: [endpoint:]metric op value, metric p50|p90|p95|p99|p99.9|max (value with us, ms or s) or errors (a percentage), e.g. 'p99<250ms', 'errors<0.1%', 'authorize:p99<50ms'; a failed one exits 1, naming it")
	fs.DurationVar(&cfg.progress, "progress", 2*time.Second, "interval of the progress line on stderr (0: none)")
	fs.DurationVar(&cfg.sample, "sample-every", 2*time.Second, "interval of the readings of ledgerd's /metrics (RSS, goroutines, pool)")
	fs.Float64Var(&cfg.rssLimitMB, "rss-limit", 150, "soak (--duration of 1m or more): the RSS, in MB, ledgerd must stay under")
}

func validURL(name, v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.Usagef("--%s %q is not an http(s) URL", name, v)
	}
	return nil
}

func (cfg *driveConfig) validateShape() error {
	s := &cfg.shape
	if s.Accounts < 1 || s.Accounts > 100000 {
		return cli.Usagef("--accounts must be 1 to 100000")
	}
	if s.Payouts < 0 || s.Credits < 0 || s.Payouts+s.Credits == 0 || s.Payouts > 10_000_000 || s.Credits > 10_000_000 {
		return cli.Usagef("--payouts and --credits must be 0 to 10000000, not both 0")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"duplicates", s.Duplicates}, {"concurrent-dupes", s.ConcurrentDupes}, {"drop", s.Drop},
		{"capture-ratio", s.CaptureRatio}, {"leave-held", s.LeaveHeld}, {"second-attempts", s.SecondAttempts}} {
		if !(f.v >= 0 && f.v <= 1) {
			return cli.Usagef("--%s must be a fraction from 0 to 1", f.name)
		}
	}
	if cfg.providerID == "" {
		return cli.Usagef("--provider-id must not be empty")
	}
	return nil
}

func (cfg *driveConfig) validateDrive(cmd *cobra.Command) error {
	if cfg.loop.conc < 1 || cfg.loop.conc > 10000 {
		return cli.Usagef("--concurrency must be 1 to 10000")
	}
	if !(cfg.loop.rate >= 0) || cfg.loop.rate > 1e6 {
		return cli.Usagef("--rate must be 0 (closed loop) or a positive number of requests per second")
	}
	if cfg.loop.maxInflight < 1 || cfg.loop.maxInflight > 100000 {
		return cli.Usagef("--max-inflight must be 1 to 100000")
	}
	if cmd.Flags().Changed("max-inflight") && cfg.loop.rate == 0 {
		return cli.Usagef("--max-inflight is for the open loop: give --rate too (the closed loop's in-flight count is --concurrency)")
	}
	if cfg.duration < 0 || cfg.reconcile <= 0 || cfg.progress < 0 || cfg.sample < 100*time.Millisecond {
		return cli.Usagef("--duration and --progress must not be negative, --reconcile-timeout must be positive, --sample-every at least 100ms")
	}
	if cfg.giveUpAfter <= 0 || cfg.resolveFor <= 0 {
		return cli.Usagef("--give-up-after and --resolve-timeout must be positive")
	}
	cfg.thresholds = nil
	for _, e := range cfg.thresholdExprs {
		t, err := parseThreshold(e)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		cfg.thresholds = append(cfg.thresholds, t)
	}
	if cfg.rssLimitMB <= 0 {
		return cli.Usagef("--rss-limit must be positive")
	}
	if cfg.providerID == "" {
		return cli.Usagef("--provider-id must not be empty")
	}
	return nil
}

func (cfg *driveConfig) pickSeed(cmd *cobra.Command) {
	cfg.shape.Seed = cfg.seed
	if !cmd.Flags().Changed("seed") {
		cfg.shape.Seed = rand.Int64N(1 << 40)
	}
	cfg.shape.ProviderID = cfg.providerID
}

// runSession runs a storm or replay and maps its outcome to an exit error.
func runSession(ctx context.Context, cfg driveConfig, cmd *cobra.Command, h Hooks) error {
	s, err := newSession(cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), h)
	if err != nil {
		return err
	}
	defer s.close()
	rep, err := s.drive(ctx)
	if err != nil {
		return setupExit(err)
	}
	return s.finish(rep)
}

// setupExit is the exit error of a setup error: status 2, with the next step
// when the admin API was the cause.
func setupExit(err error) error {
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		return err
	}
	return &cli.ExitError{Code: exitSetup, Err: err}
}

const stormLong = `storm seeds accounts through the admin API, installs a signing secret (or
uses --secret-file), waits until ledgerd's keyring has it (by listing the
keyring's fingerprints, not by sending callbacks), and drives payout
lifecycles (authorize, then capture or release) and credits: in a closed
loop at --concurrency, or in an open loop at --rate. Deliveries are
duplicated, sent twice at once, or lose their answer, and every send
follows the service's retry policy (408, 429, 5xx and transport errors
retried with the same key). With --duration the storm runs in rounds of its
shape until the time has passed (a soak), and ledgerd's RSS, goroutines and
pool use are judged.

At the end it checks every account and hold through the admin API, that
every replay answered the same, and runs a reconciliation whose findings
are scoped to the run's prefix. It prints throughput and latency
percentiles per endpoint; --report writes JSON, --html one page of charts.`

func newStormCmd(h Hooks) *cobra.Command {
	var cfg driveConfig
	cmd := &cobra.Command{
		Use:     "storm",
		Short:   "Seed accounts, send a callback storm to a running ledgerd, check every invariant",
		Long:    stormLong,
		Example: "  loadtest storm --payouts 5000 --credits 1000 --html storm.html\n  loadtest storm --rate 800 --duration 5m --html soak.html",
		Args:    cli.NoArgs,
	}
	cli.ExitStatus(cmd, exitStatus)
	targetFlags(cmd, &cfg, secretUsage)
	shapeFlags(cmd, &cfg.shape, &cfg.seed, 1000, 200, 20)
	driveFlags(cmd, &cfg, true, 0)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg.cmd = "storm"
		if err := cfg.validateShape(); err != nil {
			return err
		}
		if err := cfg.validateDrive(cmd); err != nil {
			return err
		}
		for _, u := range [][2]string{{"callbacks", cfg.callbacks}, {"admin", cfg.admin}} {
			if err := validURL(u[0], u[1]); err != nil {
				return err
			}
		}
		cfg.pickSeed(cmd)
		return runSession(cmd.Context(), cfg, cmd, h)
	}
	return cmd
}

func newRecordCmd(h Hooks) *cobra.Command {
	var cfg driveConfig
	var out string
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Write a storm as JSON lines of plaintext claims (nothing is sent)",
		Long: `record writes a generated storm as JSON lines: a header (seed, prefix, accounts,
the fingerprint of --secret-file's key, never a secret), then one request per
line with its plaintext service claims and its delivery plan. "loadtest
replay" sends it.`,
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, "0  written\n2  usage error, or the file could not be written")
	shapeFlags(cmd, &cfg.shape, &cfg.seed, 1000, 200, 20)
	providerFlag(cmd, &cfg.providerID)
	cmd.Flags().StringVar(&cfg.secretFile, "secret-file", "", "file holding the Base64 signing secret the replay will use: its fingerprint goes into the header")
	cmd.Flags().StringVar(&out, "out", "-", "file to write the storm to (- for stdout)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := cfg.validateShape(); err != nil {
			return err
		}
		cfg.pickSeed(cmd)
		cfg.shape.Prefix = newPrefix(cfg.shape.Seed, h.now())
		p := Generate(cfg.shape)
		p.Header.CreatedAt = h.now().UTC()
		if cfg.secretFile != "" {
			key, err := readSecret(cfg.secretFile)
			if err != nil {
				return setupExit(err)
			}
			p.Header.SecretFingerprint = key.Fingerprint()
		}
		w := cmd.OutOrStdout()
		if out != "-" {
			f, err := os.OpenFile(out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
			if err != nil {
				return setupExit(err)
			}
			defer f.Close()
			w = f
		}
		if err := writePlan(w, p); err != nil {
			return setupExit(fmt.Errorf("writing the storm: %w", err))
		}
		if out != "-" {
			fmt.Fprintf(cmd.ErrOrStderr(), "loadtest record: %d requests for %d accounts, prefix %s, written to %s\n", len(p.Requests), len(p.Header.Accounts), p.Header.Prefix, out)
		}
		return nil
	}
	return cmd
}

func newReplayCmd(h Hooks) *cobra.Command {
	var cfg driveConfig
	var reprefix, keep bool
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Send a recorded storm, re-sealed with fresh iat/exp, and check it like a storm",
		Long: `replay sends a storm written by "loadtest record", each request sealed again
with fresh iat and exp, in a closed loop or at --rate, and checks it like a
storm. A recording already sent to this ledgerd (its first account exists)
is sent under a fresh prefix, since sent as recorded every answer would be a
stored one: --keep-prefix sends it as recorded anyway (and the report says
that it measured stored answers); --reprefix always uses a fresh prefix.`,
		Args: cli.ExactArgs(1),
	}
	cli.ExitStatus(cmd, exitStatus)
	targetFlags(cmd, &cfg, secretUsage)
	driveFlags(cmd, &cfg, false, 0)
	cmd.Flags().StringVar(&cfg.in, "in", "", "recorded storm to replay (instead of the argument)")
	cmd.Flags().BoolVar(&reprefix, "reprefix", false, "always send the recording under a fresh prefix, as a new storm")
	cmd.Flags().BoolVar(&keep, "keep-prefix", false, "send the recording as recorded even if it was sent to this ledgerd before (stored answers only)")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if cfg.in != "" {
			return cli.NoArgs(cmd, args)
		}
		if len(args) != 1 {
			return cli.Usagef("give the recorded storm: loadtest replay [flags] FILE")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.cmd = "replay"
		if cfg.in == "" {
			cfg.in = args[0]
		}
		if err := cfg.validateDrive(cmd); err != nil {
			return err
		}
		for _, u := range [][2]string{{"callbacks", cfg.callbacks}, {"admin", cfg.admin}} {
			if err := validURL(u[0], u[1]); err != nil {
				return err
			}
		}
		switch {
		case reprefix && keep:
			return cli.Usagef("--reprefix and --keep-prefix contradict each other")
		case reprefix:
			cfg.prefixMode = "fresh"
		case keep:
			cfg.prefixMode = "keep"
		default:
			cfg.prefixMode = "auto"
		}
		if _, err := os.Stat(cfg.in); err != nil {
			return setupExit(err)
		}
		return runSession(cmd.Context(), cfg, cmd, h)
	}
	return cmd
}

// benchConfig is `loadtest bench`.
type benchConfig struct {
	callbacks, admin, adminToken, providerID, secretFile string
	clients                                              []int
	duration, warmup                                     time.Duration
	accounts                                             int
	ceilingDB, report                                    string
	json                                                 bool
}

func newBenchCmd(h Hooks) *cobra.Command {
	var cfg benchConfig
	var dc driveConfig
	var clients string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Authorize+capture cycles at each client count, and the pgbench ceiling of the same server (--ceiling-db)",
		Long: `bench measures the adapter as docs/benchmarks.md says: closed-loop clients
authorize a random funded account and capture the hold, for --duration after
--warmup, at each of --clients; with --ceiling-db it then runs the embedded
pgbench reference scripts on that scratch database of ledgerd's Postgres
server for as long, and reports the ratio of the adapter's cycles/s to the
ceiling's, and the CPU per cycle of Postgres, ledgerd and the load
generator.`,
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, "0  every client count completed cycles (and its ceiling, when asked)\n1  a client count completed no cycle, or its ceiling could not be measured\n2  usage or setup error")
	targetFlags(cmd, &dc, secretUsage)
	fs := cmd.Flags()
	fs.StringVar(&clients, "clients", "16,64", "comma-separated client counts, one run each")
	fs.DurationVar(&cfg.duration, "duration", 20*time.Second, "measured window per run (adapter and each pgbench script)")
	fs.DurationVar(&cfg.warmup, "warmup", 3*time.Second, "run before each adapter window, not counted")
	fs.IntVar(&cfg.accounts, "accounts", 1000, "funded accounts the cycles pick from")
	fs.StringVar(&cfg.ceilingDB, "ceiling-db", "", "URL of a scratch database on ledgerd's Postgres server: run the pgbench ceiling there after each adapter run and report the ratio (its tables are dropped and recreated)")
	fs.StringVar(&cfg.report, "report", "", "file to write the JSON report to")
	fs.BoolVar(&cfg.json, "json", false, "print the report as JSON on stdout instead of the table")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg.callbacks, cfg.admin, cfg.adminToken, cfg.providerID, cfg.secretFile = dc.callbacks, dc.admin, dc.adminToken, dc.providerID, dc.secretFile
		for _, c := range strings.Split(clients, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || n < 1 || n > 1024 {
				return cli.Usagef("--clients %q: each must be 1 to 1024", clients)
			}
			cfg.clients = append(cfg.clients, n)
		}
		if cfg.duration < time.Second || cfg.warmup < 0 {
			return cli.Usagef("--duration must be at least 1s and --warmup not negative")
		}
		if cfg.accounts < 1 || cfg.accounts > 100000 {
			return cli.Usagef("--accounts must be 1 to 100000")
		}
		for _, u := range [][2]string{{"callbacks", cfg.callbacks}, {"admin", cfg.admin}} {
			if err := validURL(u[0], u[1]); err != nil {
				return err
			}
		}
		return bench(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), h)
	}
	return cmd
}
