//go:build unix

package embedpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/internal/datadir"
)

const (
	defaultStartTimeout = 60 * time.Second
	// Shutdown escalation: fast shutdown (SIGINT) rolls back open
	// transactions and checkpoints; immediate shutdown (SIGQUIT) skips the
	// checkpoint, leaving crash recovery to the next start; SIGKILL is last.
	fastShutdownTimeout      = 30 * time.Second
	immediateShutdownTimeout = 10 * time.Second
	killTimeout              = 5 * time.Second

	superuser     = "postgres"
	portAttempts  = 3 // a free port can be taken between our probe and postgres's bind
	logTailBytes  = 8 << 10
	logTailLines  = 25
	pingTimeout   = 2 * time.Second
	retryInterval = 100 * time.Millisecond
)

// pidState classifies the process named by a leftover postmaster.pid.
type pidState int

const (
	pidDead    pidState = iota // no such process (or a zombie)
	pidForeign                 // alive, but not a postgres of this data directory
	pidOurs                    // a postgres of this data directory: an orphan
	pidUnknown                 // cannot tell on this platform
)

// Start starts the private cluster in cfg.DataDir, creating it on first use,
// and returns once it accepts connections. See the package documentation for
// the layout, security and leftover handling.
func Start(ctx context.Context, cfg Config) (*Instance, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("embedpg: Config.DataDir is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	binDir, err := FindBinaries(cfg.BinDir)
	if err != nil {
		return nil, err
	}
	su, err := serverUser()
	if err != nil {
		return nil, err
	}
	created, dataDir, err := prepareDataDir(cfg.DataDir, su, log)
	if err != nil {
		return nil, err
	}
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	s := &Instance{dataDir: dataDir, pgDir: filepath.Join(dataDir, "pg"), log: log, lock: lock}
	started := false
	defer func() {
		if !started {
			s.abandonStart(ctx, created)
		}
	}()
	if err := s.boot(ctx, binDir, su, timeout); err != nil {
		return nil, err
	}
	started = true
	log.Debug("embedpg: postgres ready", "data_dir", s.pgDir, "pid", s.proc.Pid, "log", s.logPath())
	return s, nil
}

// prepareDataDir creates the data directory dir when missing and returns
// the topmost directory it created ("" when none) and dir's absolute path,
// symlinks resolved.
func prepareDataDir(dir string, su *osUser, log *slog.Logger) (created, abs string, err error) {
	created, err = makeDataDir(dir, su, log)
	if err != nil {
		return "", "", err
	}
	abs, err = filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs) // /proc reports cwd without symlinks
	}
	if err != nil {
		return "", "", fmt.Errorf("embedpg: resolving data directory: %w", err)
	}
	return created, abs, nil
}

// abandonStart undoes a failed Start: it releases the data directory and,
// when an interrupted first start created it, removes it again.
func (s *Instance) abandonStart(ctx context.Context, created string) {
	s.unlock()
	// An interrupted first start leaves nothing behind.
	if created != "" && ctx.Err() != nil && !exists(s.pgDir) {
		if err := os.RemoveAll(created); err != nil {
			s.log.Warn("embedpg: removing the unfinished data directory", "dir", created, "err", err)
		}
	}
}

// boot brings the locked data directory up: it lets the server's OS user
// reach it, creates or checks the cluster, writes the passfile, clears a
// crash's leftovers and starts postgres.
func (s *Instance) boot(ctx context.Context, binDir string, su *osUser, timeout time.Duration) error {
	if su != nil {
		if err := ensureTraversable(s.dataDir, su, s.log); err != nil {
			return err
		}
	}
	logf, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("embedpg: opening server log: %w", err)
	}
	defer logf.Close() // the child keeps its own descriptor

	password, err := s.prepareCluster(ctx, binDir, su, logf)
	if err != nil {
		return err
	}
	if err := datadir.WriteFileAtomic(s.passfilePath(), []byte(passfileLine(password))); err != nil {
		return fmt.Errorf("embedpg: writing %s: %w", s.passfilePath(), err)
	}
	if err := s.clearLeftovers(ctx); err != nil {
		return err
	}
	return s.startOnFreePort(ctx, binDir, su, password, logf, timeout)
}

// startOnFreePort starts postgres, on another port when the one picked was
// taken before postgres could bind it (up to portAttempts tries).
func (s *Instance) startOnFreePort(ctx context.Context, binDir string, su *osUser, password string, logf *os.File, timeout time.Duration) error {
	for attempt := 1; ; attempt++ {
		err := s.startServer(ctx, binDir, su, password, logf, timeout)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return err
		}
		s.log.Warn("embedpg: port taken before postgres could bind it; retrying on another", "attempt", attempt)
	}
}

var errPortTaken = errors.New("embedpg: port taken")

// startServer starts postgres on a fresh port and waits until it answers.
func (s *Instance) startServer(ctx context.Context, binDir string, su *osUser, password string, logf *os.File, timeout time.Duration) error {
	port, err := datadir.FreePort()
	if err != nil {
		return fmt.Errorf("embedpg: picking a port: %w", err)
	}
	s.url = (&url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(superuser, password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}).String()

	off := logSize(logf)
	fmt.Fprintf(logf, "---- embedpg %s: starting postgres on 127.0.0.1:%d\n", time.Now().Format(time.RFC3339), port)
	cmd := exec.Command(filepath.Join(binDir, "postgres"), append([]string{"-D", s.pgDir}, serverSettings(port)...)...)
	cmd.Dir = s.pgDir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(su, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("embedpg: starting postgres: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	s.proc, s.exited = cmd.Process, exited

	if err := s.waitReady(ctx, timeout, func() error { return waitErr }, off); err != nil {
		// Bounded regardless of ctx: a half-started server must not outlive us.
		if stopErr := s.terminate(context.Background(), s.proc, s.waitExited); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return err
	}
	return nil
}

// serverSettings are the options every postgres of an embedded cluster
// runs with, on port.
func serverSettings(port int) []string {
	return []string{
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", // TCP only: no socket file to clean up or to reach with peer auth
		"-c", "max_connections=100",
		"-c", "shared_buffers=128MB",
		"-c", "password_encryption=scram-sha-256",
		"-c", "logging_collector=off", // log to stderr, which is postgres.log
	}
}

func (s *Instance) waitReady(ctx context.Context, timeout time.Duration, waitErr func() error, logOff int64) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := ping(wctx, s.url)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000") {
			return fmt.Errorf("embedpg: postgres rejected the password in %s: %w", s.passwordPath(), err)
		}
		select {
		case <-s.exited:
			tail := logTail(s.logPath(), logOff)
			if strings.Contains(tail, "could not bind") || strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, tail)
			}
			return fmt.Errorf("embedpg: postgres exited during startup (%v); last lines of %s:\n%s", waitErr(), s.logPath(), tail)
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("embedpg: interrupted while waiting for postgres to start: %w", ctx.Err())
			}
			return fmt.Errorf("embedpg: postgres not ready after %s (last error: %v); last lines of %s:\n%s",
				timeout, err, s.logPath(), logTail(s.logPath(), logOff))
		case <-time.After(retryInterval):
		}
	}
}

func ping(ctx context.Context, connURL string) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "select 1").Scan(&one)
}

// childEnv is our environment without libpq/server variables and locale
// settings, which could override what we pass explicitly.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "LC_") || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}
