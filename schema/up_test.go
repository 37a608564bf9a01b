package schema_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store/storetest"
)

// ternLock is tern's migration lock key (migrate.lockNum).
const ternLock = int64(9628173550095224)

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// embedded returns this build's migrations and function files, checking
// that the migrations start at the baseline.
func embedded(t *testing.T) ([]schema.Migration, []schema.Function) {
	t.Helper()
	fns, err := schema.Functions()
	if err != nil || len(fns) == 0 {
		t.Fatalf("Functions = %d files, %v", len(fns), err)
	}
	all, err := schema.List()
	if err != nil || len(all) == 0 || all[0].Version != 1 || all[0].Name != "001_baseline.sql" || all[len(all)-1].Version != schema.Latest() {
		t.Fatalf("List = %d migrations, %v", len(all), err)
	}
	return all, fns
}

// TestUpStatusOfAnEmptyDatabaseListsEveryMigration: an empty database has
// every migration and every function file pending.
func TestUpStatusOfAnEmptyDatabaseListsEveryMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, fns := embedded(t)
	st, err := schema.StatusURL(ctx, storetest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 0 || st.Latest != schema.Latest() || len(st.Pending) != len(all) || len(st.PendingFunctions) != len(fns) ||
		st.UpToDate() || st.Newer() {
		t.Fatalf("%+v", st)
	}
}

// TestUpPoolSettingsInTheURLAreNotSentToTheServer: the README documents
// pool_max_conns in DATABASE_URL; the migration's own connection must not
// pass it on to Postgres.
func TestUpPoolSettingsInTheURLAreNotSentToTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.EmptyURL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	if _, v, err := schema.UpURL(ctx, url+sep+"pool_max_conns=4&pool_min_conns=1", schema.UpOptions{}); err != nil || v != schema.Latest() {
		t.Fatalf("Up with pool settings in the URL: %d %v", v, err)
	}
}

// TestUpAppliesPendingThenNothing: Up applies the migrations, then the
// function files, saying so in the log; a second Up finds nothing to do.
func TestUpAppliesPendingThenNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, fns := embedded(t)
	url := storetest.EmptyURL(t)
	var log syncbuf.Buffer
	before, v, err := schema.UpURL(ctx, url, schema.UpOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil || before.Current != 0 || v != schema.Latest() || len(before.Pending) != len(all) || len(before.PendingFunctions) != len(fns) {
		t.Fatalf("Up from 0: %+v %d %v", before, v, err)
	}
	// The migrations, in order, then the function files.
	l := log.String()
	last := strings.Index(l, all[len(all)-1].Name)
	first := strings.Index(l, "applying function")
	if !strings.Contains(l, "applying migration") || last < 0 || first < last || strings.Count(l, "applying function") != len(fns) {
		t.Fatalf("log: %s", l)
	}
	before, v, err = schema.UpURL(ctx, url, schema.UpOptions{})
	if err != nil || !before.UpToDate() || v != schema.Latest() {
		t.Fatalf("Up again: %+v %d %v", before, v, err)
	}
}

// TestUpAtTheLatestVersionWithoutTheFunctionsUpDefinesThem: after a crash
// between the last migration and the function files, the functions are
// declared, not defined: they refuse to run, the status lists them, and Up
// completes the job.
func TestUpAtTheLatestVersionWithoutTheFunctionsUpDefinesThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, fns := embedded(t)
	url := storetest.EmptyURL(t)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, schema.CreateFunctionTable); err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (version int4 NOT NULL); INSERT INTO %[1]s VALUES (%d)", schema.VersionTable, schema.Latest())); err != nil {
		t.Fatal(err)
	}
	var msg string
	if err := conn.QueryRow(ctx, "SELECT outcome FROM cb_credit('k', sha256('k'), 'kf', now(), 'r', 'd', 'o', 'USD', 1, NULL, 'c', gen_random_uuid())").Scan(&msg); err == nil ||
		!strings.Contains(err.Error(), "declared, not defined: run ledgerctl migrate") {
		t.Fatalf("a declared function ran: %q %v", msg, err)
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || st.UpToDate() || len(st.Pending) != 0 || len(st.PendingFunctions) != len(fns) {
		t.Fatalf("status: %+v %v", st, err)
	}
	if _, _, err := schema.UpURL(ctx, url, schema.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT outcome FROM cb_credit('k', sha256('k'), 'kf', now(), 'r', 'd', 'o', 'USD', 1, NULL, 'c', gen_random_uuid())").Scan(&msg); err != nil || msg != "destination_unavailable" {
		t.Fatalf("cb_credit after Up: %q %v, want destination_unavailable (row 3)", msg, err)
	}
}

