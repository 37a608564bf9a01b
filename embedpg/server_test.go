//go:build linux

package embedpg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/internal/wait"
)

// These tests run real initdb and postgres processes from the installed
// server binaries. Without them they fail with errNoBinaries, whose message
// says how to install PostgreSQL.

// setup returns a Config whose DataDir does not exist yet: Start creates it.
// Every test using it fails if a postgres of that directory outlives it.
func setup(t *testing.T) Config {
	t.Helper()
	cfg := Config{
		DataDir:      filepath.Join(t.TempDir(), "var", "ledgerd"),
		Logger:       slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		StartTimeout: 30 * time.Second,
	}
	t.Cleanup(func() {
		pgDir := filepath.Join(cfg.DataDir, "pg")
		for _, pid := range procsInDir(pgDir) {
			if inspectPID(pid, pgDir) == pidOurs {
				t.Errorf("postgres %d of %s outlived the test; killing it", pid, pgDir)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return cfg
}

// template is a data directory made once per test binary by Start (an initdb
// takes seconds on a loaded machine); tests about later starts copy it.
var template struct {
	once sync.Once
	root string
	dir  string
	err  error
}

// setupCluster is setup with DataDir holding a copy of an existing cluster,
// created by Start and cleanly stopped.
func setupCluster(t *testing.T) Config {
	t.Helper()
	template.once.Do(func() {
		template.root, template.err = os.MkdirTemp("", "embedpg-template-")
		if template.err != nil {
			return
		}
		template.dir = filepath.Join(template.root, "ledgerd")
		s, err := Start(context.Background(), Config{DataDir: template.dir, StartTimeout: time.Minute})
		if err == nil {
			err = s.Stop(context.Background())
		}
		template.err = err
	})
	if template.err != nil {
		t.Fatalf("creating the template cluster: %v", template.err)
	}
	cfg := setup(t)
	if err := os.MkdirAll(filepath.Dir(cfg.DataDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", template.dir, cfg.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("copying the template cluster: %v\n%s", err, out)
	}
	return cfg
}

// start starts a server and stops it at the end of the test.
func start(t *testing.T, cfg Config) *Instance {
	t.Helper()
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

func connect(t *testing.T, connURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryOne[T any](t *testing.T, conn *pgx.Conn, sql string) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(t.Context(), sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func requireNoPostgres(t *testing.T, s *Instance) {
	t.Helper()
	if left := procsInDir(s.pgDir); len(left) != 0 {
		t.Fatalf("processes still running in %s after Stop: %v", s.pgDir, left)
	}
	if alive(s.proc.Pid) {
		t.Fatalf("postmaster %d still alive after Stop", s.proc.Pid)
	}
}

func requireMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of %s = %#o, want %#o", path, got, want)
	}
}

// procUID returns the real UID of pid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid, err := strconv.Atoi(strings.Fields(rest)[0])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writePIDFile(t *testing.T, pgDir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(pgDir, "postmaster.pid"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestServerPersistsAcrossRestarts(t *testing.T) {
	t.Parallel()
	cfg := setup(t)

	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Start on an empty directory: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `create table kept (id int primary key, note text not null)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `insert into kept (id, note) values (1, 'survives a restart')`); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())

	requireMode(t, filepath.Join(s.dataDir, "pg-password"), 0o600)
	requireMode(t, filepath.Join(s.dataDir, "postgres.log"), 0o600)
	requireMode(t, filepath.Join(s.dataDir, "embedpg.lock"), 0o600)
	requireMode(t, s.pgDir, 0o700)
	if _, err := os.Stat(filepath.Join(s.dataDir, "pg.init-pwfile")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("initdb password file left behind: %v", err)
	}
	if os.Geteuid() == 0 {
		su, err := serverUser()
		if err != nil {
			t.Fatal(err)
		}
		if uid := procUID(t, s.proc.Pid); uid != int(su.uid) {
			t.Errorf("postgres runs as uid %d, want the postgres user's %d", uid, su.uid)
		}
		if owned, err := ownedBy(s.pgDir, su); err != nil || !owned {
			t.Errorf("%s not owned by the postgres user (err %v)", s.pgDir, err)
		}
	}

	if err := s.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(t.Context()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	requireNoPostgres(t, s)
	if _, err := os.Stat(filepath.Join(s.pgDir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid after a clean Stop: %v", err)
	}

	s2, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("second Start: %v", err)
	}
	conn2 := connect(t, s2.URL())
	if got := queryOne[string](t, conn2, `select note from kept where id = 1`); got != "survives a restart" {
		t.Errorf("note = %q after restart", got)
	}
	conn2.Close(t.Context())
	if err := s2.Stop(t.Context()); err != nil {
		t.Fatalf("Stop after restart: %v", err)
	}
	requireNoPostgres(t, s2)
}

func TestServerRequiresPassword(t *testing.T) {
	t.Parallel()
	cfg := setupCluster(t)
	s := start(t, cfg)

	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || u.User.Username() != "postgres" || u.Query().Get("sslmode") != "disable" {
		t.Errorf("URL %q: want postgres user on 127.0.0.1 with sslmode=disable", s.URL())
	}
	password, _ := u.User.Password()
	stored, err := os.ReadFile(filepath.Join(cfg.DataDir, "pg-password"))
	if err != nil {
		t.Fatal(err)
	}
	if password == "" || strings.TrimSpace(string(stored)) != password {
		t.Fatalf("URL password %q does not match pg-password %q", password, stored)
	}

	for name, user := range map[string]*url.Userinfo{
		"NoPassword":    url.User("postgres"),
		"WrongPassword": url.UserPassword("postgres", password+"x"),
	} {
		v := *u
		v.User = user
		conn, err := pgx.Connect(t.Context(), v.String())
		if err == nil {
			conn.Close(t.Context())
			t.Errorf("%s: connected without the password", name)
			continue
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("%s: error %v, want invalid_password (28P01)", name, err)
		}
	}

	conn := connect(t, s.URL())
	if n := queryOne[int64](t, conn, `select count(*) from pg_hba_file_rules where auth_method <> 'scram-sha-256'`); n != 0 {
		t.Errorf("%d pg_hba rules do not use scram-sha-256", n)
	}
	for setting, want := range map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": "",
		"fsync":                   "on",
		"max_connections":         "100",
		"shared_buffers":          "128MB",
		"server_encoding":         "UTF8",
		"lc_collate":              "C",
	} {
		if got := queryOne[string](t, conn, "show "+setting); got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}

func TestServerRemovesStalePIDFile(t *testing.T) {
	t.Parallel()
	cfg := setupCluster(t)
	pgDir, err := filepath.EvalSymlinks(filepath.Join(cfg.DataDir, "pg"))
	if err != nil {
		t.Fatal(err)
	}

	// A live process that is not a postgres of this directory: PostgreSQL
	// itself would refuse to start over its PID.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

	for name, pid := range map[string]string{
		"DeadPID":    strconv.Itoa(deadPID(t)),
		"ForeignPID": strconv.Itoa(sleeper.Process.Pid),
		"Garbage":    "not a pid",
	} {
		writePIDFile(t, pgDir, pid+"\n"+pgDir+"\n1700000000\n5432\n\n127.0.0.1\n  1234567  7\nready   \n")
		s2, err := Start(t.Context(), cfg)
		if err != nil {
			t.Fatalf("%s: Start over a stale postmaster.pid: %v", name, err)
		}
		b, err := os.ReadFile(filepath.Join(pgDir, "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(b), "\n"); first != strconv.Itoa(s2.proc.Pid) {
			t.Errorf("%s: postmaster.pid names %s, want the new server %d", name, first, s2.proc.Pid)
		}
		if err := s2.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		requireNoPostgres(t, s2)
	}
	if !alive(sleeper.Process.Pid) {
		t.Error("the unrelated process named by the stale postmaster.pid was killed")
	}
}

func TestServerStopsOrphanedServer(t *testing.T) {
	t.Parallel()
	cfg := setupCluster(t)
	orphan, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The owner "crashes": the kernel drops its lock, its postgres keeps running.
	orphan.unlock()

	s := start(t, cfg)
	select {
	case <-orphan.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("orphaned postgres %d still running after the new Start", orphan.proc.Pid)
	}
	if s.proc.Pid == orphan.proc.Pid {
		t.Fatal("new Server adopted the orphan instead of starting its own")
	}
	conn := connect(t, s.URL())
	if got := queryOne[int](t, conn, "select 1"); got != 1 {
		t.Fatalf("select 1 = %d", got)
	}

	// Stopping the forgotten Server must not touch the new one.
	if err := orphan.Stop(t.Context()); err != nil {
		t.Errorf("Stop of the orphan's Server: %v", err)
	}
	// A second Start while the data directory is in use is refused.
	if s3, err := Start(t.Context(), cfg); !errors.Is(err, errInUse) {
		if s3 != nil {
			s3.Stop(context.Background())
		}
		t.Fatalf("Start on a directory in use: %v, want errInUse", err)
	}
	if got := queryOne[int](t, conn, "select 2"); got != 2 {
		t.Fatalf("select 2 = %d", got)
	}
	conn.Close(t.Context())
	if err := s.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	requireNoPostgres(t, s)
}

func TestServerDiesWithOwner(t *testing.T) {
	t.Parallel()
	cfg := setupCluster(t)
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), "EMBEDPG_HELPER=wait-for-kill", "EMBEDPG_HELPER_DATA_DIR="+cfg.DataDir)
	helper.Stderr = t.Output()
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper gave no PID: %v", err)
	}
	pgPID, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	if !alive(pgPID) {
		t.Fatalf("helper's postgres %d not running", pgPID)
	}

	// SIGKILL leaves ledgerd no chance to Stop; the parent-death signal must.
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	pgDir := filepath.Join(cfg.DataDir, "pg")
	if realDir, err := filepath.EvalSymlinks(pgDir); err == nil {
		pgDir = realDir
	}
	wait.Until(t, "postgres of the killed owner to stop", func() bool { return !alive(pgPID) && len(procsInDir(pgDir)) == 0 })
	// And the next owner starts cleanly.
	s := start(t, cfg)
	connect(t, s.URL())
}

func TestServerRunsAsNonRootUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the whole suite runs as a non-root user already")
	}
	// The test binary, run as the postgres user, plays a non-root ledgerd:
	// no credential switch, no chown, no permission fixes.
	su, err := serverUser()
	if err != nil {
		t.Fatal(err)
	}
	cfg := setupCluster(t)
	base := filepath.Dir(cfg.DataDir)
	if err := ensureTraversable(base, su, cfg.Logger); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(cfg.DataDir, su); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "embedpg.test")
	if out, err := exec.Command("cp", os.Args[0], bin).CombinedOutput(); err != nil {
		t.Fatalf("copying the test binary: %v\n%s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(bin)
	helper.Dir = base
	helper.Env = append(os.Environ(), "EMBEDPG_HELPER=round-trip", "EMBEDPG_HELPER_DATA_DIR="+cfg.DataDir)
	helper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: su.uid, Gid: su.gid, Groups: su.groups}}
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("Start/Stop as the %s user: %v\n%s", su.name, err, out)
	}
	if !strings.Contains(string(out), "round-trip ok") {
		t.Fatalf("helper output:\n%s", out)
	}
	if left := procsInDir(filepath.Join(cfg.DataDir, "pg")); len(left) != 0 {
		t.Fatalf("processes left after the helper's Stop: %v", left)
	}
}

func TestServerNoBinaries(t *testing.T) {
	t.Parallel()
	cfg := setup(t)
	cfg.BinDir = t.TempDir()
	if s, err := Start(t.Context(), cfg); !errors.Is(err, errNoBinaries) {
		if s != nil {
			s.Stop(context.Background())
		}
		t.Fatalf("Start with an empty BinDir: %v, want errNoBinaries", err)
	}
}

func TestServerRefusesNonClusterPGDir(t *testing.T) {
	t.Parallel()
	cfg := setup(t)
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "pg", "something"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), cfg)
	if err == nil {
		s.Stop(context.Background())
		t.Fatal("Start over a non-cluster pg directory succeeded")
	}
	if !strings.Contains(err.Error(), "no PG_VERSION") {
		t.Fatalf("error %v, want one naming the missing PG_VERSION", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "pg", "something")); err != nil {
		t.Fatalf("Start touched the existing directory: %v", err)
	}
}

// TestMain doubles as a "ledgerd" for the subtests that need a separate
// process, selected by EMBEDPG_HELPER, with EMBEDPG_HELPER_DATA_DIR as DataDir:
//
//	wait-for-kill: Start, print the postmaster's PID, wait to be killed.
//	round-trip:    Start, select 1, Stop, print "round-trip ok".
func TestMain(m *testing.M) {
	if mode := os.Getenv("EMBEDPG_HELPER"); mode != "" {
		os.Exit(helper(mode, os.Getenv("EMBEDPG_HELPER_DATA_DIR")))
	}
	code := m.Run()
	if template.root != "" {
		os.RemoveAll(template.root)
	}
	os.Exit(code)
}

func helper(mode, dataDir string) int {
	ctx := context.Background()
	s, err := Start(ctx, Config{
		DataDir:      dataDir,
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, nil)),
		StartTimeout: 30 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	switch mode {
	case "wait-for-kill":
		fmt.Printf("pid %d\n", s.proc.Pid)
		// Wait to be killed (SIGKILL, by the parent); a SIGTERM or SIGINT
		// instead is a parent that gave up.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		return 4
	case "round-trip":
		err := ping(ctx, s.URL())
		if stopErr := s.Stop(ctx); err == nil {
			err = stopErr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 5
		}
		fmt.Println("round-trip ok")
		return 0
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}
