// Package storetest is the kit of the database tests, beside the store it
// serves (as net/http/httptest is beside net/http).
//
// It gives each test its own migrated Postgres database, cloned
// in milliseconds from a template database that is migrated once per schema
// version (peterldowns/pgtestdb), so database tests run in parallel without
// sharing state.
//
// The server is TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres (trust authentication for
// loopback). A test that cannot reach it fails with a message saying how to
// get one; it never skips. The message is given in full once per test
// process (the first test that needs the server); the other tests fail
// with one line pointing at it.
//
// Every database a test creates (testdb_tpl_<hash>_inst_<random>) is
// dropped when the test ends, passed or failed; PGTEST_KEEP_FAILED=1 keeps
// those of failed tests for inspection (their URL is in the test's log).
// The template of each schema version (testdb_tpl_<hash>) is kept and
// reused by later runs.
package storetest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the driver pgtestdb uses to create databases
	"github.com/peterldowns/pgtestdb"

	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store"
)

// DefaultURL is the server tests use when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres"

func serverConfig(t testing.TB) pgtestdb.Config {
	raw := os.Getenv("TEST_DATABASE_URL")
	if raw == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("storetest: TEST_DATABASE_URL: %v", err)
	}
	pw, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	db := u.Path
	if len(db) > 1 {
		db = db[1:]
	} else {
		db = "postgres"
	}
	opts := u.RawQuery
	if opts == "" {
		opts = "sslmode=disable"
	}
	return pgtestdb.Config{
		DriverName: "pgx",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   pw,
		Database:   db,
		Options:    opts,
	}
}

type migrator struct{}

func (migrator) Hash() (string, error) { return schema.Hash() }

func (migrator) Migrate(ctx context.Context, _ *sql.DB, cfg pgtestdb.Config) error {
	_, err := schema.MigrateURL(ctx, cfg.URL())
	return err
}

type empty struct{}

func (empty) Hash() (string, error) { return "empty-v1", nil }

func (empty) Migrate(context.Context, *sql.DB, pgtestdb.Config) error { return nil }

// EmptyURL creates a fresh database without the schema for t (tests of the
// migrations themselves) and returns its URL.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return create(t, empty{})
}

// URL creates a fresh migrated database for t and returns its URL. The
// database is dropped when t ends (see the package doc).
func URL(t testing.TB) string {
	t.Helper()
	return create(t, migrator{})
}

// create makes t's database and arranges for it to be dropped.
func create(t testing.TB, m pgtestdb.Migrator) string {
	t.Helper()
	reachable(t)
	cfg := serverConfig(t)
	var name string
	// Registered before pgtestdb's own clean-up, so it runs after it: that
	// one drops the database of a passed test (and fails a test that left a
	// connection open); this one drops whatever is left.
	t.Cleanup(func() {
		if name == "" || t.Failed() && os.Getenv("PGTEST_KEEP_FAILED") != "" {
			return
		}
		drop(t, cfg, name)
	})
	inst := pgtestdb.Custom(t, cfg, m)
	name = inst.Database
	return inst.URL()
}

// drop drops the database name, closing its connections.
func drop(t testing.TB, cfg pgtestdb.Config, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, cfg.URL())
	if err != nil {
		t.Errorf("storetest: dropping %s: %v", name, store.ExplainFor(err, "TEST_DATABASE_URL"))
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Errorf("storetest: dropping %s: %v", name, err)
	}
}

// probeState is the one check per test process and server that the
// server answers, and whether a test was told how to get one.
type probeState struct {
	once sync.Once
	err  error // nil when it answers
	told atomic.Bool
}

// probes maps a server's URL to its *probeState.
var probes sync.Map

// reachable fails t with what to do when the test server cannot be
// reached: in full for the first test of the process, in one line for the
// others.
func reachable(t testing.TB) {
	t.Helper()
	cfg := serverConfig(t)
	v, _ := probes.LoadOrStore(cfg.URL(), &probeState{})
	p := v.(*probeState)
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, cfg.URL())
		if err != nil {
			p.err = store.ExplainFor(err, "TEST_DATABASE_URL")
			return
		}
		conn.Close(ctx)
	})
	switch {
	case p.err == nil:
		return
	case p.told.CompareAndSwap(false, true):
		t.Fatalf("storetest: %v\n%s", p.err, Hint)
	}
	t.Fatalf("storetest: no test database server at %s:%s (the first test that needed it says why, and how to get one)", cfg.Host, cfg.Port)
}

// Hint says how to give the tests a Postgres.
const Hint = `The database tests need a real Postgres, as a superuser (they create roles and databases); the README's Quick start says more. Either:
  - the machine's cluster on 127.0.0.1:5432 with trust authentication for loopback connections
    (Debian's postgresql package asks for a password: put "host all postgres 127.0.0.1/32 trust"
    first in pg_hba.conf, then reload); or
  - TEST_DATABASE_URL=postgres://postgres:PASSWORD@HOST:PORT/postgres for a server with a password; or
  - an embedded cluster: run "go run ./internal/tools/testpg" in another terminal and export the
    TEST_DATABASE_URL it prints.`

// Pool returns a pool on a fresh migrated database for t, closed when t ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return PoolURL(t, URL(t))
}

// DB returns a pool on a fresh migrated database for t, and the store on
// it; both closed when t ends.
func DB(t testing.TB) (*store.DB, *pgxpool.Pool) {
	t.Helper()
	pool := Pool(t)
	return store.Wrap(pool, nil), pool
}

// PoolURL returns a pool on the database at url, closed when t ends.
func PoolURL(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := store.Config(url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A few tests share the server at once (go test runs packages and
	// parallel tests side by side); keep well under max_connections (100).
	cfg.MaxConns = 12
	// Tests check outcomes, not durability: do not wait for fsync at commit.
	// Benchmarks that want commit costs as in production set
	// PGTEST_SYNCHRONOUS_COMMIT=on.
	sync := os.Getenv("PGTEST_SYNCHRONOUS_COMMIT")
	if sync == "" {
		sync = "off"
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = sync
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("storetest: pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// AdminURL returns a URL to the database of dbURL with the credentials of
// the test server's own user (a superuser on a developer machine and in
// CI), for tests that must act on the database from outside: terminate its
// connections, refuse new ones.
func AdminURL(t testing.TB, dbURL string) string {
	t.Helper()
	cfg := serverConfig(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = u.Path[1:]
	return cfg.URL()
}
