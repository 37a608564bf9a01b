package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// pgbouncerPath finds Debian's pgbouncer (in /usr/sbin, outside a user's
// PATH): without it the test is skipped, or fails with CI set (.ci/run
// installs it).
func pgbouncerPath(t *testing.T) string {
	t.Helper()
	return tooltest.Require(t, "pgbouncer", "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
}

// startPgbouncer runs pgbouncer in transaction mode on a free port in front
// of the server of dbURL, with serverConns server connections per database
// and user so that ledgerd's clients share them, and returns dbURL through
// it. It stops when the test ends (before the database is dropped, when
// dbURL was created first).
func startPgbouncer(t *testing.T, dbURL string, serverConns int) string {
	t.Helper()
	bin := pgbouncerPath(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pgbouncer")
	if err := embedpg.MkdirServer(dir); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	pw, _ := u.User.Password()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s/userlist.txt
pool_mode = transaction
default_pool_size = %d
max_client_conn = 500
logfile = %s/pgbouncer.log
pidfile = %s/pgbouncer.pid
`, u.Hostname(), u.Port(), port, dir, serverConns, dir, dir)
	files := map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("%q %q\n", u.User.Username(), pw)}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := chownLike(path, dir); err != nil {
			t.Fatal(err)
		}
	}
	cmd, err := embedpg.Command(context.Background(), bin, filepath.Join(dir, "pgbouncer.ini"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Logf("pgbouncer's log:\n%s%s", out.String(), tail(string(log), 30))
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	wait.Until(t, "pgbouncer to listen on "+addr, func() bool {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer exited: %s%s", out.String(), log)
		default:
		}
		return false
	})
	u.Host = addr
	return u.String()
}

// chownLike gives path the owner of dir (the postgres user when root).
func chownLike(path, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	return os.Chown(path, int(st.Uid), int(st.Gid))
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// launch runs ledgerd with cfg and a logger into log, and reports its
// addresses, or its error if it stops first. It is stopped when the test
// ends. Safe to call from several goroutines.
func launch(t *testing.T, cfg server.Config, log io.Writer) (addrs chan [2]string, failed chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	addrs, failed = make(chan [2]string, 1), make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := server.Run(ctx, cfg, slog.New(slog.NewJSONHandler(log, nil)), server.Hooks{Started: func(cb, adm string) { addrs <- [2]string{cb, adm} }})
		failed <- err
	}()
	t.Cleanup(func() { cancel(); <-done })
	return addrs, failed
}

// statuses counts answers by status.
type statuses struct {
	mu sync.Mutex
	n  map[int]int
}

func (s *statuses) add(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[int]int{}
	}
	s.n[code]++
}

func (s *statuses) get() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

// TestPgbouncer runs ledgerd behind pgbouncer (Debian's, 1.18 on the CI
// machines) in transaction mode with two server connections for ledgerd's
// sixteen.
func TestPgbouncer(t *testing.T) {
	tooltest.SkipShort(t, "runs pgbouncer in front of ledgerd under load")
	t.Parallel()
	secret, b64 := testSecret()
	t.Run("CallbacksAndAdminAPIWithoutA500AndAFreshKeyring", func(t *testing.T) {
		t.Parallel()
		behindPgbouncer(t, secret, b64)
	})

	t.Run("ForcedNamedStatementsAreRetryableNever500", func(t *testing.T) {
		t.Parallel()
		dbURL := storetest.URL(t)
		pooled := startPgbouncer(t, dbURL, 2)
		d := start(t, config(t, "DATABASE_URL", pooled, "LEDGER_PROVIDER_ID", "bank-b", "LEDGER_SIGNING_SECRETS", b64,
			"LEDGER_DB_EXEC_MODE", "cache_statement"))
		b := newBank(t, d, "bank-b", secret, "")
		var wg sync.WaitGroup
		var codes statuses
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 15 {
					r, err := b.credit(context.Background(), fmt.Sprintf("rq-%d-%d", w, i), fmt.Sprintf("k-%d-%d", w, i), "none", "nobody", "1.00")
					if err != nil {
						t.Error(err)
						return
					}
					codes.add(r.Status)
					code, _ := b.do("GET", "/v1/holds?limit=1", nil)
					codes.add(code)
				}
			}()
		}
		wg.Wait()
		got := codes.get()
		t.Logf("cache_statement behind pgbouncer 1.18: %v", got)
		for code := range got {
			if code != 200 && code != 503 && code != 408 && code != 429 {
				t.Fatalf("answers %v: %d is neither a success nor retryable", got, code)
			}
		}
	})

}

// behindPgbouncer runs ledgerd behind pgbouncer (transaction pooling, two
// server connections), detected as such; callbacks and the admin API
// under load answer only 200s, and a secret added then opens callbacks.
func behindPgbouncer(t *testing.T, secret []byte, b64 string) {
	t.Helper()
	dbURL := storetest.URL(t)
	pooled := startPgbouncer(t, dbURL, 2)
	var log syncbuf.Buffer
	addrs, failed := launch(t, config(t, "DATABASE_URL", pooled, "LEDGER_PROVIDER_ID", "bank-b", "LEDGER_SIGNING_SECRETS", b64), &log)
	var d daemon
	select {
	case a := <-addrs:
		d.callbacks, d.admin = a[0], a[1]
	case err := <-failed:
		t.Fatalf("ledgerd behind pgbouncer did not start: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), `"pooled":true`) || !strings.Contains(log.String(), `"execMode":"cache_describe"`) {
		t.Fatalf("pgbouncer was not detected:\n%s", log.String())
	}
	b := newBank(t, &d, "bank-b", secret, "")
	pgbouncerLoad(t, b, &log)
	freshSecretOpens(t, b, &d)
}

// pgbouncerLoad runs 8 workers of 15 authorize-capture-read rounds through
// b and requires only 200s, and no prepared statement error in log.
func pgbouncerLoad(t *testing.T, b *bank, log *syncbuf.Buffer) {
	t.Helper()
	const workers, rounds = 8, 15
	for w := range workers {
		b.customer(fmt.Sprintf("acc-b%d", w), fmt.Sprintf("owner-%d", w), "1000.00")
	}
	var wg sync.WaitGroup
	var codes statuses
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct, owner := fmt.Sprintf("acc-b%d", w), fmt.Sprintf("owner-%d", w)
			for i := range rounds {
				id := fmt.Sprintf("%d-%d", w, i)
				r, err := b.authorize(context.Background(), "p-"+id, "ka-"+id, acct, owner, "1.00")
				if err != nil {
					t.Error(err)
					return
				}
				codes.add(r.Status)
				if r.Status != 200 {
					continue
				}
				r, err = b.capture(context.Background(), "p-"+id, "kc-"+id, r.Str("holdReference"))
				if err != nil {
					t.Error(err)
					return
				}
				codes.add(r.Status)
				// The admin API on the same pool.
				code, _ := b.do("GET", "/v1/accounts/"+acct, nil)
				codes.add(code)
			}
		}()
	}
	wg.Wait()
	got := codes.get()
	t.Logf("behind pgbouncer (2 server connections, %d workers): %d callbacks and admin reads in %s: %v",
		workers, got[200], time.Since(start).Round(time.Millisecond), got)
	if got[200] != 3*workers*rounds || len(got) != 1 {
		t.Fatalf("answers %v, want only 200s", got)
	}
	if strings.Contains(log.String(), "prepared statement") {
		t.Fatalf("a prepared statement error in the log:\n%s", log.String())
	}

}

// freshSecretOpens adds a signing secret through the admin API: it opens
// callbacks within 5 s (the keyring reloads through the pooler), and
// ledgerd stays ready.
func freshSecretOpens(t *testing.T, b *bank, d *daemon) {
	t.Helper()
	// A secret added now opens callbacks within 5 s (the keyring
	// reloads through the pooler).
	added := b.must(201, "POST", "/v1/signing-secrets", map[string]any{"generate": true})
	fresh, err := envelope.ParseSecret(added["secret"].(string))
	if err != nil {
		t.Fatal(err)
	}
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: fresh}}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := c.Send(context.Background(), claims.Capture, map[string]any{"payoutID": "p-new", "providerID": "bank-b",
			"holdReference": "hold_none", "idempotencyKey": "k-new"})
		if err == nil && r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new secret did not open a callback within 5s: %+v %v", r, err)
		}
	}
	if code := get(t, "http://"+d.admin+"/readyz", nil); code != http.StatusOK {
		t.Fatalf("readyz = %d", code)
	}
}

// TestPgbouncerMigrations: behind pgbouncer, replicas starting together
// migrate once (through LEDGER_MIGRATION_DATABASE_URL), and a pooled URL
// alone does not migrate.
func TestPgbouncerMigrations(t *testing.T) {
	tooltest.SkipShort(t, "runs pgbouncer in front of ledgerd replicas")
	t.Parallel()
	_, b64 := testSecret()
	t.Run("ReplicasStartingTogetherMigrateOnce", func(t *testing.T) {
		t.Parallel()
		direct := storetest.EmptyURL(t)
		pooled := startPgbouncer(t, direct, 2)
		const replicas = 3
		_, kek := testSecret() // replicas share a KEK
		logs := make([]*syncbuf.Buffer, replicas)
		starts := make([]chan [2]string, replicas)
		fails := make([]chan error, replicas)
		for i := range replicas {
			logs[i] = &syncbuf.Buffer{}
			starts[i], fails[i] = launch(t, config(t, "DATABASE_URL", pooled, "LEDGER_MIGRATION_DATABASE_URL", direct,
				"LEDGER_PROVIDER_ID", "bank-b", "LEDGER_SIGNING_SECRETS", b64, "LEDGER_KEK", kek, "LEDGER_RECONCILE_EVERY", "0"), logs[i])
		}
		migrated := 0
		for i := range replicas {
			select {
			case <-starts[i]:
			case err := <-fails[i]:
				t.Fatalf("replica %d did not start: %v\n%s", i, err, logs[i].String())
			}
			if strings.Contains(logs[i].String(), `"msg":"schema migrated"`) {
				migrated++
			} else if !strings.Contains(logs[i].String(), `"msg":"schema up to date"`) {
				t.Fatalf("replica %d neither migrated nor found the schema current:\n%s", i, logs[i].String())
			}
		}
		if migrated != 1 {
			t.Fatalf("%d replicas migrated, want 1", migrated)
		}
	})
	t.Run("APooledURLAloneDoesNotMigrate", func(t *testing.T) {
		t.Parallel()
		pooled := startPgbouncer(t, storetest.EmptyURL(t), 2)
		err := startErr(t, config(t, "DATABASE_URL", pooled, "LEDGER_PROVIDER_ID", "bank-b", "LEDGER_SIGNING_SECRETS", b64))
		if err == nil || !strings.Contains(err.Error(), "LEDGER_MIGRATION_DATABASE_URL") || !strings.Contains(err.Error(), "ledgerctl migrate") {
			t.Fatalf("a pooled URL on an empty database: %v, want a refusal naming LEDGER_MIGRATION_DATABASE_URL", err)
		}
	})
}
