package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/provider-ledger/adapter/internal/datadir"

	"github.com/provider-ledger/adapter/callbacks/caller"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// spawn: build ledgerd from this checkout, start it on a scratch database
// (its own embedded Postgres cluster by default, or a scratch database
// created on the server of DATABASE_URL), storm it, check it, optionally
// measure the ceiling and bring chaos, then tear everything down.

type spawnConfig struct {
	drive       driveConfig
	databaseURL string
	ledgerdBin  string
	workDir     string
	keep        bool
	chaos       bool
	chaosPG     bool
	ceiling     bool
	ceilClients int
	ceilDur     time.Duration
	readyWait   time.Duration
	groupCommit int
}

const spawnLong = `spawn is loadtest in one command, for a fresh machine: it builds ledgerd from
this checkout (go build ./cmd/ledgerd, or --ledgerd-bin), starts it on
loopback ports with a fresh admin token and signing secret, on a scratch
database: by default ledgerd's own embedded Postgres cluster in a temporary
data directory (the PostgreSQL server packages must be installed); with
DATABASE_URL (or --database-url) a scratch database created on that server.
Then it runs a storm (every storm flag applies; rounds of its shape for
--duration, 20s by default, or one storm of the counts with --duration 0),
checks it, optionally measures the pgbench ceiling (--ceiling) and tears
down: ledgerd is stopped
and the data directory, or the scratch database, is removed (--keep keeps
them; a failed run keeps the data directory and says where).

--chaos kills ledgerd with SIGKILL and restarts it three times during the
storm and restarts Postgres once (an immediate stop, then a start): it runs
for --duration (40s unless given), and every check must still hold. With
DATABASE_URL, Postgres is a shared server that spawn does not own: give
--chaos-postgres=false to kill only ledgerd.`

func newSpawnCmd(h Hooks) *cobra.Command {
	var cfg spawnConfig
	cmd := &cobra.Command{
		Use:   "spawn",
		Short: "Build and start ledgerd on a scratch database, storm it, check it, tear it down",
		Long:  spawnLong,
		Example: "  loadtest spawn --html report.html\n  loadtest spawn --chaos --html chaos.html\n" +
			"  loadtest spawn --duration 5m --rate 600 --html soak.html\n  loadtest spawn --ceiling",
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, exitStatus)
	d := &cfg.drive
	shapeFlags(cmd, &d.shape, &d.seed, 8000, 2000, 100)
	driveFlags(cmd, d, true, 20*time.Second)
	providerFlag(cmd, &d.providerID)
	fs := cmd.Flags()
	fs.StringVar(&cfg.databaseURL, "database-url", "", "a Postgres server to create the scratch database on (unset: ledgerd's embedded cluster in a temporary directory)")
	cli.Env(fs, "database-url", "DATABASE_URL")
	fs.StringVar(&cfg.ledgerdBin, "ledgerd-bin", "", "a ledgerd binary to run instead of building ./cmd/ledgerd from the checkout")
	fs.StringVar(&cfg.workDir, "work-dir", "", "directory for the binary, data and logs (default: a new temporary directory)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work directory and the scratch database at the end")
	fs.BoolVar(&cfg.chaos, "chaos", false, "kill ledgerd (SIGKILL) and restart it 3 times, and restart Postgres once, during the storm")
	fs.BoolVar(&cfg.chaosPG, "chaos-postgres", true, "with --chaos, restart Postgres too (only spawn's own embedded cluster)")
	fs.BoolVar(&cfg.ceiling, "ceiling", false, "after the checks, run the bench cycles and the pgbench ceiling on the same Postgres (needs psql and pgbench)")
	fs.IntVar(&cfg.ceilClients, "ceiling-clients", 16, "with --ceiling: clients of the bench cycles and of pgbench")
	fs.DurationVar(&cfg.ceilDur, "ceiling-duration", 10*time.Second, "with --ceiling: measured window of the cycles and of each pgbench script")
	fs.IntVar(&cfg.groupCommit, "group-commit", -1, "ledgerd's LEDGER_GROUP_COMMIT: transactions of callbacks in flight under group commit (0: off; -1: ledgerd's default)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		d.cmd = "spawn"
		if err := d.validateShape(); err != nil {
			return err
		}
		if err := d.validateDrive(cmd); err != nil {
			return err
		}
		if cfg.chaos && cfg.chaosPG && cfg.databaseURL != "" {
			return cli.Usagef("--chaos restarts Postgres, which spawn does only to its own embedded cluster, not to the server of DATABASE_URL: unset DATABASE_URL, or give --chaos-postgres=false to kill only ledgerd")
		}
		if cfg.chaos && !cmd.Flags().Changed("duration") {
			d.duration = 40 * time.Second
		}
		if cfg.chaos && d.duration < 15*time.Second {
			return cli.Usagef("--chaos needs a --duration of at least 15s to fit its outages")
		}
		if cfg.groupCommit < -1 {
			return cli.Usagef("--group-commit must be -1 (ledgerd's default), 0 (off) or a number of lanes")
		}
		if cfg.ceilClients < 1 || cfg.ceilClients > 1024 || cfg.ceilDur < time.Second {
			return cli.Usagef("--ceiling-clients must be 1 to 1024 and --ceiling-duration at least 1s")
		}
		cfg.readyWait = 2 * time.Minute
		d.pickSeed(cmd)
		return spawn(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr(), h)
	}
	return cmd
}

