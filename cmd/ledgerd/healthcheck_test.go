package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// runHealthcheck runs `ledgerd healthcheck args...` with env added to the
// test's environment and returns its exit code and output.
func runHealthcheck(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(ledgerd(t), append([]string{"healthcheck"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// TestHealthcheck: `ledgerd healthcheck` exits 0 while a real ledgerd is
// ready, and 1 naming why while it is not (its statements time out behind
// a lock) and once it is gone. It finds the admin listener as ledgerd
// does, in LEDGER_ADMIN_LISTEN, reaching a wildcard address (compose's
// 0.0.0.0:8081) on loopback.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	_, port, _ := net.SplitHostPort(freeAddr(t))
	wildcard := "0.0.0.0:" + port
	p := startProc(t, "DATABASE_URL="+url, "LEDGER_PROVIDER_ID=bank-h", "LEDGER_LISTEN="+freeAddr(t), "LEDGER_ADMIN_LISTEN="+wildcard,
		"LEDGER_ADMIN_TOKEN="+randomKey(t), "LEDGER_SIGNING_SECRETS="+randomKey(t), "LEDGER_RECONCILE_EVERY=0")
	p.waitLog(t, "ledgerd listening", 1)
	// A busy machine may take more than the default 3 s to answer: the
	// test is about the answer.
	env := []string{"LEDGER_ADMIN_LISTEN=" + wildcard}
	if code, out := runHealthcheck(t, env, "--timeout", "60s"); code != 0 || out != "ready\n" {
		t.Fatalf("ready ledgerd: exit %d, %q; want 0, \"ready\"", code, out)
	}
	// The flag wins over the environment, as ledgerd's do.
	if code, out := runHealthcheck(t, []string{"LEDGER_ADMIN_LISTEN=127.0.0.1:1"}, "--admin-listen", "127.0.0.1:"+port, "--timeout", "60s"); code != 0 {
		t.Fatalf("--admin-listen: exit %d, %q", code, out)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	if code, out := runHealthcheck(t, env, "--timeout", "60s"); code != 1 || !strings.Contains(out, "not ready: statements-timing-out") {
		t.Fatalf("ledgerd whose statements time out: exit %d, %q; want 1 naming statements-timing-out", code, out)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if code, out := runHealthcheck(t, env, "--timeout", "60s"); code != 0 {
		t.Fatalf("ledgerd ready again: exit %d, %q", code, out)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("ledgerd exit %d after SIGTERM", code)
	}
	if code, out := runHealthcheck(t, env); code != 1 || !strings.Contains(out, "not ready:") || !strings.Contains(out, "connection refused") {
		t.Fatalf("no ledgerd: exit %d, %q; want 1, connection refused", code, out)
	}
}

// TestHealthcheckAddress: the admin listener as ledgerd reads it, reached
// on loopback when it is a wildcard; a bad one is an unhealthy answer, not
// a crash.
func TestHealthcheckAddress(t *testing.T) {
	t.Parallel()
	cfg, err := server.LoadConfig(nil, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AdminListen != defaultAdminListen {
		t.Fatalf("ledgerd's default LEDGER_ADMIN_LISTEN is %q, the healthcheck's %q", cfg.AdminListen, defaultAdminListen)
	}
	for addr, want := range map[string]string{
		"127.0.0.1:8081":   "http://127.0.0.1:8081/readyz",
		"0.0.0.0:8081":     "http://127.0.0.1:8081/readyz",
		":8081":            "http://127.0.0.1:8081/readyz",
		"[::]:8081":        "http://[::1]:8081/readyz",
		"10.1.2.3:9000":    "http://10.1.2.3:9000/readyz",
		"ledger.local:443": "http://ledger.local:443/readyz",
	} {
		if got, err := readyzURL(addr); err != nil || got != want {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if code, out := runHealthcheck(t, []string{"LEDGER_ADMIN_LISTEN=8081"}); code != 1 || !strings.Contains(out, `"8081" is not host:port`) {
		t.Fatalf("LEDGER_ADMIN_LISTEN=8081: exit %d, %q", code, out)
	}
	// The single-dash flags of ledgerd's earlier command line still work.
	if code, out := runHealthcheck(t, nil, "-admin-listen", "8081", "-timeout=1s"); code != 1 || !strings.Contains(out, `"8081" is not host:port`) {
		t.Fatalf("-admin-listen 8081 -timeout=1s: exit %d, %q", code, out)
	}
	// Docker reserves exit 2: a usage error is unhealthy too.
	for _, args := range [][]string{{"--timeout", "soon"}, {"extra"}, {"--bogus"}} {
		if code, out := runHealthcheck(t, nil, args...); code != 1 {
			t.Errorf("healthcheck %v: exit %d, %q; want 1", args, code, out)
		}
	}
}
