package schema_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/syncbuf"
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

func TestUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all, err := schema.List()
	if err != nil || len(all) == 0 || all[0].Version != 1 || all[0].Name != "001_ledger.sql" || all[len(all)-1].Version != schema.Latest() {
		t.Fatalf("List = %d migrations, %v", len(all), err)
	}

	t.Run("StatusOfAnEmptyDatabaseListsEveryMigration", func(t *testing.T) {
		t.Parallel()
		st, err := schema.StatusURL(ctx, storetest.EmptyURL(t))
		if err != nil {
			t.Fatal(err)
		}
		if st.Current != 0 || st.Latest != schema.Latest() || len(st.Pending) != len(all) || st.UpToDate() || st.Newer() {
			t.Fatalf("%+v", st)
		}
	})

	t.Run("PoolSettingsInTheURLAreNotSentToTheServer", func(t *testing.T) {
		// The README documents pool_max_conns in DATABASE_URL; the
		// migration's own connection must not pass it on to Postgres.
		t.Parallel()
		url := storetest.EmptyURL(t)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		if _, v, err := schema.UpURL(ctx, url+sep+"pool_max_conns=4&pool_min_conns=1", schema.UpOptions{}); err != nil || v != schema.Latest() {
			t.Fatalf("Up with pool settings in the URL: %d %v", v, err)
		}
	})

	t.Run("AppliesPendingThenNothing", func(t *testing.T) {
		t.Parallel()
		url := storetest.EmptyURL(t)
		if _, err := schema.MigrateTo(ctx, connect(t, url), 3); err != nil {
			t.Fatal(err)
		}
		var log syncbuf.Buffer
		before, v, err := schema.UpURL(ctx, url, schema.UpOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil || before.Current != 3 || v != schema.Latest() || len(before.Pending) != len(all)-3 {
			t.Fatalf("Up from 3: %+v %d %v", before, v, err)
		}
		if !strings.Contains(log.String(), "applying migration") || !strings.Contains(log.String(), all[3].Name) {
			t.Fatalf("log: %s", log.String())
		}
		before, v, err = schema.UpURL(ctx, url, schema.UpOptions{})
		if err != nil || !before.UpToDate() || v != schema.Latest() {
			t.Fatalf("Up again: %+v %d %v", before, v, err)
		}
	})

	t.Run("UpToDateTakesNoLock", func(t *testing.T) {
		t.Parallel()
		url := storetest.URL(t)
		holder := connect(t, url)
		if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", ternLock); err != nil {
			t.Fatal(err)
		}
		_, v, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: time.Millisecond})
		if err != nil || v != schema.Latest() {
			t.Fatalf("Up of a current database with the lock held: %d %v", v, err)
		}
	})

	t.Run("WaitsForTheLockSayingSoThenTimesOut", func(t *testing.T) {
		t.Parallel()
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
	})

	t.Run("WaitsForTheLockThenMigratesOnce", func(t *testing.T) {
		t.Parallel()
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
		for deadline := time.Now().Add(30 * time.Second); strings.Count(log.String(), "waiting for the migration lock") < 3; {
			if time.Now().After(deadline) {
				t.Fatalf("the three did not all wait for the lock: %s", log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
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
	})

	t.Run("RefusesANewerDatabase", func(t *testing.T) {
		t.Parallel()
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
	})
}