// spawned is a running ledgerd that spawn started, and what it needs to
// start it again and to tear it down.
type spawned struct {
	logf      func(format string, a ...any)
	bin       string
	env       []string
	logPath   string
	dataDir   string // LEDGER_DATA_DIR
	embedded  bool
	adminURL  string
	callbacks string
	token     string
	secret    []byte
	hc        *http.Client

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	waitEr error

	// scratch databases to drop, and the server's URL (DATABASE_URL mode).
	serverURL string
	scratch   []string
}

// spawn runs `loadtest spawn` with cfg: ledgerd on a scratch database,
// stormed, checked and torn down.
func spawn(ctx context.Context, cfg spawnConfig, stdout, stderr io.Writer, h Hooks) error {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "loadtest spawn: %s\n", fmt.Sprintf(format, a...)) }
	work, made, err := spawnWorkDir(cfg.workDir)
	if err != nil {
		return setupExit(err)
	}
	sp := &spawned{logf: logf, logPath: filepath.Join(work, "ledgerd.log"), dataDir: filepath.Join(work, "data"),
		embedded: cfg.databaseURL == "", hc: &http.Client{Timeout: 5 * time.Second}}
	failed := true
	defer func() { sp.cleanUp(ctx, work, made, cfg.keep, failed) }()

	root, err := sp.launch(ctx, cfg, work)
	if err != nil {
		return setupExit(err)
	}
	s, err := sp.newSession(ctx, cfg, root, stdout, stderr, h)
	if err != nil {
		return err
	}
	defer s.close()
	rep, err := s.drive(ctx)
	if err != nil {
		return setupExit(err)
	}
	// An interrupted run is no failure to inspect: it is torn down.
	failed = !rep.OK && !rep.Interrupted
	if failed && !cfg.keep {
		rep.Notes = append(rep.Notes, "spawn keeps its work directory after a failed run: "+work)
	}
	// Tear down before printing, so that the report is the last thing said.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	sp.teardown(tctx)
	cancel()
	return s.finish(rep)
}

// spawnWorkDir makes the work directory dir, or a new temporary one when
// dir is empty (made reports that), reachable by the postgres user.
func spawnWorkDir(dir string) (work string, made bool, err error) {
	work = dir
	if work == "" {
		if work, err = os.MkdirTemp("", "loadtest-spawn-"); err != nil {
			return "", false, err
		}
		made = true
	} else if err := os.MkdirAll(work, 0o700); err != nil {
		return "", false, err
	}
	// As root, ledgerd's embedded Postgres runs as the postgres user, which
	// must be able to reach the data directory inside.
	_ = os.Chmod(work, 0o711)
	return work, made, nil
}

// cleanUp tears ledgerd down at the end of spawn, then keeps the work
// directory (with --keep, or after a failed run, saying where) or removes
// it, and drops the scratch databases unless kept.
func (sp *spawned) cleanUp(ctx context.Context, work string, made, keep, failed bool) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	sp.teardown(tctx)
	switch {
	case keep:
		sp.logf("kept %s (ledgerd.log, data)%s", work, sp.keptDB())
	case failed:
		sp.logf("the run failed: kept %s (ledgerd.log, data) for inspection; remove it when done", work)
		sp.dropScratch(tctx)
	default:
		sp.dropScratch(tctx)
		if made {
			_ = os.RemoveAll(work)
		} else {
			_ = os.RemoveAll(filepath.Join(work, "data"))
		}
	}
}

