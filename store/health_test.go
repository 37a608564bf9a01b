package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// probeHealth runs DB.Health with the bound /readyz gives it.
func probeHealth(t *testing.T, db *store.DB) store.Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return db.Health(ctx)
}

// openDB opens url as ledgerd does, closed when t ends.
func openDB(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// adminConn is a superuser connection to the server of url's database,
// and the database's name.
func adminConn(t *testing.T, url string) (*pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfg.Database
}

// TestHealth: the readiness probe names what is wrong with the database
// (unreachable, read-only, statements timing out) and nothing when only
// the pool is busy.
func TestHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("Healthy", func(t *testing.T) {
		t.Parallel()
		if h := probeHealth(t, openDB(t, storetest.URL(t))); h != (store.Health{}) {
			t.Fatalf("a fresh database: %+v", h)
		}
	})

	t.Run("BusyPoolIsHealthy", func(t *testing.T) {
		t.Parallel()
		pool := storetest.PoolURL(t, storetest.URL(t)+"&pool_max_conns=1")
		held, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		if h := probeHealth(t, store.Wrap(pool, nil)); h != (store.Health{}) {
			t.Fatalf("every pooled connection taken: %+v", h)
		}
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		h := probeHealth(t, openDB(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"))
		if h.Unreachable == nil || h.ReadOnly != nil || h.Slow != nil {
			t.Fatalf("nothing listening: %+v", h)
		}
	})
}

// TestHealthDegraded: a database that turns read-only, or whose statements
// time out behind a lock, is reported as such, and healthy again once it
// is not.
func TestHealthDegraded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("ReadOnly", func(t *testing.T) {
		t.Parallel()
		url := storetest.URL(t)
		db := openDB(t, url)
		strict := openDB(t, url+"&target_session_attrs=read-write")
		if h := probeHealth(t, db); h != (store.Health{}) {
			t.Fatalf("before: %+v", h)
		}
		a, name := adminConn(t, url)
		if _, err := a.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %q SET default_transaction_read_only = on`, name)); err != nil {
			t.Fatal(err)
		}
		// A URL that takes any server, and one that asks for a read-write
		// one (whose connections are then refused): both say read-only.
		for _, db := range []*store.DB{db, strict} {
			h := probeHealth(t, db)
			if h.ReadOnly == nil || h.Unreachable != nil || h.Slow != nil || !strings.Contains(h.ReadOnly.Error(), "default_transaction_read_only") {
				t.Fatalf("read-only database: %+v", h)
			}
		}
		if _, err := a.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %q RESET default_transaction_read_only`, name)); err != nil {
			t.Fatal(err)
		}
		if h := probeHealth(t, db); h != (store.Health{}) {
			t.Fatalf("read-write again: %+v", h)
		}
	})

	t.Run("StatementsTimingOut", func(t *testing.T) {
		t.Parallel()
		url := storetest.URL(t)
		db := openDB(t, url)
		locker, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer locker.Close(ctx)
		tx, err := locker.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE holds IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		h := probeHealth(t, db)
		if h.Slow == nil || h.Unreachable != nil || h.ReadOnly != nil {
			t.Fatalf("a table locked: %+v", h)
		}
		_ = tx.Rollback(ctx)
		if h := probeHealth(t, db); h != (store.Health{}) {
			t.Fatalf("lock released: %+v", h)
		}
	})
}
