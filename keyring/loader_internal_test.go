package keyring

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestLoaderRunOnce drives the loop's step directly: a database outage is
// logged on its first failed load and then once per failureLogEvery, not
// on every tick.
func TestLoaderRunOnce(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	kek := make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	secrets, err := NewVault(store.Wrap(pool, nil), kek, VaultOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLoader(Config{Vault: secrets, Keyring: envelope.NewKeySet(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l.runOnce(ctx)
	if l.failures.Load() != 0 || strings.Contains(logs.String(), "reload failed") {
		t.Fatalf("a good load counted as a failure: %d\n%s", l.failures.Load(), logs.String())
	}
	pool.Close()
	for range 2*failureLogEvery + 1 {
		l.runOnce(ctx)
	}
	if l.failures.Load() != 2*failureLogEvery+1 {
		t.Fatalf("failures = %d, want %d", l.failures.Load(), 2*failureLogEvery+1)
	}
	if c := strings.Count(logs.String(), "keyring reload failed"); c != 3 {
		t.Fatalf("%d failure lines for %d failed loads, want 3 (the 1st, 31st and 61st):\n%s", c, l.failures.Load(), logs.String())
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	l.runOnce(cancelled)
	if c := strings.Count(logs.String(), "keyring reload failed"); c != 3 || l.failures.Load() != 2*failureLogEvery+1 {
		t.Fatalf("a load under a cancelled context counted as a failure (%d lines, %d failures)", c, l.failures.Load())
	}
}
