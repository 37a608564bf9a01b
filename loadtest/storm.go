package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// Exit statuses of Run.
const (
	exitOK     = 0 // every check passed
	exitFailed = 1 // an invariant, consistency or request check failed
	exitSetup  = 2 // usage error, or the run could not be set up
)

// driveConfig is what storm, replay and spawn share.
type driveConfig struct {
	cmd        string
	callbacks  string
	admin      string
	adminToken string
	providerID string
	secretFile string
	shape      Shape
	seedGiven  bool
	seed       int64
	loop       loop
	duration   time.Duration
	report     string
	html       string
	json       bool
	reconcile  time.Duration
	// giveUpAfter and resolveFor: see runner.
	giveUpAfter, resolveFor time.Duration
	thresholdExprs          []string
	thresholds              []threshold
	progress                time.Duration
	sample                  time.Duration
	rssLimitMB              float64
	// replay
	in         string
	prefixMode string // "auto", "fresh" (--reprefix) or "keep" (--keep-prefix)
}

// session is one storm or replay against one ledgerd: an existing one
// (storm, replay) or one spawn started.
type session struct {
	cfg            driveConfig
	stdout, stderr io.Writer
	hooks          Hooks
	logf           func(format string, a ...any)

	hc      *http.Client // callbacks
	admHTTP *http.Client
	adm     *adminClient
	// key, when set, is a secret ledgerd loaded at start (spawn); else it
	// is read from --secret-file or installed.
	key      envelope.Key
	keyReady bool
	env      environment
	chaos    *chaos
	ceiling  func(ctx context.Context, key envelope.Key) *benchResult
}

func newTransport(conc int) *http.Transport {
	return &http.Transport{Proxy: nil, MaxIdleConns: 4*conc + 16, MaxIdleConnsPerHost: 4*conc + 16, IdleConnTimeout: 90 * time.Second}
}

// newSession connects to the ledgerd at cfg's URLs.
func newSession(cfg driveConfig, stdout, stderr io.Writer, h Hooks) (*session, error) {
	s := &session{cfg: cfg, stdout: stdout, stderr: stderr, hooks: h}
	s.logf = func(format string, a ...any) {
		fmt.Fprintf(stderr, "loadtest %s: %s\n", cfg.cmd, fmt.Sprintf(format, a...))
	}
	inflight := cfg.loop.conc
	if cfg.loop.rate > 0 {
		inflight = cfg.loop.maxInflight
	}
	s.hc = &http.Client{Transport: newTransport(inflight), Timeout: 30 * time.Second}
	s.admHTTP = &http.Client{Transport: newTransport(16)}
	adm, err := newAdminClient(cfg.admin, cfg.adminToken, s.admHTTP)
	if err != nil {
		return nil, cli.Usagef("--admin: %v", err)
	}
	s.adm = adm
	s.env = localEnvironment()
	return s, nil
}

// close drops the session's idle connections.
func (s *session) close() {
	s.hc.CloseIdleConnections()
	s.admHTTP.CloseIdleConnections()
}

// setupError is an error before the storm could run (exit status 2).
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

func setupf(format string, a ...any) error { return setupError{fmt.Errorf(format, a...)} }

// planSource yields the plans of a run: one recorded storm, or the rounds
// of a generated one.
type planSource struct {
	shape    Shape
	accounts []accountSeed
	fixed    *Plan
}

func (ps *planSource) plan(round int) Plan {
	if ps.fixed != nil {
		return *ps.fixed
	}
	if round == 0 {
		p := generateRound(ps.shape, 0, nil)
		ps.accounts = p.Header.Accounts
		return p
	}
	return generateRound(ps.shape, round, ps.accounts)
}