// launch builds (or takes) ledgerd, configures it, starts it and waits
// until it is ready; it returns the checkout's root ("" with a binary
// given).
func (sp *spawned) launch(ctx context.Context, cfg spawnConfig, work string) (string, error) {
	root, err := sp.build(ctx, cfg.ledgerdBin, work)
	if err != nil {
		return "", err
	}
	if err := sp.configure(ctx, cfg); err != nil {
		return "", err
	}
	sp.logf("starting ledgerd (%s; callbacks %s, admin %s, log %s)", sp.describeDB(), sp.callbacks, sp.adminURL, sp.logPath)
	if err := sp.startLedgerd(); err != nil {
		return "", err
	}
	if err := sp.waitReady(ctx, cfg.readyWait); err != nil {
		return "", err
	}
	return root, nil
}

// newSession opens the storm's session on the spawned ledgerd with its
// secret, describes the environment, and arms the chaos and the ceiling
// when asked for.
func (sp *spawned) newSession(ctx context.Context, cfg spawnConfig, root string, stdout, stderr io.Writer, h Hooks) (*session, error) {
	d := cfg.drive
	d.callbacks, d.admin, d.adminToken = sp.callbacks, sp.adminURL, sp.token
	s, err := newSession(d, stdout, stderr, h)
	if err != nil {
		return nil, err
	}
	s.key, s.keyReady = envelope.Key{ID: "spawn", Secret: sp.secret}, true
	s.env.Ledgerd = binaryVersion(sp.bin)
	if root != "" {
		s.env.Commit = gitCommit(ctx, root)
	}
	s.env.Postgres = sp.postgresVersion(ctx)
	s.env.Database = sp.describeDB()
	if cfg.chaos {
		s.chaos = newChaos(sp, cfg.chaosPG)
		sp.logf("chaos: %s during a %s storm", s.chaos.describe(), d.duration)
	}
	if cfg.ceiling {
		s.ceiling = func(ctx context.Context, key envelope.Key) *benchResult {
			return sp.ceiling(ctx, s, key, d.providerID, cfg.ceilClients, cfg.ceilDur)
		}
	}
	return s, nil
}

// build builds ledgerd from the checkout into work, unless bin names one
// to run; it returns the checkout's root ("" with bin).
func (sp *spawned) build(ctx context.Context, bin, work string) (string, error) {
	if bin != "" {
		sp.bin = bin
		return "", nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sp.bin = filepath.Join(work, "ledgerd")
	sp.logf("building ledgerd from %s", root)
	b := exec.CommandContext(ctx, goTool(), "build", "-o", sp.bin, "./cmd/ledgerd")
	b.Dir = root
	if out, err := b.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ledgerd: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return root, nil
}

// goTool is the go command: on PATH, else the one of this binary's GOROOT.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// moduleRoot finds the adapter's source tree from the working directory
// up (internal/datadir.Root: its go.mod and cmd/ledgerd).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if root := datadir.Root(dir); root != "" {
		return root, nil
	}
	return "", errors.New("not inside a checkout of the adapter (no go.mod with cmd/ledgerd above the working directory): run spawn from the checkout, or give --ledgerd-bin")
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// configure picks ports and secrets and prepares the database.
func (sp *spawned) configure(ctx context.Context, cfg spawnConfig) error {
	cbPort, err := datadir.FreePort()
	if err != nil {
		return err
	}
	admPort, err := datadir.FreePort()
	if err != nil {
		return err
	}
	sp.callbacks = fmt.Sprintf("http://127.0.0.1:%d/ledger", cbPort)
	sp.adminURL = fmt.Sprintf("http://127.0.0.1:%d", admPort)
	sp.token = hex.EncodeToString(randomBytes(24))
	sp.secret = randomBytes(32)
	env := map[string]string{
		"LEDGER_LISTEN":          fmt.Sprintf("127.0.0.1:%d", cbPort),
		"LEDGER_ADMIN_LISTEN":    fmt.Sprintf("127.0.0.1:%d", admPort),
		"LEDGER_ADMIN_TOKEN":     sp.token,
		"LEDGER_PROVIDER_ID":     cfg.drive.providerID,
		"LEDGER_SIGNING_SECRETS": base64.StdEncoding.EncodeToString(sp.secret),
		"LEDGER_DATA_DIR":        sp.dataDir,
		"LEDGER_RECONCILE_EVERY": "0",
	}
	if !sp.embedded {
		name := "loadtest_" + strings.ToLower(hex.EncodeToString(randomBytes(6)))
		dbURL, server, err := withDatabase(cfg.databaseURL, name)
		if err != nil {
			return err
		}
		sp.serverURL = server
		if err := execSQL(ctx, server, `CREATE DATABASE "`+name+`"`); err != nil {
			return fmt.Errorf("creating the scratch database %s: %w", name, err)
		}
		sp.scratch = append(sp.scratch, name)
		env["DATABASE_URL"] = dbURL
		env["LEDGER_KEK"] = base64.StdEncoding.EncodeToString(randomBytes(32))
	}
	if cfg.groupCommit >= 0 {
		env["LEDGER_GROUP_COMMIT"] = strconv.Itoa(cfg.groupCommit)
	}
	// ledgerd's configuration is spawn's alone: nothing of the caller's
	// environment that ledgerd reads is passed on.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LEDGER_") || strings.HasPrefix(k, "SERVICE_") || k == "DATABASE_URL" {
			continue
		}
		sp.env = append(sp.env, kv)
	}
	for k, v := range env {
		sp.env = append(sp.env, k+"="+v)
	}
	return nil
}

