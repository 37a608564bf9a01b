package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
)

// Exit statuses of Run.
const (
	ExitOK      = 0 // every check passed
	ExitFailed  = 1 // an invariant, consistency or request check failed
	ExitSetup   = 2 // usage error, or the run could not be set up
	warmUpLimit = 10 * time.Second
)

// Hooks lets tests reach into a run.
type Hooks struct {
	// BeforeCheck, when set, runs after the storm and before the checks.
	BeforeCheck func(ctx context.Context, p Plan) error
	// Getenv replaces os.Getenv (LEDGER_ADMIN_TOKEN).
	Getenv func(string) string
	// Now replaces time.Now for the run prefix.
	Now func() time.Time
}

// Run is the whole program: args are what follows the command name. It
// returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunWith(ctx, args, stdout, stderr, Hooks{})
}

const usage = `usage: loadtest <command> [flags]

commands:
  storm    seed accounts, install a signing secret, send a callback storm, check every invariant
  record   write a storm as JSON lines of plaintext claims (nothing is sent)
  replay   send a recorded storm, re-sealed with fresh iat/exp, and check it like a storm
  bench    authorize+capture cycles at each client count, and the pgbench ceiling of the same server (--ceiling-db)

"loadtest <command> -h" lists the command's flags. Exit status: 0 every check passed,
1 an invariant, consistency or request check failed, 2 usage or setup error.
`

// RunWith is Run with hooks.
func RunWith(ctx context.Context, args []string, stdout, stderr io.Writer, h Hooks) int {
	if h.Getenv == nil {
		h.Getenv = os.Getenv
	}
	if h.Now == nil {
		h.Now = time.Now
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(stdout, usage)
			return ExitOK
		}
		fmt.Fprint(stderr, usage)
		return ExitSetup
	}
	cmd := args[0]
	if cmd == "help" {
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	if cmd == "bench" {
		return bench(ctx, args[1:], stdout, stderr, h)
	}
	if cmd != "storm" && cmd != "record" && cmd != "replay" {
		fmt.Fprintf(stderr, "loadtest: unknown command %q\n\n%s", cmd, usage)
		return ExitSetup
	}
	cfg, err := parse(cmd, args[1:], stderr, h)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		if !errors.Is(err, errReported) {
			fmt.Fprintf(stderr, "loadtest %s: %v\n", cmd, err)
		}
		return ExitSetup
	}
	switch cmd {
	case "record":
		return record(cfg, stdout, stderr, h)
	default:
		return drive(ctx, cfg, stdout, stderr, h)
	}
}

// config is the parsed command line.
type config struct {
	cmd        string
	callbacks  string
	admin      string
	adminToken string
	providerID string
	shape      Shape
	conc       int
	rate       float64
	report     string
	secretFile string
	out, in    string
	reprefix   bool
}

var errReported = errors.New("reported")