// TestUpRefusesADatabaseOfTheMigrationsBeforeTheBaseline: what a
// development build before the squash left (tern's version of its own
// migrations, no function table) is refused, and left as it was.
func TestUpRefusesADatabaseOfTheMigrationsBeforeTheBaseline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range []int{1, 9} {
		url := storetest.EmptyURL(t)
		if _, err := connect(t, url).Exec(ctx, fmt.Sprintf("CREATE TABLE schema_version (version int4 NOT NULL); INSERT INTO schema_version VALUES (%d); "+
			"CREATE TABLE accounts (account_id text PRIMARY KEY)", version)); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.StatusURL(ctx, url); !errors.Is(err, schema.ErrPreBaseline) || !strings.Contains(err.Error(), "recreate it") {
			t.Fatalf("status at pre-baseline version %d: %v, want ErrPreBaseline saying what to do", version, err)
		}
		if _, _, err := schema.UpURL(ctx, url, schema.UpOptions{}); !errors.Is(err, schema.ErrPreBaseline) {
			t.Fatalf("Up at pre-baseline version %d: %v, want ErrPreBaseline", version, err)
		}
		if _, err := schema.MigrateURL(ctx, url); !errors.Is(err, schema.ErrPreBaseline) {
			t.Fatalf("Migrate at pre-baseline version %d: %v, want ErrPreBaseline", version, err)
		}
		var v int32
		var made bool
		if err := connect(t, url).QueryRow(ctx, "SELECT (SELECT version FROM schema_version), to_regclass('schema_functions') IS NOT NULL").Scan(&v, &made); err != nil || v != int32(version) || made {
			t.Fatalf("after the refusals: version %d, function table made %v (%v): want nothing changed", v, made, err)
		}
	}
}

// TestUpUpToDateTakesNoLock: Up of a current database does not wait for
// the migration lock.
func TestUpUpToDateTakesNoLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	holder := connect(t, url)
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	_, v, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: time.Millisecond})
	if err != nil || v != schema.Latest() {
		t.Fatalf("Up of a current database with the lock held: %d %v", v, err)
	}
}

// TestUpWaitsForTheLockSayingSoThenTimesOut: with the lock held elsewhere,
// Up logs that it waits, and gives up after its timeout naming the holder,
// having applied nothing.
func TestUpWaitsForTheLockSayingSoThenTimesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.EmptyURL(t)
	holder := connect(t, url)
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	_, _, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: 500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if !errors.Is(err, schema.ErrLockTimeout) || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("Up with the lock held elsewhere: %v, want ErrLockTimeout naming the holder", err)
	}
	if !strings.Contains(log.String(), "waiting for the migration lock") {
		t.Fatalf("no waiting line in the log: %s", log.String())
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || st.Current != 0 {
		t.Fatalf("after the timeout: %+v %v", st, err)
	}
}

// TestUpWaitsForTheLockThenMigratesOnce: of three Ups waiting for the lock,
// one migrates and the others find nothing pending.
func TestUpWaitsForTheLockThenMigratesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.EmptyURL(t)
	holder := connect(t, url)
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	type result struct {
		before schema.Status
		err    error
	}
	var log syncbuf.Buffer
	results := make(chan result, 3)
	for range 3 {
		go func() {
			before, _, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			results <- result{before, err}
		}()
	}
	// The three wait (each says so once at first); released, one
	// applies everything and the others find nothing pending.
	wait.Until(t, "the three to wait for the migration lock", func() bool {
		return strings.Count(log.String(), "waiting for the migration lock") >= 3
	})
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	applied := 0
	for range 3 {
		r := <-results
		if r.err != nil {
			t.Fatalf("concurrent Up: %v", r.err)
		}
		if !r.before.UpToDate() {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("%d of the three found migrations pending under the lock, want 1", applied)
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || !st.UpToDate() {
		t.Fatalf("%+v %v", st, err)
	}
}

// TestUpRefusesANewerDatabase: a database at a later version than this
// build's is reported newer and Up refuses it.
func TestUpRefusesANewerDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	if _, err := connect(t, storetest.AdminURL(t, url)).Exec(ctx, "UPDATE schema_version SET version = version + 1"); err != nil {
		t.Fatal(err)
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || !st.Newer() {
		t.Fatalf("%+v %v", st, err)
	}
	if _, _, err := schema.UpURL(ctx, url, schema.UpOptions{}); !errors.Is(err, schema.ErrNewer) {
		t.Fatalf("Up of a newer database: %v, want ErrNewer", err)
	}
}
