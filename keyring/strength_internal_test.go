package keyring

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestActiveSkipsWeakStoredSecrets: a weak secret stored before weak keys
// were refused (written here past Add's check) does not open callbacks; it
// is logged with its ID and fingerprint, never its value.
func TestActiveSkipsWeakStoredSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	kek := make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	secrets, err := NewVault(db, kek, VaultOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	weak := make([]byte, envelope.SecretSize)
	row, err := secrets.newRow(weak, sourceAPI) // past add's strength check
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := db.AddSecret(ctx, row, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := infoOf(stored)
	good := make([]byte, envelope.SecretSize)
	if _, err := rand.Read(good); err != nil {
		t.Fatal(err)
	}
	if _, _, err := secrets.Add(ctx, good); err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !bytes.Equal(keys[0].Secret, good) {
		t.Fatalf("Active = %v, want only the strong secret", keys)
	}
	if !strings.Contains(logs.String(), info.SecretID) || !strings.Contains(logs.String(), "weak") || secrets.Undecryptable() != 1 {
		t.Fatalf("the weak secret was not reported (skipped %d):\n%s", secrets.Undecryptable(), logs.String())
	}
}