func parse(cmd string, args []string, stderr io.Writer, h Hooks) (config, error) {
	cfg := config{cmd: cmd, adminToken: h.Getenv("LEDGER_ADMIN_TOKEN")}
	fs := flag.NewFlagSet("loadtest "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	s := &cfg.shape
	seed := fs.Int64("seed", 0, "seed of the generated storm (default: random); the run prefix adds the time")
	fs.StringVar(&cfg.providerID, "provider-id", "local", "this provider's account ID (ledgerd's LEDGER_PROVIDER_ID)")
	fs.StringVar(&cfg.secretFile, "secret-file", "", "file holding a Base64 signing secret ledgerd knows (default: install a fresh one through the admin API)")
	if cmd == "storm" || cmd == "record" {
		fs.IntVar(&s.Accounts, "accounts", 20, "customer accounts to seed")
		fs.IntVar(&s.Payouts, "payouts", 1000, "payout lifecycles (authorize, then capture or release)")
		fs.IntVar(&s.Credits, "credits", 200, "credit-account requests")
		fs.Float64Var(&s.Duplicates, "duplicates", 0.05, "fraction of requests delivered twice in sequence")
		fs.Float64Var(&s.ConcurrentDupes, "concurrent-dupes", 0.02, "fraction of requests sent twice at once")
		fs.Float64Var(&s.Drop, "drop", 0.02, "fraction of requests whose first answer is lost (then retried with the same key)")
		fs.Float64Var(&s.CaptureRatio, "capture-ratio", 0.8, "fraction of settled payouts captured; the rest are released")
		fs.Float64Var(&s.LeaveHeld, "leave-held", 0.1, "fraction of payouts left held (unclaimed)")
		fs.Float64Var(&s.SecondAttempts, "second-attempts", 0.05, "fraction of authorizes and credits sent again under a new key (must answer the same reference)")
	}
	if cmd == "record" {
		fs.StringVar(&cfg.out, "out", "-", "file to write the storm to (- for stdout)")
	} else {
		fs.StringVar(&cfg.callbacks, "callbacks", "http://127.0.0.1:8080/ledger", "base URL of ledgerd's callbacks")
		fs.StringVar(&cfg.admin, "admin", "http://127.0.0.1:8081", "base URL of ledgerd's admin API (bearer token: env LEDGER_ADMIN_TOKEN)")
		fs.IntVar(&cfg.conc, "concurrency", 16, "requests in flight")
		fs.Float64Var(&cfg.rate, "rate", 0, "requests started per second (0: flat out)")
		fs.StringVar(&cfg.report, "report", "", "file to write the JSON report to")
	}
	if cmd == "replay" {
		fs.StringVar(&cfg.in, "in", "", "recorded storm to replay (or the first argument)")
		fs.BoolVar(&cfg.reprefix, "reprefix", false, "replace the recorded run prefix with a fresh one, so a recording can be replayed as a new storm")
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	rest := fs.Args()
	if cmd == "replay" && cfg.in == "" && len(rest) > 0 {
		cfg.in, rest = rest[0], rest[1:]
		if err := fs.Parse(rest); err != nil {
			return cfg, err
		}
		rest = fs.Args()
	}
	if len(rest) > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", rest)
	}
	s.Seed = *seed
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if !explicit["seed"] {
		s.Seed = rand.Int64N(1 << 40)
	}
	s.ProviderID = cfg.providerID
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if cfg.providerID == "" {
		bad("--provider-id must not be empty")
	}
	if cmd == "storm" || cmd == "record" {
		if s.Accounts < 1 || s.Accounts > 100000 {
			bad("--accounts must be 1 to 100000")
		}
		if s.Payouts < 0 || s.Credits < 0 || s.Payouts+s.Credits == 0 || s.Payouts > 10_000_000 || s.Credits > 10_000_000 {
			bad("--payouts and --credits must be 0 to 10000000, not both 0")
		}
		for name, v := range map[string]float64{"duplicates": s.Duplicates, "concurrent-dupes": s.ConcurrentDupes, "drop": s.Drop,
			"capture-ratio": s.CaptureRatio, "leave-held": s.LeaveHeld, "second-attempts": s.SecondAttempts} {
			if !(v >= 0 && v <= 1) {
				bad("--%s must be a fraction from 0 to 1", name)
			}
		}
	}
	if cmd != "record" {
		if cfg.conc < 1 || cfg.conc > 10000 {
			bad("--concurrency must be 1 to 10000")
		}
		if !(cfg.rate >= 0) {
			bad("--rate must be 0 (flat out) or a positive number of requests per second")
		}
		for name, v := range map[string]string{"callbacks": cfg.callbacks, "admin": cfg.admin} {
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad("--%s %q is not an http(s) URL", name, v)
			}
		}
	}
	if cmd == "replay" && cfg.in == "" {
		bad("give the recorded storm: loadtest replay [flags] FILE")
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "loadtest %s: %s\n", cmd, p)
		}
		return cfg, errReported
	}
	return cfg, nil
}

