package keyring_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
)

// weakKeys are 32-byte keys that someone typed or built; envelope's
// CheckStrength refuses each.
var weakKeys = map[string][]byte{
	"AllZero":     make([]byte, 32),
	"AllFF":       bytes.Repeat([]byte{0xff}, 32),
	"OneByteSet":  append([]byte{1}, make([]byte, 31)...),
	"Counting":    []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"),
	"Password":    bytes.Repeat([]byte("password"), 4),
	"FewDistinct": []byte("aabbccddeeffgghhaabbccddeeffgghh"[:32]),
}

// TestWeakKeysRefused: the keyring refuses trivially weak keys wherever one
// can enter: the KEK, Add (the admin API), Bootstrap (LEDGER_SIGNING_SECRETS).
func TestWeakKeysRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("NewVault", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for name, kek := range weakKeys {
			if _, err := keyring.NewVault(store.Wrap(b.pool, nil), kek, keyring.VaultOptions{}); !errors.Is(err, envelope.ErrWeakSecret) {
				t.Errorf("%s: NewVault = %v, want ErrWeakSecret", name, err)
			}
		}
	})

	t.Run("Add", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for name, secret := range weakKeys {
			b.remember(secret)
			_, _, err := b.vault.Add(ctx, secret)
			var le *ledger.Error
			if !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != "/secret" || !strings.Contains(le.Message, "weak") {
				t.Errorf("%s: Add = %v, want an invalid-request error at /secret", name, err)
			}
		}
		if list, err := b.vault.List(ctx); err != nil || len(list) != 0 {
			t.Fatalf("List = %v, %v; want nothing stored", list, err)
		}
	})

	t.Run("Bootstrap", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		good := b.newSecret(t)
		b.remember(weakKeys["Password"])
		_, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, Logger: b.log,
			EnvSecrets: []string{base64.StdEncoding.EncodeToString(good), base64.StdEncoding.EncodeToString(weakKeys["Password"])}})
		if err == nil || !strings.Contains(err.Error(), "LEDGER_SIGNING_SECRETS") || !strings.Contains(err.Error(), "secret 2 of 2") ||
			!strings.Contains(err.Error(), "weak") {
			t.Fatalf("Bootstrap = %v, want an error naming secret 2 of 2 as weak", err)
		}
		if list, err := b.vault.List(ctx); err != nil || len(list) != 0 {
			t.Fatalf("List = %v, %v; want nothing stored", list, err)
		}
	})
}