// drive runs the storm and its checks and returns the report. An error is
// a setup error: nothing was checked.
func (s *session) drive(ctx context.Context) (*Report, error) {
	cfg := s.cfg
	rep := &Report{Command: cfg.cmd, Callbacks: cfg.callbacks, Admin: cfg.admin, StartedAt: time.Now().UTC(), ProviderID: cfg.providerID}
	// The key, before anything is seeded: a ledgerd that cannot take it
	// must not be left with half a storm.
	// What is local first (the secret file), then the callbacks.
	if cfg.secretFile != "" && !s.keyReady {
		key, err := readSecret(cfg.secretFile)
		if err != nil {
			return nil, setupError{err}
		}
		s.key = key
	}
	if err := probeCallbacks(ctx, s.hc, cfg.callbacks); err != nil {
		return nil, setupError{err}
	}
	retire, err := s.prepareKey(ctx)
	if err != nil {
		return nil, err
	}
	defer retire()
	rep.SecretFingerprint = s.key.Fingerprint()
	src, err := s.planSource(ctx, rep)
	if err != nil {
		return nil, err
	}
	first := src.plan(0)
	rep.Prefix, rep.Seed = first.Header.Prefix, first.Header.Seed
	if first.Header.ProviderID != "" {
		rep.ProviderID = first.Header.ProviderID
	}
	m, err := s.seed(ctx, first)
	if err != nil {
		return nil, err
	}
	st := s.storm(ctx, src, first, m)
	var abort errAbort
	if errors.As(st.err, &abort) {
		return nil, setupError{abort}
	}
	s.describe(rep, st, first)
	if st.err != nil || ctx.Err() != nil {
		rep.Interrupted = true
		if st.err != nil && ctx.Err() == nil {
			rep.Notes = append(rep.Notes, "stopped: "+st.err.Error())
		}
	} else if err := s.check(ctx, rep, st, first, m); err != nil {
		return nil, err
	}
	rep.FinishedAt = time.Now().UTC()
	rep.OK = !rep.Interrupted
	for _, c := range rep.Checks {
		rep.OK = rep.OK && c.OK
	}
	return rep, nil
}

// probeCallbacks makes sure --callbacks is ledgerd's callback listener
// without sending a callback: a GET of a callback route is answered 405
// by the router (callbacks are POST), before any decryption. A wrong URL
// then fails at once with what to do, rather than after every request of
// the storm has been retried for a minute.
func probeCallbacks(ctx context.Context, hc *http.Client, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := strings.TrimSuffix(base, "/") + "/" + claims.Authorize
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return cli.Usagef("--callbacks: %v", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return cli.Callbacks.Explain(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		return fmt.Errorf("--callbacks %s does not look like ledgerd's callback listener (GET %s answered %d, want 405): check the address (LEDGER_LISTEN) and the prefix (LEDGER_CALLBACK_PREFIX, default /ledger)", base, u, resp.StatusCode)
	}
	return nil
}

// prepareKey installs a fresh secret unless --secret-file gave one, and
// waits until ledgerd's keyring holds it. The returned func retires an installed
// secret: only this run knows it, so no active key may outlive the run.
func (s *session) prepareKey(ctx context.Context) (func(), error) {
	if s.keyReady {
		return func() {}, nil
	}
	retire := func() {}
	if s.cfg.secretFile == "" {
		key, err := s.adm.generateSecret(ctx)
		if err != nil {
			return retire, setupError{err}
		}
		s.key = key
		retire = func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, _, err := retryAdmin(rctx, func(ctx context.Context) (struct{}, *adminapi.Response, error) {
				return struct{}{}, nil, s.adm.retireSecret(ctx, key.ID)
			}); err != nil {
				s.logf("retiring signing secret %s: %v", key.ID, err)
			}
		}
		s.logf("installed signing secret %s (fingerprint %s); it is retired at the end of the run", key.ID, key.Fingerprint())
	}
	if err := s.adm.waitForKey(ctx, s.key, s.cfg.secretFile); err != nil {
		retire()
		return func() {}, setupError{err}
	}
	return retire, nil
}