func readSecret(path string) (envelope.Key, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return envelope.Key{}, fmt.Errorf("--secret-file: %w", err)
	}
	secret, err := envelope.ParseSecret(string(raw))
	if err != nil {
		return envelope.Key{}, fmt.Errorf("--secret-file %s: %w", path, err)
	}
	return envelope.Key{ID: path, Secret: secret}, nil
}

func record(cfg config, stdout, stderr io.Writer, h Hooks) int {
	cfg.shape.Prefix = NewPrefix(cfg.shape.Seed, h.Now())
	p := Generate(cfg.shape)
	p.Header.CreatedAt = h.Now().UTC()
	if cfg.secretFile != "" {
		key, err := readSecret(cfg.secretFile)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest record: %v\n", err)
			return ExitSetup
		}
		p.Header.SecretFingerprint = key.Fingerprint()
	}
	w := stdout
	if cfg.out != "-" {
		f, err := os.OpenFile(cfg.out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest record: %v\n", err)
			return ExitSetup
		}
		defer f.Close()
		w = f
	}
	if err := Write(w, p); err != nil {
		fmt.Fprintf(stderr, "loadtest record: writing the storm: %v\n", err)
		return ExitSetup
	}
	if cfg.out != "-" {
		fmt.Fprintf(stderr, "loadtest record: %d requests for %d accounts, prefix %s, written to %s\n", len(p.Requests), len(p.Header.Accounts), p.Header.Prefix, cfg.out)
	}
	return ExitOK
}

