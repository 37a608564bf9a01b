package keyring

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/pgtest"
	"github.com/provider-ledger/adapter/ledger"
)

// TestActiveSkipsWeakStoredSecrets: a weak secret stored before weak keys
// were refused (written here past Add's check) does not open callbacks; it
// is logged with its ID and fingerprint, never its value.
func TestActiveSkipsWeakStoredSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	kek := make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	store, err := NewStore(pool, kek, StoreOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	weak := make([]byte, envelope.SecretSize)
	var info SecretInfo
	if err := ledger.InTx(ctx, pool, func(tx pgx.Tx) error {
		info, _, err = store.addTx(ctx, tx, weak, envelope.Key{Secret: weak}.Fingerprint(), SourceAPI)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	good := make([]byte, envelope.SecretSize)
	if _, err := rand.Read(good); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Add(ctx, good); err != nil {
		t.Fatal(err)
	}
	keys, err := store.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !bytes.Equal(keys[0].Secret, good) {
		t.Fatalf("Active = %v, want only the strong secret", keys)
	}
	if !strings.Contains(logs.String(), info.SecretID) || !strings.Contains(logs.String(), "weak") || store.Undecryptable() != 1 {
		t.Fatalf("the weak secret was not reported (skipped %d):\n%s", store.Undecryptable(), logs.String())
	}
}
