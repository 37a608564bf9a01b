package server

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"
)

// TestLoadConfigRefusesWeakKeys: ledgerd does not start with a signing
// secret or a KEK that anyone could guess; the message names the variable
// and the secret's position, never the value.
func TestLoadConfigRefusesWeakKeys(t *testing.T) {
	t.Parallel()
	strong := base64.StdEncoding.EncodeToString([]byte("\x8c\x1f\xd2\x07\x9e\x44\xb1\x6a\x03\xe5\x7d\x90\x2b\xc8\x51\xfa\x36\x0e\xa9\x72\xdd\x14\x8b\x65\xf0\x29\xbe\x47\x93\x0a\xc1\x5e"))
	for _, c := range []struct {
		name, env, value, want string
	}{
		{"SecretAllZero", "LEDGER_SIGNING_SECRETS", strong + "," + base64.StdEncoding.EncodeToString(make([]byte, 32)), "secret 2 of 2 is weak"},
		{"SecretPattern", "LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("0123"), 8)), "secret 1 of 1 is weak"},
		{"KEKAllZero", "LEDGER_KEK", base64.StdEncoding.EncodeToString(make([]byte, 32)), "weak"},
		{"KEKOneByteSet", "LEDGER_KEK", base64.StdEncoding.EncodeToString(append([]byte{7}, make([]byte, 31)...)), "weak"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(nil, env(c.env, c.value), io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.env) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadConfig = %v, want an error naming %s: %s", err, c.env, c.want)
			}
			if strings.Contains(err.Error(), c.value) || strings.Contains(err.Error(), "AAAA") {
				t.Fatalf("the error holds the key: %v", err)
			}
		})
	}
	if _, err := LoadConfig(nil, env("LEDGER_SIGNING_SECRETS", strong, "LEDGER_KEK", strong), io.Discard); err != nil {
		t.Fatalf("a strong key is refused: %v", err)
	}
}