// drive runs storm and replay: set up, seed, send, check, report.
func drive(ctx context.Context, cfg config, stdout, stderr io.Writer, h Hooks) int {
	started := time.Now().UTC()
	setupErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "loadtest %s: %s\n", cfg.cmd, fmt.Sprintf(format, a...))
		return ExitSetup
	}
	var plan Plan
	if cfg.cmd == "replay" {
		f, err := os.Open(cfg.in)
		if err != nil {
			return setupErr("%v", err)
		}
		prefix := ""
		if cfg.reprefix {
			prefix = NewPrefix(cfg.shape.Seed, h.Now())
		}
		plan, err = Read(f, prefix)
		f.Close()
		if err != nil {
			return setupErr("%s: %v", cfg.in, err)
		}
		if plan.Header.ProviderID != "" && plan.Header.ProviderID != cfg.providerID {
			// The provider is in the claims: the recorded one is what is sent.
			fmt.Fprintf(stderr, "loadtest replay: the storm was recorded for provider %s; sending it as recorded\n", plan.Header.ProviderID)
			cfg.providerID = plan.Header.ProviderID
		}
	} else {
		cfg.shape.Prefix = NewPrefix(cfg.shape.Seed, h.Now())
		plan = Generate(cfg.shape)
	}
	transport := &http.Transport{Proxy: nil, MaxIdleConns: 4*cfg.conc + 16, MaxIdleConnsPerHost: 4*cfg.conc + 16, IdleConnTimeout: 90 * time.Second}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	adm, err := newAdminClient(cfg.admin, cfg.adminToken, hc)
	if err != nil {
		return setupErr("--admin: %v", err)
	}

	var key envelope.Key
	if cfg.secretFile != "" {
		var err error
		if key, err = readSecret(cfg.secretFile); err != nil {
			return setupErr("%v", err)
		}
	} else {
		secret, id, fp, err := adm.generateSecret(ctx)
		if err != nil {
			return setupErr("%v", err)
		}
		raw, err := envelope.ParseSecret(secret)
		if err != nil {
			return setupErr("the generated signing secret: %v", err)
		}
		key = envelope.Key{ID: id, Secret: raw}
		// Only this run holds the secret: retire it when the run ends, so no
		// active key outlives the one process that knows it.
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := adm.retireSecret(rctx, id); err != nil {
				fmt.Fprintf(stderr, "loadtest %s: retiring signing secret %s: %v\n", cfg.cmd, id, err)
			}
		}()
		if key.Fingerprint() != fp {
			return setupErr("the generated secret's fingerprint is %s, the admin API said %s", key.Fingerprint(), fp)
		}
		fmt.Fprintf(stderr, "loadtest %s: installed signing secret %s (fingerprint %s); it is retired at the end of the run\n", cfg.cmd, id, fp)
	}
	if fp := plan.Header.SecretFingerprint; cfg.cmd == "replay" && fp != "" && fp != key.Fingerprint() {
		fmt.Fprintf(stderr, "loadtest replay: recorded with key %s, sending with key %s\n", fp, key.Fingerprint())
	}
	client := &callbacks.Client{BaseURL: cfg.callbacks, Key: key, HTTP: hc}
	if err := warmUp(ctx, client, cfg.providerID); err != nil {
		return setupErr("%v", err)
	}
	if err := seedAll(ctx, adm, plan.Header.Accounts, cfg.conc); err != nil {
		return setupErr("seeding through the admin API: %v", err)
	}

	x := newRunner(plan, client, cfg.conc, cfg.rate)
	runErr := x.run(ctx)

	rep := &Report{Command: cfg.cmd, Prefix: plan.Header.Prefix, Seed: plan.Header.Seed, ProviderID: cfg.providerID,
		Callbacks: cfg.callbacks, Admin: cfg.admin, SecretFingerprint: key.Fingerprint(), StartedAt: started,
		Settings: Settings{Accounts: len(plan.Header.Accounts), Payouts: plan.Header.Payouts, Credits: plan.Header.Credits, Concurrency: cfg.conc,
			Duplicates: cfg.shape.Duplicates, ConcurrentDupes: cfg.shape.ConcurrentDupes, Drop: cfg.shape.Drop, CaptureRatio: cfg.shape.CaptureRatio,
			LeaveHeld: cfg.shape.LeaveHeld, SecondAttempts: cfg.shape.SecondAttempts, Rate: cfg.rate}}
	if cfg.cmd == "replay" {
		rep.Settings.Duplicates, rep.Settings.ConcurrentDupes, rep.Settings.Drop = deliveryFractions(plan)
		rep.Settings.CaptureRatio, rep.Settings.LeaveHeld, rep.Settings.SecondAttempts = 0, 0, 0
	}
	for ph := range numPhases {
		n := 0
		for _, r := range plan.Requests {
			if r.Phase == ph {
				n++
			}
		}
		rep.Phases = append(rep.Phases, PhaseReport{Name: phaseNames[ph], Requests: n, Seconds: round2(x.phases[ph].Seconds())})
	}
	rep.Endpoints, rep.Overall = x.endpointReports()

	if runErr != nil {
		rep.Interrupted = true
	} else {
		if h.BeforeCheck != nil {
			if err := h.BeforeCheck(ctx, plan); err != nil {
				return setupErr("before the check: %v", err)
			}
		}
		checks, err := checkLedger(ctx, adm, plan, x, cfg.conc)
		if err != nil {
			return setupErr("checking the ledger: %v", err)
		}
		repeated, diffs, nDiff := x.consistency()
		rep.Checks = append(rep.Checks, Check{Name: "replays: every 200 answer to one idempotency key decrypts to the same outcome, references and reason",
			OK: nDiff == 0, Checked: repeated, Failed: nDiff, Detail: diffs})
		x.mu.Lock()
		rep.Checks = append(rep.Checks, Check{Name: "requests: every request answered 200 approved with its references (no terminal 4xx, none given up)",
			OK: x.nProblem == 0, Checked: rep.Overall.Requests, Failed: x.nProblem, Detail: x.problems})
		rep.Failures, rep.FailureCount = x.problems, x.nProblem
		x.mu.Unlock()
		rep.Checks = append(rep.Checks, checks...)
		rep.Reconciliation = reconcile(ctx, adm)
	}
	rep.FinishedAt = time.Now().UTC()
	rep.OK = !rep.Interrupted && rep.Reconciliation.Critical == 0
	for _, c := range rep.Checks {
		rep.OK = rep.OK && c.OK
	}
	rep.Print(stdout)
	if cfg.report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.report, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "loadtest %s: writing the report: %v\n", cfg.cmd, err)
			return ExitSetup
		}
	}
	if !rep.OK {
		return ExitFailed
	}
	return ExitOK
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func deliveryFractions(p Plan) (dup, conc, drop float64) {
	if len(p.Requests) == 0 {
		return 0, 0, 0
	}
	for _, r := range p.Requests {
		if r.Delivery.Duplicate {
			dup++
		}
		if r.Delivery.Concurrent {
			conc++
		}
		if r.Delivery.Drop {
			drop++
		}
	}
	n := float64(len(p.Requests))
	return round2(dup / n), round2(conc / n), round2(drop / n)
}

