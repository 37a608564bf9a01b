// Package pgtest gives each test its own migrated Postgres database, cloned
// in milliseconds from a template database that is migrated once per schema
// version (peterldowns/pgtestdb), so database tests run in parallel without
// sharing state.
//
// The server is TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres. A test that cannot reach it
// fails with a message saying how to get one; it never skips.
package pgtest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
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
		t.Fatalf("pgtest: TEST_DATABASE_URL: %v", err)
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
	reachable(t)
	return pgtestdb.Custom(t, serverConfig(t), empty{}).URL()
}

// URL creates a fresh migrated database for t and returns its URL. The
// database is dropped when t passes and kept for inspection when it fails.
func URL(t testing.TB) string {
	t.Helper()
	reachable(t)
	return pgtestdb.Custom(t, serverConfig(t), migrator{}).URL()
}

// reachable fails t with what to do when the test server cannot be
// reached.
func reachable(t testing.TB) {
	t.Helper()
	cfg := serverConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, cfg.URL())
	if err != nil {
		t.Fatalf("pgtest: cannot reach Postgres at %s:%s (%v).\n"+
			"Database tests need a real Postgres: start one on 127.0.0.1:5432 with trust auth for user postgres "+
			"(e.g. `apt-get install postgresql`, or `bash .ci/run`, which starts an embedded one), "+
			"or point TEST_DATABASE_URL at one.", cfg.Host, cfg.Port, err)
	}
	conn.Close(ctx)
}

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
		t.Fatalf("pgtest: pool: %v", err)
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
