package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/buildinfo"
	"github.com/provider-ledger/adapter/store/storetest"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// ledgerd builds the binary once per test run.
func ledgerd(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ledgerd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "ledgerd")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// proc is a running ledgerd whose stderr is collected.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	done chan error
}

func startProc(t *testing.T, env ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(ledgerd(t)), done: make(chan error, 1)}
	// A data dir of the test's unless it names one (the generated KEK).
	p.cmd.Env = append(os.Environ(), append([]string{"LEDGER_DATA_DIR=" + t.TempDir()}, env...)...)
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "DATABASE_URL=") && kv != "DATABASE_URL=" }) {
		p.cmd.Env = append(p.cmd.Env, "LEDGER_KEK="+randomKey(t)) // required with DATABASE_URL
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("ledgerd's log:\n%s", p.log())
		}
	})
	return p
}

func (p *proc) log() string { p.mu.Lock(); defer p.mu.Unlock(); return p.logs.String() }

// waitLog waits until the log holds n lines containing s.
func (p *proc) waitLog(t *testing.T, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); strings.Count(p.log(), s) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %d log lines with %q within 90s", n, s)
		}
	}
}

// exit waits for the process to end and returns its exit code.
func (p *proc) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(90 * time.Second):
		t.Fatal("ledgerd did not exit within 90s")
	}
	return -1
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proxy forwards connections on addr to target until the test ends.
func proxy(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c); s.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
}

func httpOK(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// TestLedgerdVersion: the release of CHANGELOG.md (as internal/buildinfo
// holds it), then the revision go build recorded, then the Go version.
func TestLedgerdVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(ledgerd(t), "--version").Output()
	line := string(out)
	if err != nil || !strings.HasPrefix(line, "ledgerd "+buildinfo.Version+", revision ") || !strings.HasSuffix(line, ", "+runtime.Version()+"\n") {
		t.Fatalf("ledgerd --version: %q %v; want \"ledgerd %s, revision …, %s\"", out, err, buildinfo.Version, runtime.Version())
	}
}

func TestLedgerdTakenPortStopsItBeforeInitdb(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	p := startProc(t, "DATABASE_URL=", "LEDGER_DATA_DIR="+dir, "LEDGER_LISTEN=127.0.0.1:0", "LEDGER_ADMIN_LISTEN="+ln.Addr().String())
	if code := p.exit(t); code != 1 || !strings.Contains(p.log(), "LEDGER_ADMIN_LISTEN "+ln.Addr().String()+" cannot be listened on") {
		t.Fatalf("exit %d, log:\n%s", code, p.log())
	}
	if _, err := os.Stat(filepath.Join(dir, "pg")); err == nil {
		t.Fatal("the embedded cluster was created before the port was checked")
	}
}

func TestLedgerdWaitsForTheDatabaseThenServes(t *testing.T) {
	t.Parallel()
	target := storetest.URL(t) // 127.0.0.1:5432 or TEST_DATABASE_URL's host
	dbAddr, admin := freeAddr(t), freeAddr(t)
	url := strings.Replace(target, hostPort(t, target), dbAddr, 1)
	p := startProc(t, "DATABASE_URL="+url, "LEDGER_PROVIDER_ID=bank-w", "LEDGER_LISTEN="+freeAddr(t), "LEDGER_ADMIN_LISTEN="+admin,
		"LEDGER_SIGNING_SECRETS="+randomKey(t), "LEDGER_LOG_LEVEL=warn")
	p.waitLog(t, "waiting for the database", 2)
	proxy(t, dbAddr, hostPort(t, target)) // the database comes up
	for deadline := time.Now().Add(60 * time.Second); !httpOK("http://" + admin + "/readyz"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready within 60s of the database coming up; log:\n%s", p.log())
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	if log := p.log(); strings.Contains(log, "ledgerd listening") || !strings.Contains(log, "connection refused") {
		t.Fatalf("at LEDGER_LOG_LEVEL=warn the log should hold the waits with their cause and no info line:\n%s", log)
	}
}

func TestLedgerdSIGTERMWhileWaitingIsACleanExit(t *testing.T) {
	t.Parallel()
	db := freeAddr(t)
	p := startProc(t, "DATABASE_URL=postgres://nobody@"+db+"/none", "LEDGER_PROVIDER_ID=bank-w",
		"LEDGER_LISTEN="+freeAddr(t), "LEDGER_ADMIN_LISTEN="+freeAddr(t))
	p.waitLog(t, "waiting for the database", 1)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM while waiting", code)
	}
	// The driver's error (a line per address tried) is summarized.
	if want := `"err":"cannot connect to Postgres at ` + db + `: connection refused; is Postgres running there? (DATABASE_URL)"`; !strings.Contains(p.log(), want) {
		t.Fatalf("the wait does not say %s:\n%s", want, p.log())
	}
}

func TestLedgerdEmbeddedPrintsItsURLWithoutThePassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := freeAddr(t)
	p := startProc(t, "DATABASE_URL=", "LEDGER_DATA_DIR="+dir, "LEDGER_LISTEN="+freeAddr(t), "LEDGER_ADMIN_LISTEN="+admin)
	p.waitLog(t, "ledgerd listening", 1)
	pw, err := os.ReadFile(filepath.Join(dir, "pg-password"))
	if err != nil {
		t.Fatal(err)
	}
	log := p.log()
	if !strings.Contains(log, "embedded Postgres ready") || !strings.Contains(log, "passfile="+filepath.Join(dir, "pgpass")) ||
		strings.Contains(log, strings.TrimSpace(string(pw))) {
		t.Fatalf("the start-up log should name the URL with its passfile and never the password:\n%s", log)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

func hostPort(t *testing.T, url string) string {
	t.Helper()
	_, rest, _ := strings.Cut(url, "@")
	hp, _, _ := strings.Cut(rest, "/")
	return hp
}

// randomKey is the Base64 of 32 random bytes (built keys are refused as weak).
func randomKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}
