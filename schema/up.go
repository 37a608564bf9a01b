package schema

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
)

// Migration is one embedded migration.
type Migration struct {
	Version int32  // its sequence number: the database is at Version once it is applied
	Name    string // its file name, e.g. 001_baseline.sql
	SQL     string // what it runs
}

// List returns the embedded migrations in order.
func List() ([]Migration, error) {
	m, err := migrate.NewMigratorEx(context.Background(), nil, versionTable, &migrate.MigratorOptions{})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := m.LoadMigrations(migrations()); err != nil {
		return nil, fmt.Errorf("schema: load migrations: %w", err)
	}
	out := make([]Migration, len(m.Migrations))
	for i, mg := range m.Migrations {
		out[i] = Migration{Version: mg.Sequence, Name: mg.Name, SQL: mg.UpSQL}
	}
	return out, nil
}

// Latest returns the version the embedded migrations bring a database to.
func Latest() int32 {
	l, err := List()
	if err != nil || len(l) == 0 {
		panic(fmt.Sprintf("schema: the embedded migrations do not load: %v", err)) // a build defect, caught by tests
	}
	return l[len(l)-1].Version
}

// Status is where a database stands against this build's migrations and
// function files.
type Status struct {
	Current int32       // the version applied; 0 for an empty database
	Latest  int32       // the version of this build's migrations
	Pending []Migration // the numbered migrations UpURL would apply, in order
	// PendingFunctions are the function files UpURL would apply after them:
	// never applied, or changed since. Empty when the database is Newer.
	PendingFunctions []Function
	// NewerFunctions are this build's function files whose body a newer
	// build replaced: UpURL refuses to put them back.
	NewerFunctions []Function
}

// UpToDate reports whether the database is at this build's version with
// this build's function bodies.
func (s Status) UpToDate() bool {
	return s.Current == s.Latest && len(s.PendingFunctions) == 0 && len(s.NewerFunctions) == 0
}

// Newer reports whether the database was migrated by a later build: a
// later version, or function bodies that replaced this build's.
func (s Status) Newer() bool { return s.Current > s.Latest || len(s.NewerFunctions) > 0 }

// PendingNames names what UpURL would apply: the migrations' file names,
// then the function files (functions/<name>.sql).
func (s Status) PendingNames() []string {
	var names []string
	for _, m := range s.Pending {
		names = append(names, m.Name)
	}
	for _, f := range s.PendingFunctions {
		names = append(names, f.File())
	}
	return names
}

// Explain says in one line where the database stands, for an error or a
// log line.
func (s Status) Explain() string {
	switch {
	case s.Current > s.Latest:
		return fmt.Sprintf("the database schema is at version %d, newer than this build's %d", s.Current, s.Latest)
	case s.Newer():
		return newerFunctions(s.NewerFunctions)
	case s.UpToDate():
		return fmt.Sprintf("the database schema is at version %d with this build's functions", s.Current)
	case s.Current == s.Latest:
		return fmt.Sprintf("the database schema is at version %d, but its functions are not this build's (pending: %s)",
			s.Current, strings.Join(s.PendingNames(), ", "))
	}
	return fmt.Sprintf("the database schema is at version %d and this build needs %d (pending: %s)",
		s.Current, s.Latest, strings.Join(s.PendingNames(), ", "))
}

// readStatus reads the database's version and the checksums of its
// function bodies, taking no lock and creating nothing: it works with a
// role that may not change the schema and through a transaction pooler.
func readStatus(ctx context.Context, conn *pgx.Conn) (Status, error) {
	all, err := List()
	if err != nil {
		return Status{}, err
	}
	fns, err := Functions()
	if err != nil {
		return Status{}, err
	}
	s := Status{Latest: all[len(all)-1].Version}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", versionTable).Scan(&exists); err != nil {
		return Status{}, fmt.Errorf("schema: reading the version: %w", err)
	}
	if exists {
		if err := conn.QueryRow(ctx, "SELECT version FROM "+versionTable).Scan(&s.Current); err != nil {
			return Status{}, fmt.Errorf("schema: reading the version: %w", err)
		}
	}
	if err := checkBaseline(ctx, conn, s.Current); err != nil {
		return Status{}, err
	}
	for _, m := range all {
		if m.Version > s.Current {
			s.Pending = append(s.Pending, m)
		}
	}
	if s.Current > s.Latest {
		return s, nil
	}
	rec, err := readFunctions(ctx, conn)
	if err != nil {
		return Status{}, fmt.Errorf("schema: reading %s: %w", functionTable, err)
	}
	s.PendingFunctions, s.NewerFunctions = compareFunctions(fns, rec)
	return s, nil
}

// checkBaseline refuses a database at version (≥ 1) without the function
// table: every build since the baseline makes that table before it runs a
// migration, and no build before it made one.
func checkBaseline(ctx context.Context, conn *pgx.Conn, version int32) error {
	if version < 1 {
		return nil
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", functionTable).Scan(&exists); err != nil {
		return fmt.Errorf("schema: reading %s: %w", functionTable, err)
	}
	if exists {
		return nil
	}
	return fmt.Errorf("%w (it is at version %d of migrations that no longer exist, and has no %s table); "+
		"no release made such a database, and this build does not carry it over: recreate it (drop the database "+
		"and create it empty; for ledgerd's embedded database, remove its data directory, LEDGER_DATA_DIR, "+
		"default var/ledgerd) and migrate again", ErrPreBaseline, version, functionTable)
}

