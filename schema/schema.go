package schema

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql functions/*.sql
var files embed.FS

// versionTable is the table in which tern records the applied version.
const versionTable = "schema_version"

// migrations returns the embedded migration files.
func migrations() fs.FS {
	sub, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Hash identifies the schema this build produces: a SHA-256 of the name
// and content of every migration and function file. Test helpers key
// template databases on it, so that a changed function body makes new
// templates too.
func Hash() (string, error) { return hashFiles(files) }

// hashFiles is Hash of the migrations and function files of fsys.
func hashFiles(fsys fs.FS) (string, error) {
	var names []string
	for _, pattern := range []string{"migrations/*.sql", "functions/*.sql"} {
		m, err := fs.Glob(fsys, pattern)
		if err != nil {
			return "", err
		}
		names = append(names, m...)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// migrateLatest applies every pending migration and function file on conn (as
// up does, waiting for the migration lock at most DefaultLockTimeout) and
// returns the version the database is at afterwards.
func migrateLatest(ctx context.Context, conn *pgx.Conn) (int32, error) {
	return migrateTo(ctx, conn, -1)
}

// migrateTo applies the numbered migrations up to version (-1: all) on
// conn, and the function files when that is this build's latest version,
// under the migration lock; it returns the version the database is at
// afterwards. A database left below the latest version has its functions
// as declared, not defined: up completes it.
func migrateTo(ctx context.Context, conn *pgx.Conn, version int32) (_ int32, err error) {
	st, err := readStatus(ctx, conn)
	if err != nil {
		return 0, err
	}
	if st.Newer() {
		return st.Current, fmt.Errorf("%w: %s", ErrNewer, st.Explain())
	}
	log := slog.New(slog.DiscardHandler)
	if err := lock(ctx, conn, DefaultLockTimeout, log); err != nil {
		return 0, err
	}
	defer unlock(ctx, conn, &err)
	return apply(ctx, conn, version, log)
}

// connect opens the one connection the schema's functions use. Statements
// go without named prepared statements (pgx's exec mode), so that a status
// read through a transaction pooler works too.
func connect(ctx context.Context, url string) (*pgx.Conn, error) {
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

// UpURL is up on a connection of its own to url.
func UpURL(ctx context.Context, url string, o UpOptions) (Status, int32, error) {
	conn, err := connect(ctx, url)
	if err != nil {
		return Status{}, 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return up(ctx, conn, o)
}

// StatusURL is readStatus on a connection of its own to url.
func StatusURL(ctx context.Context, url string) (Status, error) {
	conn, err := connect(ctx, url)
	if err != nil {
		return Status{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return readStatus(ctx, conn)
}
