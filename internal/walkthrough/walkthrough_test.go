package walkthrough

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
)

// blocks returns the ```sh blocks of the README's section "The first hour".
func blocks(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The first hour\n")
	if !ok {
		t.Fatal(`README.md has no "## The first hour" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)\n```sh\n(.*?)\n```\n").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	if len(out) < 4 {
		t.Fatalf("the first hour has %d sh blocks: %q", len(out), out)
	}
	return out
}

// freePort is a loopback address nothing listens on, for now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// environ is the test's environment without the settings a developer's
// shell may carry for their own ledgerd, plus kv.
func environ(kv ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "LEDGER_") || strings.HasPrefix(k, "SERVICE_") || k == "DATABASE_URL" {
			continue
		}
		env = append(env, e)
	}
	return append(env, kv...)
}

// daemon is the first terminal: `bin/ledgerd` in the background.
type daemon struct {
	cmd  *exec.Cmd
	log  syncbuf.Buffer
	done chan error
}

func startDaemon(t *testing.T, root, block string, env []string, admin string) *daemon {
	t.Helper()
	d := &daemon{cmd: exec.Command("bash", "-euo", "pipefail", "-c", block), done: make(chan error, 1)}
	d.cmd.Dir, d.cmd.Env = root, env
	d.cmd.Stdout, d.cmd.Stderr = &d.log, &d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C goes to its group
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.stop(t)
		}
	})
	// A first start runs initdb: well within wait.Deadline.
	wait.Until(t, block+" to be ready", func() bool {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("%s exited (%v) before it was ready:\n%s", block, err, d.log.String())
		default:
		}
		return false
	})
	return d
}

// stop is Ctrl-C in the first terminal; it returns the exit error.
func (d *daemon) stop(t *testing.T) error {
	t.Helper()
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-d.done:
		return err
	case <-time.After(time.Minute):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		return fmt.Errorf("did not stop within a minute of SIGINT: %w", <-d.done)
	}
}

// run is a block typed in the second terminal.
func run(t *testing.T, root, block string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("$ %s\n%s\nfailed: %v", block, out, err)
	}
	return string(out)
}

// scratchDir is a scratch directory the postgres OS user can search when
// we are root, so that the embedded cluster's directories are all made by
// ledgerd. It is removed when t ends.
func scratchDir(t *testing.T) string {
	t.Helper()
	scratch, err := os.MkdirTemp("", "walkthrough-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	if err := os.Chmod(scratch, 0o711); err != nil {
		t.Fatal(err)
	}
	return scratch
}

// TestFirstHour runs the README's walkthrough and checks what it shows.
func TestFirstHour(t *testing.T) {
	tooltest.SkipShort(t, "builds the binaries and runs the README's first hour against a ledgerd")
	t.Parallel()
	root := datadir.Root(".")
	if root == "" {
		t.Fatal("not in the source tree")
	}
	scratch := scratchDir(t)
	callbacks, admin := freePort(t), freePort(t)
	env := environ("LEDGER_DATA_DIR="+filepath.Join(scratch, "var", "ledgerd"),
		"LEDGER_LISTEN="+callbacks, "LEDGER_ADMIN_LISTEN="+admin,
		"LEDGER_ADMIN_URL=http://"+admin, "LEDGER_CALLBACKS_URL=http://"+callbacks+"/ledger")

	// What a reader sees after a block that contains the key.
	expect := map[string][]*regexp.Regexp{
		"accounts list":    {regexp.MustCompile(`(?m)^acc-alice +alice +USD +100\.00 +0\.00 +100\.00 +open$`)},
		"servicesim drive": {regexp.MustCompile(`(?m)^summary: 4 payouts .* 2 requests`), regexp.MustCompile(`\nok\n$`)},
		"journal entries":  {regexp.MustCompile(`opening balance`)},
		"reconcile":        {regexp.MustCompile(`(?i)clean`)},
		"/metrics": {regexp.MustCompile(`(?m)^ledgerd_callback_requests_total\{endpoint="authorize",outcome="approved",status="200"\} [1-9]`),
			regexp.MustCompile(`(?m)^ledgerd_keyring_active_keys 1$`),
			regexp.MustCompile(`(?m)^ledgerd_reconciliation_findings\{severity="critical"\} 0$`)},
	}
	var d *daemon
	seen := map[string]bool{}
	for _, block := range blocks(t, root) {
		if strings.TrimSpace(block) == "bin/ledgerd" {
			d = startDaemon(t, root, block, env, admin)
			continue
		}
		out := run(t, root, block, env)
		t.Logf("$ %s\n%s", block, out)
		for key, res := range expect {
			if !strings.Contains(block, key) {
				continue
			}
			seen[key] = true
			for _, re := range res {
				if !re.MatchString(out) {
					t.Errorf("$ %s\nprinted no match for %s:\n%s", block, re, out)
				}
			}
		}
	}
	for key := range expect {
		if !seen[key] {
			t.Errorf("the walkthrough has no block with %q", key)
		}
	}
	if d == nil {
		t.Fatal("the walkthrough starts no bin/ledgerd")
	}
	if err := d.stop(t); err != nil {
		t.Errorf("ledgerd on Ctrl-C: %v", err)
	}
	log := d.log.String()
	for _, c := range []struct {
		what  string
		count int
		re    *regexp.Regexp
	}{
		{"a warning or an error", 0, regexp.MustCompile(`"level":"(WARN|ERROR)"`)},
		{"the development secret generated", 1, regexp.MustCompile(`development signing secret`)},
		{"the embedded Postgres ready", 1, regexp.MustCompile(`"msg":"embedded Postgres ready"`)},
		{"the callbacks on loopback", 1, regexp.MustCompile(`"msg":"ledgerd listening","callbacks":"` + regexp.QuoteMeta(callbacks) + `"`)},
		{"the embedded Postgres stopped", 1, regexp.MustCompile(`embedded Postgres stopped`)},
	} {
		if n := len(c.re.FindAllString(log, -1)); n != c.count {
			t.Errorf("ledgerd logged %s %d times, want %d", c.what, n, c.count)
		}
	}
	if t.Failed() {
		t.Logf("ledgerd's log:\n%s", log)
	}
}