// seed builds the model of the first plan and seeds its accounts.
func (s *session) seed(ctx context.Context, first Plan) (*model, error) {
	m := newModel(first.Header.Prefix)
	if err := m.add(first); err != nil {
		return nil, setupf("%v", err)
	}
	s.logf("seeding %d accounts (prefix %s)", len(first.Header.Accounts), first.Header.Prefix)
	if err := seedAll(ctx, s.adm, first.Header.Accounts, min(s.cfg.loop.conc, 16), m); err != nil {
		return nil, setupf("seeding through the admin API: %w", cli.AdminAPI.Explain(err))
	}
	if s.env.Ledgerd == "" {
		s.env.Ledgerd = ledgerdGo(ctx, s.adm)
	}
	return m, nil
}

// stormResult is what sending the storm left for the report and checks.
type stormResult struct {
	x             *runner
	err           error // an interruption or an abort
	rounds        int
	phaseRequests [numPhases]int
	outages       []outage
	resources     resources
	// window is the time requests were started in (at most --duration);
	// drain the time after it that in-flight work took to finish.
	window, drain time.Duration
}

// storm sends the rounds (one, without --duration) with the progress line,
// the readings of /metrics and the chaos, then lets ledgerd idle and reads
// it once more.
func (s *session) storm(ctx context.Context, src *planSource, first Plan, m *model) stormResult {
	cfg := s.cfg
	client := &caller.Client{BaseURL: cfg.callbacks, Key: s.key, HTTP: s.hc}
	start := time.Now()
	smp := newSampler(s.adm, cfg.sample, start)
	before, _ := smp.read(ctx)
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go smp.run(sctx)

	st := stormResult{x: newRunner(client, cfg.loop, m, start)}
	st.x.giveUpAfter, st.x.resolveFor, st.x.logf = cfg.giveUpAfter, cfg.resolveFor, s.logf
	if cfg.duration > 0 {
		st.x.setDeadline(start.Add(cfg.duration))
	}
	prog := newProgress(s.stderr, s.hooks.Terminal, cfg.progress, "loadtest "+cfg.cmd, st.x, start, cfg.duration)
	prog.begin()
	if s.chaos != nil {
		s.chaos.begin(ctx, st.x, start, cfg.duration, prog)
	}
	for round := 0; round == 0 || cfg.duration > 0 && time.Since(start) < cfg.duration; round++ {
		p := first
		if round > 0 {
			p = src.plan(round)
			if st.err = m.add(p); st.err != nil {
				break
			}
			if err := fundAll(ctx, s.adm, p.Header.Accounts, min(cfg.loop.conc, 16), m); err != nil {
				st.err = fmt.Errorf("funding round %d: %w", round, cli.AdminAPI.Explain(err))
				break
			}
		}
		for _, r := range p.Requests {
			st.phaseRequests[r.Phase]++
		}
		st.rounds++
		if st.err = st.x.run(ctx, p); st.err != nil {
			break
		}
	}
	end := time.Since(start)
	st.window, st.drain = end, 0
	if cfg.duration > 0 && end > cfg.duration {
		st.window, st.drain = cfg.duration, end-cfg.duration
	}
	prog.end()
	if s.chaos != nil {
		st.outages = s.chaos.wait(st.err != nil)
	}
	// The idle ledgerd after the storm: our connections closed, a moment
	// for its goroutines to end.
	s.hc.CloseIdleConnections()
	if ctx.Err() == nil {
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
		}
	}
	after, _ := smp.read(ctx)
	stopSampling()
	smp.stop()
	st.resources = smp.summary(before.Goroutines, after.Goroutines, end.Seconds())
	return st
}

// describe puts the storm's figures into the report.
func (s *session) describe(rep *Report, st stormResult, first Plan) {
	x := st.x
	rep.Rounds = st.rounds
	rep.WindowSeconds, rep.DrainSeconds, rep.Unsent = round2(st.window.Seconds()), round2(st.drain.Seconds()), int(x.unsent.Load())
	rep.Settings = s.settings(first)
	for ph := range numPhases {
		rep.Phases = append(rep.Phases, phaseReport{Name: phaseNames[ph], Requests: st.phaseRequests[ph], Seconds: round2(x.phases[ph].Seconds())})
	}
	rep.Endpoints, rep.Overall = x.endpointReports()
	x.mu.Lock()
	rep.Series = x.tl.series()
	x.mu.Unlock()
	rep.Histograms = x.histograms()
	rep.Resources = &st.resources
	rep.Outages = st.outages
	rep.Environment = s.env
}

