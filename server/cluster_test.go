package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/wait"
)

// pgNode is a Postgres server of a test's own replication cluster, run from
// the machine's server binaries (as the postgres user when root, like
// embedpg), on 127.0.0.1 only, trust authentication, no Unix socket.
type pgNode struct {
	t       *testing.T
	name    string
	dir     string // PGDATA
	port    int
	log     string // the server's output
	cmd     *exec.Cmd
	exited  chan struct{}
	orphans []int // children of a killed postmaster
}

// run runs a server binary to completion, failing the test with its output.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd, err := embedpg.Command(context.Background(), name, args...)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// newPrimary initdbs a cluster under root and starts it. With syncStandby,
// commits wait for the standby of that application_name.
func newPrimary(t *testing.T, root, syncStandby string) *pgNode {
	t.Helper()
	n := &pgNode{t: t, name: "primary", dir: filepath.Join(root, "primary"), port: freePort(t), log: filepath.Join(root, "primary.log")}
	run(t, "initdb", "-D", n.dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
port = %d
wal_level = replica
max_wal_senders = 4
synchronous_standby_names = '%s'
synchronous_commit = on
# A SIGKILL keeps what the kernel was given: fsync guards against a machine
# crash, which these tests do not play.
fsync = off
shared_buffers = 32MB
max_connections = 60
wal_sender_timeout = 5s
`, n.port, syncStandby)
	n.appendConf(conf)
	n.start()
	return n
}

// newStandby clones primary with pg_basebackup -R (a streaming standby
// named name) and starts it.
func newStandby(t *testing.T, root string, primary *pgNode, name string) *pgNode {
	t.Helper()
	n := &pgNode{t: t, name: name, dir: filepath.Join(root, name), port: freePort(t), log: filepath.Join(root, name+".log")}
	run(t, "pg_basebackup", "-d", fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", primary.port, name),
		"-D", n.dir, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	// Promoted, it has no standby of its own: it must not wait for one.
	n.appendConf(fmt.Sprintf("\nport = %d\nhot_standby = on\nwal_receiver_timeout = 5s\nsynchronous_standby_names = ''\n", n.port))
	n.start()
	return n
}

func (n *pgNode) appendConf(s string) {
	n.t.Helper()
	f, err := os.OpenFile(filepath.Join(n.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		n.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		n.t.Fatal(err)
	}
}

func (n *pgNode) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", n.port, db)
}

// start starts the server and waits until it accepts connections. It is
// killed, with whatever it left, when the test ends.
func (n *pgNode) start() {
	n.t.Helper()
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	defer logf.Close()
	cmd, err := embedpg.Command(context.Background(), "postgres", "-D", n.dir)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	exited := n.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	n.t.Cleanup(func() { n.kill() })
	wait.UntilErr(n.t, n.name+" to accept connections", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, n.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			n.t.Fatalf("%s exited at start: %s", n.name, n.tail())
		default:
		}
		return err
	})
}

// pids lists the postmaster and its children (each of which is a session
// of its own, so a process group does not hold them), with those of an
// earlier killPostmaster.
func (n *pgNode) pids() []int {
	pids := append([]int{n.cmd.Process.Pid}, n.orphans...)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(n.cmd.Process.Pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signal sends sig to every process of the server (SIGSTOP: a hung host).
func (n *pgNode) signal(sig syscall.Signal) {
	for _, pid := range n.pids() {
		_ = syscall.Kill(pid, sig)
	}
}

// killPostmaster SIGKILLs the postmaster alone, as a crash of it would:
// its backends live on until they notice.
func (n *pgNode) killPostmaster() {
	pids := n.pids()
	n.orphans = pids[1:]
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

// kill SIGKILLs every process of the server: fencing.
func (n *pgNode) kill() {
	if n.cmd == nil {
		return
	}
	n.signal(syscall.SIGKILL)
	n.orphans = nil
	<-n.exited
}

// exec runs sql on the node's database db.
func (n *pgNode) exec(db, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.url(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// scalar runs a query of one value on the node's database db.
func (n *pgNode) scalar(db, sql string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.url(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(ctx, sql, args...).Scan(out)
}

// waitStreaming waits until the primary streams to standby, synchronously
// when sync.
func (n *pgNode) waitStreaming(standby string, sync bool) {
	n.t.Helper()
	want := "async"
	if sync {
		want = "sync"
	}
	wait.UntilErr(n.t, n.name+" to stream to "+standby+" ("+want+")", func() error {
		var state string
		err := n.scalar("postgres", `SELECT state || '/' || sync_state FROM pg_stat_replication WHERE application_name = $1`, &state, standby)
		if err == nil && state != "streaming/"+want {
			err = fmt.Errorf("state %q", state)
		}
		return err
	})
}

func (n *pgNode) tail() string {
	b, _ := os.ReadFile(n.log)
	return "\n" + tail(string(b), 20)
}

func (n *pgNode) String() string { return n.name + ":" + strconv.Itoa(n.port) }
