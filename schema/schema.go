// Package schema holds the database schema of the adapter as numbered SQL
// migrations embedded in the binary, and applies them.
//
// Migrations are plain SQL files in migrations/ named NNN_name.sql, applied in
// order by jackc/tern under a Postgres advisory lock, so that several
// replicas starting at once apply each migration exactly once. ledgerd
// applies them at start; `ledgerctl migrate` applies them on demand.
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

// MigrateURL connects to the database at url, applies the migrations and
// disconnects.
func MigrateURL(ctx context.Context, url string) (int32, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("schema: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return Migrate(ctx, conn)
}
