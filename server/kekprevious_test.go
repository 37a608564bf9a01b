package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKEKPreviousSetting: LEDGER_KEK_PREVIOUS (or its file) is read only
// beside LEDGER_KEK, and only when it is a different, strong 32-byte key;
// refusals name the variable, never the key.
func TestKEKPreviousSetting(t *testing.T) {
	t.Parallel()
	key := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	current, previous := key(), key()

	c, err := LoadConfig(nil, env("LEDGER_KEK", current, "LEDGER_KEK_PREVIOUS", previous), io.Discard)
	if err != nil || base64.StdEncoding.EncodeToString(c.KEKPrevious) != previous || base64.StdEncoding.EncodeToString(c.KEK) != current {
		t.Fatalf("LoadConfig = %v; KEKPrevious not read", err)
	}
	file := filepath.Join(t.TempDir(), "kek-previous")
	if err := os.WriteFile(file, []byte(previous+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = LoadConfig([]string{"--kek-previous-file", file}, env("LEDGER_KEK", current), io.Discard)
	if err != nil || base64.StdEncoding.EncodeToString(c.KEKPrevious) != previous {
		t.Fatalf("LoadConfig with --kek-previous-file = %v", err)
	}
	if c, err := LoadConfig(nil, env("LEDGER_KEK", current), io.Discard); err != nil || c.KEKPrevious != nil {
		t.Fatalf("without LEDGER_KEK_PREVIOUS: %v, %v", c.KEKPrevious, err)
	}

	for _, bad := range []struct {
		name string
		kv   []string
		want string
	}{
		{"WithoutKEK", []string{"LEDGER_KEK_PREVIOUS", previous}, "LEDGER_KEK is not"},
		{"SameAsKEK", []string{"LEDGER_KEK", current, "LEDGER_KEK_PREVIOUS", current}, "is LEDGER_KEK"},
		{"Weak", []string{"LEDGER_KEK", current, "LEDGER_KEK_PREVIOUS", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))}, "weak"},
		{"Short", []string{"LEDGER_KEK", current, "LEDGER_KEK_PREVIOUS", base64.StdEncoding.EncodeToString([]byte("short"))}, "32 bytes"},
		{"BothWays", []string{"LEDGER_KEK", current, "LEDGER_KEK_PREVIOUS", previous, "LEDGER_KEK_PREVIOUS_FILE", file}, "LEDGER_KEK_PREVIOUS_FILE"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(nil, env(bad.kv...), io.Discard)
			if err == nil || !strings.Contains(err.Error(), "LEDGER_KEK_PREVIOUS") || !strings.Contains(err.Error(), bad.want) {
				t.Fatalf("LoadConfig = %v, want an error naming LEDGER_KEK_PREVIOUS: %s", err, bad.want)
			}
			if strings.Contains(err.Error(), current) || strings.Contains(err.Error(), previous) {
				t.Fatalf("the error holds a key: %v", err)
			}
		})
	}
}
