package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
)

// monitorSettings bound the monitor's detection and promotion
// (docs/high-availability.md gives the reasons and the cost).
var monitorSettings = map[string]string{
	"health_check_period":               "1000",
	"health_check_timeout":              "1000",
	"health_check_max_retries":          "1",
	"health_check_retry_delay":          "500",
	"node_considered_unhealthy_timeout": "2000",
	"primary_demote_timeout":            "5000",
}

// formation is a pg_auto_failover formation of a test's own: a monitor and
// two Postgres nodes on 127.0.0.1, trust authentication, no TLS, each
// `pg_autoctl run` as the postgres user when root (embedpg.Command), in a
// process group of its own, with its pg_autoctl files under the test's
// directory.
type formation struct {
	t       *testing.T
	bin     string // pg_autoctl
	pgctl   string
	root    string
	monPort int
	nodes   []*afNode
	monitor *exec.Cmd
}

// afNode is one node of a formation: its keeper's `pg_autoctl run`, whose
// process group holds its Postgres too.
type afNode struct {
	name string
	port int
	dir  string
	cmd  *exec.Cmd
}

// newFormation creates and runs the monitor (with monitorSettings) and two
// nodes whose database ledger is created, and waits for a primary and a
// secondary.
func newFormation(t *testing.T) *formation {
	t.Helper()
	bin := tooltest.Require(t, "pg_autoctl", "/usr/lib/postgresql/15/bin/pg_autoctl")
	binDir, err := embedpg.FindBinaries("")
	if err != nil {
		t.Fatalf("the formation runs Postgres servers: %v", err)
	}
	f := &formation{t: t, bin: bin, pgctl: filepath.Join(binDir, "pg_ctl"), root: filepath.Join(t.TempDir(), "formation")}
	if err := embedpg.MkdirServer(f.root); err != nil {
		t.Fatal(err)
	}
	ports := lowPorts(t, 3)
	f.monPort = ports[0]
	f.autoctl("create", "monitor", "--pgdata", f.path("monitor"), "--pgport", fmt.Sprint(f.monPort),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--pgctl", f.pgctl)
	f.monitor = f.start("monitor")
	t.Cleanup(func() { stopGroup(f.monitor) })
	f.waitSQL("the monitor", func(c *pgx.Conn) error { _, err := c.Exec(context.Background(), "SELECT 1"); return err })
	f.tune()
	for i, port := range ports[1:] {
		n := &afNode{name: fmt.Sprintf("node%d", i+1), port: port}
		n.dir = f.path(n.name)
		f.autoctl("create", "postgres", "--pgdata", n.dir, "--pgport", fmt.Sprint(port), "--hostname", "127.0.0.1",
			"--name", n.name, "--dbname", "ledger", "--monitor", f.monitorURL(), "--auth", "trust", "--no-ssl", "--pgctl", f.pgctl)
		n.cmd = f.start(n.name)
		t.Cleanup(func() { stopGroup(n.cmd) })
		f.nodes = append(f.nodes, n)
		if i == 0 {
			f.waitStates(2*time.Minute, map[string]string{n.name: "single"})
		}
	}
	f.waitStates(2*time.Minute, map[string]string{"node1": "primary", "node2": "secondary"})
	return f
}

func (f *formation) path(name string) string { return filepath.Join(f.root, name) }

func (f *formation) monitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.monPort)
}

// url is ledgerd's DATABASE_URL: every node, the primary chosen by
// target_session_attrs.
func (f *formation) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/ledger?target_session_attrs=read-write&connect_timeout=1&sslmode=disable",
		f.nodes[0].port, f.nodes[1].port)
}

// command is pg_autoctl with args, its files under the formation's root.
func (f *formation) command(args ...string) *exec.Cmd {
	f.t.Helper()
	cmd, err := embedpg.Command(context.Background(), f.bin, args...)
	if err != nil {
		f.t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+f.path("config"), "XDG_DATA_HOME="+f.path("share"), "XDG_RUNTIME_DIR="+f.path("run"))
	cmd.Dir = f.root
	return cmd
}

// autoctl runs pg_autoctl to completion, failing the test with its output.
func (f *formation) autoctl(args ...string) {
	f.t.Helper()
	if out, err := f.command(args...).CombinedOutput(); err != nil {
		f.t.Fatalf("pg_autoctl %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 30))
	}
}

// switchover runs `pg_autoctl perform switchover`. The monitor's
// perform_failover can deadlock with a keeper's report arriving at the same
// moment (the monitor's own SQL: "deadlock detected" while updating its node
// table); nothing was changed then, and the command is run again, as an
// operator would.
func (f *formation) switchover() {
	f.t.Helper()
	args := []string{"perform", "switchover", "--monitor", f.monitorURL(), "--formation", "default"}
	for attempt := 1; ; attempt++ {
		out, err := f.command(args...).CombinedOutput()
		if err == nil {
			return
		}
		if attempt == 5 || !strings.Contains(string(out), "deadlock detected") {
			f.t.Fatalf("pg_autoctl %s (attempt %d): %v\n%s", strings.Join(args, " "), attempt, err, tail(string(out), 30))
		}
		f.t.Logf("pg_autoctl perform switchover: the monitor reported a deadlock (attempt %d); running it again", attempt)
		time.Sleep(500 * time.Millisecond)
	}
}

// settle waits until the primary node's commits are synchronous again and
// the standby has everything: what an operator checks before a planned
// switchover (docs/high-availability.md). pg_autoctl 2.0's switchover does
// not wait for the standby to receive the primary's last WAL (its
// prepare_promotion step relies on synchronous replication), and a primary
// reports `primary` once it has set synchronous_standby_names, while
// Postgres applies that setting to commits only after its checkpointer has
// reloaded the configuration: a CHECKPOINT is the barrier (the checkpointer
// absorbs a pending reload before it starts one). Then the standby must be
// streaming as a quorum member with everything up to the checkpoint's end
// flushed.
func (f *formation) settle(primary *afNode) {
	f.t.Helper()
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", primary.port)
	var target string
	wait.UntilErr(f.t, primary.name+" to take a checkpoint", func() error {
		return onServer(url, 30*time.Second, func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, "CHECKPOINT"); err != nil {
				return err
			}
			return c.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target)
		})
	})
	wait.UntilErr(f.t, "the standby of "+primary.name+" synchronous and caught up", func() error {
		return onServer(url, 5*time.Second, func(ctx context.Context, c *pgx.Conn) error {
			var n int
			err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication
WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum') AND flush_lsn >= $1::pg_lsn`, target).Scan(&n)
			if err == nil && n == 0 {
				err = fmt.Errorf("no synchronous standby has flushed %s yet", target)
			}
			return err
		})
	})
}