func reconcile(ctx context.Context, adm *adminClient) Reconciliation {
	id, findings, available, err := adm.reconcile(ctx)
	switch {
	case !available:
		return Reconciliation{Note: "reconciliation endpoint not available"}
	case err != nil:
		// Reported as a critical problem: the ledger could not be checked
		// from the inside.
		return Reconciliation{Available: true, Note: "failed", Critical: 1, Findings: []Finding{{Kind: "reconciliation_failed", Severity: "critical",
			Detail: err.Error()}}}
	}
	r := Reconciliation{Available: true, RunID: id, Findings: findings}
	for _, f := range findings {
		if f.Severity == "critical" {
			r.Critical++
		}
	}
	return r
}

// warmUp waits until ledgerd opens callbacks sealed with the key: a freshly
// installed secret reaches every replica's keyring within a few seconds, so
// 400 undecryptable (and transport errors) are retried for up to 10 s here
// and nowhere else. The probe is a credit-account with only providerID:
// once opened it is refused as invalid claims (400) before any effect, or
// 403 when ledgerd serves another provider.
func warmUp(ctx context.Context, c *callbacks.Client, providerID string) error {
	deadline := time.Now().Add(warmUpLimit)
	opened := 0
	var last string
	for opened < 3 {
		r, err := c.Send(ctx, callbacks.CreditAccount, map[string]any{"providerID": providerID})
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && r == nil:
			opened, last = 0, "transport error: "+err.Error()
		case r.Status == http.StatusBadRequest && strings.HasSuffix(problemType(r), "undecryptable"):
			opened, last = 0, "400 undecryptable: ledgerd does not know the signing secret"
		case r.Status == http.StatusForbidden:
			return fmt.Errorf("ledgerd refuses provider %q (403): set --provider-id to its LEDGER_PROVIDER_ID", providerID)
		case r.Status == http.StatusBadRequest || r.Status == http.StatusOK:
			opened++
			continue
		default:
			opened, last = 0, fmt.Sprintf("status %d %s", r.Status, problemType(r))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the callbacks at %s do not open with the signing secret after %s; last: %s", c.BaseURL, warmUpLimit, last)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func seedAll(ctx context.Context, adm *adminClient, accounts []AccountSeed, conc int) error {
	// The first account alone: on a fresh database it also creates the
	// system accounts of the currency, which concurrent first creations
	// race on (ledgerd answered 500 to that race when this was written).
	if err := adm.seed(ctx, accounts[0]); err != nil {
		return err
	}
	accounts = accounts[1:]
	jobs := make(chan AccountSeed)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range min(conc, len(accounts)) {
		wg.Go(func() {
			for a := range jobs {
				if err := adm.seed(ctx, a); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, a := range accounts {
		jobs <- a
	}
	close(jobs)
	wg.Wait()
	return first
}
