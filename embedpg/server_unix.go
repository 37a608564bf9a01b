//go:build unix

package embedpg

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// Stop shuts the server down: a fast shutdown (SIGINT), escalating to an
// immediate shutdown (SIGQUIT) and then SIGKILL when it does not finish in
// time or ctx ends. On return no postgres process of the data directory is
// left. Stop is idempotent; later calls return the first call's result.
func (s *Instance) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.stopErr = s.terminate(ctx, s.proc, s.waitExited)
		s.unlock()
	})
	return s.stopErr
}

func (s *Instance) logPath() string      { return filepath.Join(s.dataDir, "postgres.log") }
func (s *Instance) passwordPath() string { return filepath.Join(s.dataDir, "pg-password") }
func (s *Instance) passfilePath() string { return filepath.Join(s.dataDir, "pgpass") }

func (s *Instance) unlock() {
	if s.lock != nil {
		s.lock.Close() // releases the flock
		s.lock = nil
	}
}

func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "embedpg.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedpg: opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked)", errInUse, path)
		}
		return nil, fmt.Errorf("embedpg: locking %s: %w", path, err)
	}
	return f, nil
}

// prepareCluster returns the superuser password of the cluster in s.pgDir,
// creating the cluster when there is none.
func (s *Instance) prepareCluster(ctx context.Context, binDir string, su *osUser, logf *os.File) (string, error) {
	_, err := os.Stat(filepath.Join(s.pgDir, "PG_VERSION"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Lstat(s.pgDir); err == nil {
			// Never ours: initdb runs in pg.init and is renamed when complete.
			return "", fmt.Errorf("embedpg: %s exists but is not a PostgreSQL cluster (no PG_VERSION); move it away", s.pgDir)
		}
		return s.initCluster(ctx, binDir, su, logf)
	case err != nil:
		return "", fmt.Errorf("embedpg: inspecting cluster: %w", err)
	}
	b, err := os.ReadFile(s.passwordPath())
	password := strings.TrimSpace(string(b))
	if err == nil && password == "" {
		err = errors.New("file is empty")
	}
	if err != nil {
		return "", fmt.Errorf("embedpg: cluster %s exists but its password file %s is unusable (%w); "+
			"restore the file, or remove %s to start over with an empty database", s.pgDir, s.passwordPath(), err, s.pgDir)
	}
	if su != nil {
		if owned, err := ownedBy(s.pgDir, su); err != nil {
			return "", err
		} else if !owned {
			s.log.Warn("embedpg: giving the cluster to the postgres OS user", "dir", s.pgDir, "user", su.name)
			if err := chownTree(s.pgDir, su); err != nil {
				return "", fmt.Errorf("embedpg: chown %s: %w", s.pgDir, err)
			}
		}
	}
	return password, nil
}

func (s *Instance) initCluster(ctx context.Context, binDir string, su *osUser, logf *os.File) (string, error) {
	tmp := s.pgDir + ".init"
	if err := os.RemoveAll(tmp); err != nil { // an initdb that did not finish
		return "", fmt.Errorf("embedpg: removing unfinished cluster: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("embedpg: creating cluster directory: %w", err)
	}
	password := rand.Text()
	// The password file is written before the cluster exists, so a complete
	// cluster always has one; a crash before the rename below redoes both.
	if err := datadir.WriteFileAtomic(s.passwordPath(), []byte(password+"\n")); err != nil {
		return "", fmt.Errorf("embedpg: writing password file: %w", err)
	}
	// initdb reads the password from a file, which the postgres user must be
	// able to open; it is removed as soon as initdb is done.
	pwFile := filepath.Join(s.dataDir, "pg.init-pwfile")
	_ = os.Remove(pwFile)
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("embedpg: writing initdb password file: %w", err)
	}
	defer os.Remove(pwFile)
	if su != nil {
		for _, p := range []string{tmp, pwFile} {
			if err := os.Chown(p, int(su.uid), int(su.gid)); err != nil {
				return "", fmt.Errorf("embedpg: chown %s: %w", p, err)
			}
		}
	}

	off := logSize(logf)
	fmt.Fprintf(logf, "---- embedpg %s: initdb %s\n", time.Now().Format(time.RFC3339), tmp)
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"),
		"-D", tmp,
		"-U", superuser,
		"-E", "UTF8", "--locale=C",
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256",
		"--pwfile="+pwFile,
	)
	cmd.Dir = tmp
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(su, syscall.SIGKILL)
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(tmp) // redone by the next start anyway
		if ctx.Err() != nil {
			_ = os.Remove(s.passwordPath()) // the cluster's, and there is none
			return "", fmt.Errorf("embedpg: interrupted while creating the cluster (initdb); removed the unfinished cluster: %w", ctx.Err())
		}
		return "", fmt.Errorf("embedpg: initdb failed: %w; last lines of %s:\n%s", err, s.logPath(), logTail(s.logPath(), off))
	}
	if err := os.Rename(tmp, s.pgDir); err != nil {
		return "", fmt.Errorf("embedpg: installing cluster: %w", err)
	}
	if err := datadir.SyncDir(s.dataDir); err != nil {
		return "", fmt.Errorf("embedpg: %w", err)
	}
	s.log.Info("embedpg: created cluster", "dir", s.pgDir, "password_file", s.passwordPath())
	return password, nil
}