// check runs the checks from the outside: the replays, the requests, the
// ledger through the admin API, the reconciliation, and the soak and chaos
// when there were; then the ceiling when asked.
func (s *session) check(ctx context.Context, rep *Report, st stormResult, first Plan, m *model) error {
	cfg, x := s.cfg, st.x
	if s.hooks.BeforeCheck != nil {
		if err := s.hooks.BeforeCheck(ctx, first); err != nil {
			return setupf("before the check: %v", err)
		}
	}
	s.logf("checking %d accounts and %d payouts through the admin API", len(m.accOrder), len(m.order))
	// Holds placed since the run began, with a margin for ledgerd's clock.
	ledger, err := checkLedger(ctx, s.adm, m, min(cfg.loop.conc, 32), rep.StartedAt.Add(-5*time.Minute))
	if err != nil {
		return setupf("checking the ledger: %v", err)
	}
	repeated, diffs, nDiff := x.consistency()
	rep.Checks = append(rep.Checks, Check{Name: "replays: every 200 answer to one idempotency key decrypts to the same outcome, references and reason",
		OK: nDiff == 0, Checked: repeated, Failed: nDiff, Detail: diffs})
	x.mu.Lock()
	rep.Checks = append(rep.Checks, Check{Name: "requests: every request answered 200 approved with its references (no terminal 4xx, none unresolved)",
		OK: x.nProblem == 0, Checked: rep.Overall.Requests, Failed: x.nProblem, Detail: x.problems})
	rep.Failures, rep.FailureCount = x.problems, x.nProblem
	x.mu.Unlock()
	rep.Checks = append(rep.Checks, ledger...)
	for _, c := range ledger {
		rep.Overall.Lost += c.Failed
	}
	s.logf("reconciling (up to %s)", cfg.reconcile)
	rep.Reconciliation = reconcile(ctx, s.adm, m, cfg.reconcile)
	rep.Checks = append(rep.Checks, rep.Reconciliation.check())
	if cfg.duration >= time.Minute && s.chaos == nil {
		rep.Checks = append(rep.Checks, soakCheck(st.resources, cfg.rssLimitMB))
	}
	if s.chaos != nil {
		rep.Checks = append(rep.Checks, s.chaos.check(st.outages))
	}
	for _, t := range cfg.thresholds {
		rep.Checks = append(rep.Checks, t.check(rep))
	}
	if s.ceiling != nil && ctx.Err() == nil {
		rep.Ceiling = s.ceiling(ctx, s.key)
	}
	return nil
}