func (sp *spawned) describeDB() string {
	if sp.embedded {
		return "embedded cluster in " + sp.dataDir
	}
	u, _ := url.Parse(sp.serverURL)
	host := ""
	if u != nil {
		host = u.Host
	}
	return fmt.Sprintf("scratch database %s on %s", strings.Join(sp.scratch[:min(1, len(sp.scratch))], ""), host)
}

func (sp *spawned) keptDB() string {
	if len(sp.scratch) == 0 {
		return ""
	}
	return " and the scratch database " + strings.Join(sp.scratch, ", ")
}

// withDatabase returns dbURL naming database name, and naming the
// server's postgres database.
func withDatabase(dbURL, name string) (string, string, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", "", cli.Usagef("--database-url (DATABASE_URL) must be a postgres:// URL for spawn")
	}
	scratch := *u
	scratch.Path = "/" + name
	server := *u
	server.Path = "/postgres"
	return scratch.String(), server.String(), nil
}

// execSQL runs one statement on dbURL over its own connection (CREATE and
// DROP DATABASE cannot run in a transaction, nor through a pool's).
func execSQL(ctx context.Context, dbURL, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return embedpg.Exec(ctx, dbURL, sql)
}

// startLedgerd starts the ledgerd process, its output appended to the log.
func (sp *spawned) startLedgerd() error {
	logf, err := os.OpenFile(sp.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "---- loadtest spawn %s: starting ledgerd\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(sp.bin)
	cmd.Env = sp.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting ledgerd: %w", err)
	}
	exited := make(chan struct{})
	sp.mu.Lock()
	sp.cmd, sp.exited = cmd, exited
	sp.mu.Unlock()
	go func() {
		err := cmd.Wait()
		sp.mu.Lock()
		sp.waitEr = err
		sp.mu.Unlock()
		close(exited)
	}()
	return nil
}

func (sp *spawned) current() (*exec.Cmd, chan struct{}) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.cmd, sp.exited
}

// ready reports whether /readyz answers 200.
func (sp *spawned) ready(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sp.adminURL+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := sp.hc.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady waits until ledgerd is ready, or fails with the end of its log
// when it exits or does not get ready in time.
func (sp *spawned) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	_, exited := sp.current()
	for !sp.ready(ctx) {
		select {
		case <-exited:
			return fmt.Errorf("ledgerd exited at start (%v); the end of %s:\n%s", sp.waitErr(), sp.logPath, tail(sp.logPath, 15))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ledgerd not ready after %s; the end of %s:\n%s", limit, sp.logPath, tail(sp.logPath, 15))
		}
	}
	return nil
}