// clearLeftovers makes sure a postmaster.pid left by a crash cannot block the
// start: a stale one is removed, an orphaned server of this data directory is
// shut down.
func (s *Instance) clearLeftovers(ctx context.Context) error {
	pidFile := filepath.Join(s.pgDir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("embedpg: reading %s: %w", pidFile, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	state := pidDead // unreadable: a postmaster that died while writing it
	if err == nil {
		pid = max(pid, -pid) // a standalone backend writes its PID negated
		state = inspectPID(pid, s.pgDir)
	}
	switch state {
	case pidDead, pidForeign:
		s.log.Warn("embedpg: removing stale postmaster.pid", "pid", pid, "process_alive", state == pidForeign)
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("embedpg: removing stale %s: %w", pidFile, err)
		}
	case pidOurs:
		s.log.Warn("embedpg: stopping orphaned postgres of this data directory", "pid", pid)
		p, err := os.FindProcess(pid)
		if err != nil {
			return fmt.Errorf("embedpg: orphaned postgres %d: %w", pid, err)
		}
		defer p.Release()
		if err := s.terminate(ctx, p, pollExited(pid)); err != nil {
			return fmt.Errorf("embedpg: stopping orphaned postgres %d: %w", pid, err)
		}
	case pidUnknown:
		// PostgreSQL's own lock-file check decides.
	}
	return nil
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

// terminate stops the postmaster p and then makes sure no postgres process of
// the data directory is left. gone waits up to d (or until ctx ends) for p to
// exit. Escalation steps after the first run even when ctx has ended: they are
// short, and a server must not outlive its Stop.
func (s *Instance) terminate(ctx context.Context, p *os.Process, gone func(context.Context, time.Duration) bool) error {
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{
		{syscall.SIGINT, fastShutdownTimeout},
		{syscall.SIGQUIT, immediateShutdownTimeout},
		{syscall.SIGKILL, killTimeout},
	}
	exited := false
	for i, st := range steps {
		if i > 0 {
			s.log.Warn("embedpg: postgres did not shut down in time; escalating", "pid", p.Pid, "signal", st.sig.String())
			ctx = context.Background()
		}
		if err := p.Signal(st.sig); errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
			exited = true
			break
		}
		if gone(ctx, st.wait) {
			exited = true
			break
		}
	}
	// Backends exit with their postmaster, unless it was killed. Only while we
	// hold the lock is any postgres left in this directory ours to kill.
	deadline := time.Now().Add(killTimeout)
	for s.lock != nil {
		left := s.postgresProcs()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("embedpg: postgres processes %v of %s survived SIGKILL", left, s.pgDir)
		}
		for _, pid := range left {
			s.log.Warn("embedpg: killing leftover postgres process", "pid", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !exited {
		return fmt.Errorf("embedpg: postgres %d did not exit after SIGKILL", p.Pid)
	}
	return nil
}

// postgresProcs lists the live postgres processes running in s.pgDir.
func (s *Instance) postgresProcs() []int {
	var out []int
	for _, pid := range procsInDir(s.pgDir) {
		if inspectPID(pid, s.pgDir) == pidOurs {
			out = append(out, pid)
		}
	}
	return out
}

// waitExited waits for our own child to be reaped.
func (s *Instance) waitExited(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// pollExited waits for a process that is not our child (its parent reaps it).
func pollExited(pid int) func(context.Context, time.Duration) bool {
	return func(ctx context.Context, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for alive(pid) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}
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

func logSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logTail returns the last lines written to path at or after offset from.
func logTail(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	from = max(from, fi.Size()-logTailBytes)
	b, _ := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// makeDataDir creates dir and its missing parents, 0700; when the server
// runs as another OS user (su, we are root) 0701, so that it can reach its
// cluster inside: directories made for it need no warning, which
// ensureTraversable gives for a directory it had to change. It returns the
// topmost directory it created ("" when dir existed), which an
// interrupted first start removes again.
func makeDataDir(dir string, su *osUser, log *slog.Logger) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("embedpg: resolving data directory: %w", err)
	}
	var missing []string
	for d := abs; !exists(d); d = filepath.Dir(d) {
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("embedpg: creating data directory: %w", err)
	}
	if len(missing) == 0 {
		return "", nil
	}
	if su != nil {
		for _, d := range missing {
			if err := os.Chmod(d, 0o701); err != nil {
				return "", fmt.Errorf("embedpg: creating data directory: %w", err)
			}
		}
		log.Debug("embedpg: created the data directory searchable by the postgres user (0701)", "dir", abs, "user", su.name)
	}
	return missing[len(missing)-1], nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
