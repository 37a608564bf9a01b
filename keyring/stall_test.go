package keyring_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestStalledLoadFails: a load stuck behind a lock on the secrets table
// fails within LoadTimeout instead of waiting silently, and Age shows how
// long the keyring has gone without a successful load.
func TestStalledLoadFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	vault := b.newVault(t, b.pool, b.kek)
	if _, _, err := vault.Generate(ctx); err != nil {
		t.Fatal(err)
	}
	kr := envelope.NewKeySet()
	l, err := keyring.NewLoader(keyring.Config{Vault: vault, Keyring: kr, LoadTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if l.Age() < time.Hour {
		t.Fatalf("Age before any load = %s, want very long", l.Age())
	}
	if err := l.Reload(ctx); err != nil || l.Age() > time.Second || kr.Len() != 1 {
		t.Fatalf("first load: %v, age %s, %d keys", err, l.Age(), kr.Len())
	}
	loaded := time.Now() // the last good load was at or before this
	conn, err := pgx.Connect(ctx, storetest.AdminURL(t, b.url))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE signing_secrets IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = l.Reload(ctx)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("stalled load: %v after %s, want an error within the load timeout", err, time.Since(start))
	}
	if since := time.Since(loaded); l.Age() < since {
		t.Fatalf("Age after a failed load = %s, want the time since the last good one (at least %s)", l.Age(), since)
	}
	_ = tx.Rollback(ctx)
	// Once the lock is gone a load succeeds again (allowing for a loaded
	// machine, where one 300 ms attempt may not be enough).
	deadline := time.Now().Add(10 * time.Second)
	for err = l.Reload(ctx); err != nil && time.Now().Before(deadline); err = l.Reload(ctx) {
	}
	if err != nil || l.Age() > time.Second {
		t.Fatalf("after the lock: %v, age %s", err, l.Age())
	}
}