func (sp *spawned) waitErr() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.waitEr
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// killLedgerd kills ledgerd with SIGKILL and waits for it to be reaped.
func (sp *spawned) killLedgerd() error {
	cmd, exited := sp.current()
	if cmd == nil {
		return errors.New("ledgerd is not running")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("ledgerd did not die within 30s of SIGKILL")
	}
}

// stopLedgerd stops ledgerd gracefully (SIGTERM, which also stops its
// embedded Postgres), and kills it when it takes too long.
func (sp *spawned) stopLedgerd() {
	cmd, exited := sp.current()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		sp.logf("ledgerd did not stop within 60s of SIGTERM; killing it")
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

// teardown stops ledgerd and makes sure no Postgres of spawn's data
// directory outlives it.
func (sp *spawned) teardown(ctx context.Context) {
	sp.stopLedgerd()
	if !sp.embedded {
		return
	}
	// A cluster the chaos restarted outside ledgerd, which no ledgerd
	// adopted.
	if err := embedpg.StopCluster(ctx, sp.dataDir); err != nil {
		sp.logf("stopping the embedded cluster: %v", err)
	}
}

// dropScratch drops the scratch databases (DATABASE_URL mode).
func (sp *spawned) dropScratch(ctx context.Context) {
	for _, name := range sp.scratch {
		if err := execSQL(ctx, sp.serverURL, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			sp.logf("dropping the scratch database %s: %v", name, err)
		}
	}
	sp.scratch = nil
}

// restartPostgres takes the embedded cluster down as a crash would and
// starts it again where ledgerd's pool finds it (embedpg.CrashRestart).
func (sp *spawned) restartPostgres(ctx context.Context) error {
	if !sp.embedded {
		return errors.New("spawn restarts only its own embedded cluster")
	}
	return embedpg.CrashRestart(ctx, sp.dataDir)
}

// postgresVersion is the version of the server the ledger is on.
func (sp *spawned) postgresVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if sp.embedded {
		binDir, err := embedpg.FindBinaries("")
		if err != nil {
			return ""
		}
		out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	v, err := embedpg.Version(ctx, sp.serverURL)
	if err != nil {
		return ""
	}
	return v
}

// ceilingURL is a scratch database on the ledger's Postgres server for the
// pgbench ceiling.
func (sp *spawned) ceilingURL(ctx context.Context) (string, error) {
	name := "loadtest_ceiling"
	if sp.embedded {
		running, err := embedpg.RunningURL(sp.dataDir, true)
		if err != nil {
			return "", err
		}
		u, err := url.Parse(running)
		if err != nil {
			return "", err
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	if len(sp.scratch) == 0 {
		return "", errors.New("no scratch database")
	}
	name = sp.scratch[0] + "_ceiling"
	dbURL, _, err := withDatabase(sp.serverURL, name)
	if err != nil {
		return "", err
	}
	if err := execSQL(ctx, sp.serverURL, `CREATE DATABASE "`+name+`"`); err != nil {
		return "", err
	}
	sp.scratch = append(sp.scratch, name)
	return dbURL, nil
}

// ceiling runs the bench cycles on the spawned ledgerd and the pgbench
// ceiling on its Postgres server (docs/benchmarks.md).
func (sp *spawned) ceiling(ctx context.Context, s *session, key envelope.Key, providerID string, clients int, d time.Duration) *benchResult {
	logf := func(format string, a ...any) { sp.logf(format, a...) }
	dbURL, err := sp.ceilingURL(ctx)
	if err != nil {
		return &benchResult{CeilingErr: "the ceiling database: " + err.Error()}
	}
	prefix := newPrefix(time.Now().UnixNano()%(1<<40), time.Now())
	accounts, err := seedBenchAccounts(ctx, s.adm, prefix, providerID, 1000, logf)
	if err != nil {
		return &benchResult{CeilingErr: err.Error()}
	}
	hc := &http.Client{Transport: newTransport(clients), Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	client := &caller.Client{BaseURL: sp.callbacks, Key: key, HTTP: hc}
	r := benchOne(ctx, s.adm, client, providerID, prefix+"-c", accounts, clients, d, 3*time.Second, dbURL, logf)
	return &r
}
