package keyring_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
)

func TestLoader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ChangesReachEveryReplica", func(t *testing.T) { loaderChangesReachEveryReplica(t, ctx) })

	t.Run("StartPicksUpChanges", func(t *testing.T) { loaderStartPicksUpChanges(t, ctx) })

	t.Run("DatabaseErrorKeepsTheLastKeys", func(t *testing.T) { loaderDatabaseErrorKeepsTheLastKeys(t, ctx) })

	t.Run("CancelledContextIsNotAnError", func(t *testing.T) { loaderCancelledContextIsNotAnError(t, ctx) })

	t.Run("WrongKEKLoadsTheRestAndReports", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		good := b.newSecret(t)
		if _, _, err := b.vault.Add(ctx, good); err != nil {
			t.Fatal(err)
		}
		otherKEK := randomBytes(t, keyring.KEKSize)
		stray := b.newSecret(t)
		if _, _, err := b.newVault(t, b.pool, otherKEK).Add(ctx, stray); err != nil {
			t.Fatal(err)
		}
		r := b.replica(t, b.kek, 0)
		r.reload(t)
		if !r.opens(t, good) || r.opens(t, stray) || r.keyring.Len() != 1 || r.vault.Undecryptable() != 1 {
			t.Fatalf("keyring has %d keys, %d skipped; want the good one loaded and the stray skipped", r.keyring.Len(), r.vault.Undecryptable())
		}
	})

	t.Run("EmptyKeyringIsLoadedAndWarned", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := b.replica(t, b.kek, 0)
		if err := r.keyring.Set([]envelope.Key{{ID: "stale", Secret: b.newSecret(t)}}); err != nil {
			t.Fatal(err)
		}
		r.reload(t)
		if r.keyring.Len() != 0 {
			t.Fatal("a key that is not in the database survived a load")
		}
		if !strings.Contains(b.logs.String(), "no active signing secret") {
			t.Fatalf("an empty keyring was not warned about:\n%s", b.logs.String())
		}
	})

	t.Run("ConfigValidation", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		kr := envelope.NewKeySet()
		for name, cfg := range map[string]keyring.Config{
			"NoVault":          {Keyring: kr},
			"NoKeyring":        {Vault: b.vault},
			"NegativeInterval": {Vault: b.vault, Keyring: kr, Interval: -time.Second},
		} {
			if _, err := keyring.NewLoader(cfg); err == nil {
				t.Errorf("%s: NewLoader accepted %+v", name, cfg)
			}
		}
		if _, err := keyring.NewLoader(keyring.Config{Vault: b.vault, Keyring: kr}); err != nil {
			t.Fatalf("defaults refused: %v", err)
		}
	})
}

// loaderCancelledContextIsNotAnError: a load ended by its context's
// cancellation logs no warning or error and leaves the keyring as it was.
func loaderCancelledContextIsNotAnError(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	r := b.replica(t, b.kek, time.Millisecond)
	if _, _, err := r.vault.Add(ctx, b.newSecret(t)); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	if err := r.loader.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a load", func() bool { return r.keyring.Len() == 1 })
	cancel()
	r.loader.Stop() // returns once the loop has ended
	if logs := b.logs.String(); strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
		t.Fatalf("cancellation was logged as a failure:\n%s", logs)
	}
	if r.keyring.Len() != 1 {
		t.Fatal("cancellation changed the keyring")
	}
}

// loaderDatabaseErrorKeepsTheLastKeys: a Reload or background load that
// fails (the replica's pool closed) keeps the keys loaded before.
func loaderDatabaseErrorKeepsTheLastKeys(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	r := b.replica(t, b.kek, 5*time.Millisecond)
	secret := b.newSecret(t)
	if _, _, err := r.vault.Add(ctx, secret); err != nil {
		t.Fatal(err)
	}
	r.reload(t)
	r.pool.Close() // this replica loses its database
	if err := r.loader.Reload(ctx); err == nil {
		t.Fatal("Reload on a closed pool succeeded")
	}
	if !r.opens(t, secret) {
		t.Fatal("a failed Reload dropped the keys")
	}
	if err := r.loader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the loop to log the failure", func() bool { return strings.Contains(b.logs.String(), "keyring reload failed") })
	r.loader.Stop()
	if !r.opens(t, secret) {
		t.Fatal("failed background loads dropped the keys")
	}
}

// loaderStartPicksUpChanges: a started loader (started once only) picks up
// another replica's changes without a call; stopped, it gets none until it
// is started again.
func loaderStartPicksUpChanges(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	r := b.replica(t, b.kek, 10*time.Millisecond)
	other := b.newVault(t, b.pool, b.kek) // another replica's vault
	if err := r.loader.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.loader.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	secret := b.newSecret(t)
	info, _, err := other.Add(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the loop to load the added secret", func() bool { return r.keyring.Len() == 1 })
	if !r.opens(t, secret) {
		t.Fatal("the loaded key does not open")
	}
	if err := other.Retire(ctx, info.SecretID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the loop to drop the retired secret", func() bool { return r.keyring.Len() == 0 })
	r.loader.Stop()
	r.loader.Stop() // no-op

	// Stopped: changes no longer arrive until it is started again.
	next := b.newSecret(t)
	if _, _, err := other.Add(ctx, next); err != nil {
		t.Fatal(err)
	}
	if err := r.loader.Start(ctx); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	waitFor(t, "the restarted loop to load", func() bool { return r.keyring.Len() == 1 })
	r.loader.Stop()
}

// loaderChangesReachEveryReplica: a secret added through one replica opens
// another's requests after its Reload, under its secretID; retired through
// the other, it stops opening at the first's next load.
func loaderChangesReachEveryReplica(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	one, two := b.replica(t, b.kek, 0), b.replica(t, b.kek, 0)
	secret := b.newSecret(t)

	info, _, err := one.vault.Add(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if two.opens(t, secret) {
		t.Fatal("replica two opens with a secret it never loaded")
	}
	two.reload(t)
	one.reload(t)
	if !two.opens(t, secret) || !one.opens(t, secret) {
		t.Fatal("after Reload a replica does not open requests sealed with the secret added through the other")
	}
	if ks := two.keyring.Keys(); len(ks) != 1 || ks[0].ID != info.SecretID {
		t.Fatalf("replica two's keys = %v, want the one secret under its secretID", ks)
	}

	// Retire through replica two; replica one stops opening at its next load.
	if err := two.vault.Retire(ctx, info.SecretID); err != nil {
		t.Fatal(err)
	}
	one.reload(t)
	if _, err := one.keyring.Open(sealRequest(t, secret)); !errors.Is(err, envelope.ErrUndecryptable) {
		t.Fatalf("a retired secret opens: %v", err)
	}
	if one.keyring.Len() != 0 {
		t.Fatalf("replica one has %d keys, want 0", one.keyring.Len())
	}
}