// planSource reads or generates the storm. A recording replayed against a
// ledgerd that already has its accounts was sent there before: by default
// it is sent under a fresh prefix, since sent as recorded every answer
// would be a stored one.
func (s *session) planSource(ctx context.Context, rep *Report) (*planSource, error) {
	cfg := s.cfg
	if cfg.cmd != "replay" {
		sh := cfg.shape
		sh.Prefix = newPrefix(sh.Seed, s.hooks.now())
		return &planSource{shape: sh}, nil
	}
	read := func(prefix string) (Plan, error) {
		f, err := os.Open(cfg.in)
		if err != nil {
			return Plan{}, setupError{err}
		}
		defer f.Close()
		p, err := readPlan(f, prefix)
		if err != nil {
			return Plan{}, setupf("%s: %v", cfg.in, err)
		}
		return p, nil
	}
	p, err := read("")
	if err != nil {
		return nil, err
	}
	fresh := cfg.prefixMode == "fresh"
	if cfg.prefixMode != "fresh" {
		_, _, gerr := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
			return s.adm.Accounts.Get(ctx, p.Header.Accounts[0].AccountID)
		})
		switch {
		case gerr == nil && cfg.prefixMode == "keep":
			note := fmt.Sprintf("this recording (prefix %s) was sent to this ledgerd before and is sent again as recorded (--keep-prefix): every answer is a stored one, so the figures measure stored answers, not decisions", p.Header.Prefix)
			s.logf("%s", note)
			rep.Notes = append(rep.Notes, note)
		case gerr == nil:
			fresh = true
			note := fmt.Sprintf("this recording's accounts (prefix %s) already exist on this ledgerd: it was sent here before, so it is sent under a fresh prefix (--keep-prefix sends it as recorded: stored answers only)", p.Header.Prefix)
			s.logf("%s", note)
			rep.Notes = append(rep.Notes, note)
		case !errors.Is(gerr, adminapi.ErrNotFound):
			return nil, setupf("reading account %s: %w", p.Header.Accounts[0].AccountID, cli.AdminAPI.Explain(gerr))
		}
	}
	if fresh {
		if p, err = read(newPrefix(p.Header.Seed, s.hooks.now())); err != nil {
			return nil, err
		}
	}
	if p.Header.ProviderID != "" && p.Header.ProviderID != cfg.providerID {
		// The provider is in the claims: the recorded one is what is sent.
		s.logf("the storm was recorded for provider %s; sending it as recorded", p.Header.ProviderID)
	}
	if fp := p.Header.SecretFingerprint; fp != "" && fp != s.key.Fingerprint() {
		s.logf("recorded with key %s, sending with key %s", fp, s.key.Fingerprint())
	}
	return &planSource{fixed: &p}, nil
}

func (s *session) settings(first Plan) settings {
	cfg := s.cfg
	st := settings{Accounts: len(first.Header.Accounts), Payouts: first.Header.Payouts, Credits: first.Header.Credits, Concurrency: cfg.loop.conc,
		Duplicates: cfg.shape.Duplicates, ConcurrentDupes: cfg.shape.ConcurrentDupes, Drop: cfg.shape.Drop, CaptureRatio: cfg.shape.CaptureRatio,
		LeaveHeld: cfg.shape.LeaveHeld, SecondAttempts: cfg.shape.SecondAttempts, Loop: "closed", Rate: cfg.loop.rate,
		DurationSeconds: cfg.duration.Seconds(), ReconcileTimeout: cfg.reconcile.String(), Chaos: s.chaos != nil}
	if cfg.loop.rate > 0 {
		st.Loop, st.MaxInflight = "open", cfg.loop.maxInflight
	}
	if cfg.cmd == "replay" {
		st.Duplicates, st.ConcurrentDupes, st.Drop = deliveryFractions(first)
		st.CaptureRatio, st.LeaveHeld, st.SecondAttempts = 0, 0, 0
		st.Payouts, st.Credits = countEndpoint(first, claims.Authorize), countEndpoint(first, claims.CreditAccount)
	}
	return st
}

func countEndpoint(p Plan, ep string) int {
	n := 0
	for _, r := range p.Requests {
		if r.Endpoint == ep && r.SecondOf == 0 {
			n++
		}
	}
	return n
}

// finish prints the report (as JSON with --json), writes its files and
// returns the exit error.
func (s *session) finish(rep *Report) error {
	if s.cfg.json {
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return &cli.ExitError{Code: exitSetup, Err: err}
		}
	} else {
		rep.print(s.stdout)
	}
	if s.cfg.report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(s.cfg.report, append(b, '\n'), 0o644); err != nil {
			return &cli.ExitError{Code: exitSetup, Err: fmt.Errorf("writing the report: %w", err)}
		}
	}
	if s.cfg.html != "" {
		if err := writeHTML(s.cfg.html, rep); err != nil {
			return &cli.ExitError{Code: exitSetup, Err: fmt.Errorf("writing the HTML report: %w", err)}
		}
		s.logf("HTML report written to %s", s.cfg.html)
	}
	if !rep.OK {
		return &cli.ExitError{Code: exitFailed}
	}
	return nil
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