// onServer runs do on a new connection to url, within timeout.
func onServer(url string, timeout time.Duration, do func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return do(ctx, c)
}

// start runs `pg_autoctl run` for the node in dir name, its output in
// name.log.
func (f *formation) start(name string) *exec.Cmd {
	f.t.Helper()
	cmd := f.command("run", "--pgdata", f.path(name))
	logf, err := os.OpenFile(f.path(name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	return cmd
}

// crash kills a node as a machine's crash would: SIGKILL to its keeper's
// whole process group (Postgres included, which the keeper would otherwise
// restart), and waits for its Postgres to be gone.
func (f *formation) crash(n *afNode) {
	f.t.Helper()
	stopGroup(n.cmd)
	for deadline := time.Now().Add(30 * time.Second); dialable(n.port); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatalf("%s still accepts connections after SIGKILL", n.name)
		}
	}
}

// restart runs the node's keeper again (the old primary coming back).
func (f *formation) restart(n *afNode) { n.cmd = f.start(n.name) }

func stopGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func dialable(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// tune applies monitorSettings to the monitor.
func (f *formation) tune() {
	f.t.Helper()
	f.waitSQL("the monitor's settings", func(c *pgx.Conn) error {
		for k, v := range monitorSettings {
			if _, err := c.Exec(context.Background(), fmt.Sprintf("ALTER SYSTEM SET pgautofailover.%s = %s", k, v)); err != nil {
				return err
			}
		}
		_, err := c.Exec(context.Background(), "SELECT pg_reload_conf()")
		return err
	})
}

// waitSQL runs do on a connection to the monitor's database as postgres
// until it succeeds.
func (f *formation) waitSQL(what string, do func(*pgx.Conn) error) {
	f.t.Helper()
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable&connect_timeout=2", f.monPort)
	wait.UntilErr(f.t, what, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		return do(c)
	})
}

// states is each node's reported state, as the monitor knows it, waiting
// for the monitor to answer.
func (f *formation) states() map[string]string {
	f.t.Helper()
	var got map[string]string
	wait.UntilErr(f.t, "the monitor to answer", func() error {
		if got = f.statesOrNil(); got == nil {
			return fmt.Errorf("no answer; its log:\n%s", f.logTail("monitor"))
		}
		return nil
	})
	return got
}

// waitStates waits until each named node reports its state, and returns
// when it saw them.
func (f *formation) waitStates(within time.Duration, want map[string]string) time.Time {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := f.states()
		ok := true
		for n, s := range want {
			ok = ok && got[n] == s
		}
		if ok {
			return time.Now()
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the formation's states %v, want %v within %s; monitor's log:\n%s", got, want, within, f.logTail("monitor"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *formation) logTail(name string) string {
	b, _ := os.ReadFile(f.path(name + ".log"))
	return tail(string(b), 40)
}

// decisions is every goal state the monitor assigned and every node it
// marked unhealthy, from its log: the formation's history in a few dozen
// lines, to place a failure among the events.
func (f *formation) decisions() string {
	b, _ := os.ReadFile(f.path("monitor.log"))
	var out []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "Setting goal state") || strings.Contains(line, "marked as unhealthy") {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(out, "\n")
}

// lowPorts picks n free ports below the kernel's ephemeral range
// (32768-60999): a node port inside it can be taken on 127.0.0.1 by a
// client's outgoing connection, leaving Postgres listening on IPv6 alone.
func lowPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		p := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil || slices.Contains(ports, p) {
			continue
		}
		ln.Close()
		ports = append(ports, p)
	}
	return ports
}

// statesOrNil is states without failing the test (nil while the monitor
// does not answer): for goroutines.
func (f *formation) statesOrNil() map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.monPort))
	if err != nil {
		return nil
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, "SELECT nodename, reportedstate::text FROM pgautofailover.node")
	if err != nil {
		return nil
	}
	got := map[string]string{}
	for rows.Next() {
		var name, state string
		if rows.Scan(&name, &state) != nil {
			return nil
		}
		got[name] = state
	}
	if rows.Err() != nil {
		return nil
	}
	return got
}
