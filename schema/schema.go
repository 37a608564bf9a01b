// Package schema holds the database schema of the adapter as numbered SQL
// migrations embedded in the binary, and applies them.
//
// Migrations are plain SQL files in migrations/ named NNN_name.sql, applied in
// order by jackc/tern under a Postgres advisory lock, so that several
// replicas starting at once apply each migration exactly once (Up: it
// waits for that lock at most UpOptions.LockTimeout, saying so in the log).
// ledgerd applies them at start unless LEDGER_MIGRATE=off; `ledgerctl
// migrate` applies them on demand, `ledgerctl migrate status` and `up
// --dry-run` show what is pending (ReadStatus, which needs no lock and no
// right to change the schema).
//
// The functions the migrations create run under READ COMMITTED and never
// commit: they compose into the caller's transaction.
package schema

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var files embed.FS

// VersionTable is the table in which tern records the applied version.
const VersionTable = "schema_version"

// Migrations returns the embedded migration files.
func Migrations() fs.FS {
	sub, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Hash identifies the schema the migrations produce: a SHA-256 of every
// migration's name and content. Test helpers key template databases on it.
func Hash() (string, error) {
	names, err := fs.Glob(Migrations(), "*.sql")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		b, err := fs.ReadFile(Migrations(), name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Migrate applies every pending migration on conn and returns the version
// the database is at afterwards. It is safe to call from several processes
// at once: tern serializes them on an advisory lock.
func Migrate(ctx context.Context, conn *pgx.Conn) (int32, error) {
	return MigrateTo(ctx, conn, -1)
}

// MigrateTo applies the pending migrations up to version (-1: all) on conn
// and returns the version the database is at afterwards. Tests use it to
// build a database of an older schema and upgrade it.
func MigrateTo(ctx context.Context, conn *pgx.Conn, version int32) (int32, error) {
	m, err := migrate.NewMigrator(ctx, conn, VersionTable)
	if err != nil {
		return 0, fmt.Errorf("schema: %w", err)
	}
	if err := m.LoadMigrations(Migrations()); err != nil {
		return 0, fmt.Errorf("schema: load migrations: %w", err)
	}
	if version < 0 {
		err = m.Migrate(ctx)
	} else {
		err = m.MigrateTo(ctx, version)
	}
	if err != nil {
		return 0, fmt.Errorf("schema: migrate: %w", err)
	}
	v, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema: read version: %w", err)
	}
	return v, nil
}

// Connect opens the one connection the schema's functions use. Statements
// go without named prepared statements (pgx's exec mode), so that a status
// read through a transaction pooler works too.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	// Parsed as the pool parses it, so that the pool's own settings
	// (pool_max_conns, …) are taken out rather than sent to the server as
	// run-time parameters it does not know.
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("schema: database URL: %w", err)
	}
	cfg := pc.ConnConfig
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("schema: connect: %w", err)
	}
	return conn, nil
}

// MigrateURL connects to the database at url, applies the migrations and
// disconnects.
func MigrateURL(ctx context.Context, url string) (int32, error) {
	_, v, err := UpURL(ctx, url, UpOptions{})
	return v, err
}

// UpURL is Up on a connection of its own to url.
func UpURL(ctx context.Context, url string, o UpOptions) (Status, int32, error) {
	conn, err := Connect(ctx, url)
	if err != nil {
		return Status{}, 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return Up(ctx, conn, o)
}

// StatusURL is ReadStatus on a connection of its own to url.
func StatusURL(ctx context.Context, url string) (Status, error) {
	conn, err := Connect(ctx, url)
	if err != nil {
		return Status{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return ReadStatus(ctx, conn)
}