// UpOptions are the settings of UpURL.
type UpOptions struct {
	// LockTimeout bounds the wait for the migration lock, which another
	// process migrating holds (default DefaultLockTimeout).
	LockTimeout time.Duration
	// Logger receives "waiting for the migration lock" while the lock is
	// held elsewhere, and one line per migration and function file applied.
	// Nil discards.
	Logger *slog.Logger
}

// DefaultLockTimeout is how long UpURL waits for the migration lock by default.
const DefaultLockTimeout = 5 * time.Minute

// lockPoll is how often up tries the migration lock while another holds it;
// lockLogEvery how often it says it is still waiting.
const (
	lockPoll     = 250 * time.Millisecond
	lockLogEvery = 10 * time.Second
)

// ErrLockTimeout is returned by UpURL when the migration lock was not free
// within UpOptions.LockTimeout.
var ErrLockTimeout = errors.New("schema: timed out waiting for the migration lock")

// ErrPreBaseline is returned by StatusURL and UpURL for a database that a
// development build migrated before the migrations were squashed into
// 001_baseline.sql: its version counts other migrations. No release made
// such a database; it is refused, not carried over.
var ErrPreBaseline = errors.New("schema: the database was migrated by a development build from before 001_baseline.sql")

// ErrNewer is returned by UpURL when the database is at a later version than
// this build's migrations: a newer ledgerd migrated it.
var ErrNewer = errors.New("schema: the database was migrated by a newer build")

// up applies the pending migrations, then the pending function files, on
// conn, and returns the status before (read under the lock when up
// migrates) and the version after. When there is nothing to apply it takes
// no lock. Otherwise it takes tern's session-level advisory lock, waiting
// at most o.LockTimeout and logging while it waits, so that replicas
// starting together apply each migration and each function file once;
// conn must therefore be a direct or session-pooled connection, never one
// through a transaction pooler.
func up(ctx context.Context, conn *pgx.Conn, o UpOptions) (before Status, version int32, err error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if before, err = readStatus(ctx, conn); err != nil {
		return before, 0, err
	}
	if before.Newer() {
		return before, before.Current, fmt.Errorf("%w: %s", ErrNewer, before.Explain())
	}
	if before.UpToDate() {
		return before, before.Current, nil
	}
	if err := lock(ctx, conn, o.LockTimeout, log); err != nil {
		return before, 0, err
	}
	defer unlock(ctx, conn, &err)
	// Another process may have migrated while we waited.
	if before, err = readStatus(ctx, conn); err != nil || before.UpToDate() {
		return before, before.Current, err
	}
	if before.Newer() {
		return before, before.Current, fmt.Errorf("%w: %s", ErrNewer, before.Explain())
	}
	version, err = apply(ctx, conn, -1, log)
	return before, version, err
}

// apply runs the numbered migrations up to version (-1: all) and, when the
// database is then at this build's latest version, the pending function
// files; it returns the version after. The caller holds the migration
// lock.
func apply(ctx context.Context, conn *pgx.Conn, version int32, log *slog.Logger) (int32, error) {
	if _, err := conn.Exec(ctx, createFunctionTable); err != nil {
		return 0, fmt.Errorf("schema: creating %s: %w", functionTable, err)
	}
	m, err := migrate.NewMigrator(ctx, conn, versionTable) // takes the lock again: reentrant in our session
	if err != nil {
		return 0, fmt.Errorf("schema: %w", err)
	}
	if err := m.LoadMigrations(migrations()); err != nil {
		return 0, fmt.Errorf("schema: load migrations: %w", err)
	}
	m.OnStart = func(seq int32, name, _, _ string) {
		log.Info("applying migration", "version", seq, "name", name)
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
	if v != Latest() {
		return v, nil
	}
	fns, err := Functions()
	if err != nil {
		return v, err
	}
	return v, applyFunctions(ctx, conn, fns, log)
}

// lockNum is tern's advisory lock key (migrate.lockNum): up takes the same
// lock tern takes, first without blocking, so that it can time out and say
// it is waiting; tern's own blocking take is then reentrant.
const lockNum = int64(9628173550095224)

// unlock releases the migration lock taken by lock, setting *err if that
// fails and nothing else did.
func unlock(ctx context.Context, conn *pgx.Conn, err *error) {
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1::int8)", lockNum); uerr != nil && *err == nil {
		*err = fmt.Errorf("schema: releasing the migration lock: %w", uerr)
	}
}

func lock(ctx context.Context, conn *pgx.Conn, timeout time.Duration, log *slog.Logger) error {
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	start := time.Now()
	var lastLog time.Time
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1::int8)", lockNum).Scan(&got); err != nil {
			return fmt.Errorf("schema: taking the migration lock: %w", err)
		}
		if got {
			if !lastLog.IsZero() {
				log.Info("got the migration lock", "waited", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		waited := time.Since(start)
		if waited >= timeout {
			return fmt.Errorf("%w after %s; held by %s", ErrLockTimeout, timeout, holder(ctx, conn))
		}
		if time.Since(lastLog) >= lockLogEvery {
			log.Warn("waiting for the migration lock", "heldBy", holder(ctx, conn), "waited", waited.Round(time.Second), "timeout", timeout)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("schema: waiting for the migration lock: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// holder describes the session holding the migration lock, for the log and
// the timeout error: its backend PID, application and client address.
func holder(ctx context.Context, conn *pgx.Conn) string {
	var desc string
	err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(format('pid %s (%s, %s)', a.pid, nullif(a.application_name, ''), a.client_addr), ', '), 'an unknown session')
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ($1::int8 >> 32)::oid AND l.objid = ($1::int8 & 4294967295)::oid AND l.objsubid = 1`,
		lockNum).Scan(&desc)
	if err != nil {
		return "an unknown session"
	}
	return desc
}
