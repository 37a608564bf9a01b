package storetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/internal/wait"
)

// WaitForLockWaiters waits until at least n other backends of pool's
// database wait on a lock (a row lock, an advisory lock): the point at
// which a test has made a second transaction queue behind its first,
// instead of sleeping and hoping it did.
func WaitForLockWaiters(t testing.TB, pool *pgxpool.Pool, n int) {
	t.Helper()
	waitFor(t, pool, "backends waiting on a lock", `SELECT count(*) >= $1 FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`, n)
}

// WaitForIdle waits until no other backend of pool's database is running
// a statement: whatever was still running has committed or rolled back.
func WaitForIdle(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	waitFor(t, pool, "no statement running", `SELECT count(*) = $1 FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND state NOT IN ('idle', 'idle in transaction (aborted)')
  AND backend_type = 'client backend'`, 0)
}

func waitFor(t testing.TB, pool *pgxpool.Pool, what, sql string, arg int) {
	t.Helper()
	wait.Until(t, what, func() bool {
		var ok bool
		if err := pool.QueryRow(context.Background(), sql, arg).Scan(&ok); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return ok
	})
}
