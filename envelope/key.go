package envelope

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// SecretSize is the size in bytes of a decoded signing secret.
const SecretSize = 32

// Key is one signing secret. ID is an operator-facing label (the service's
// secretID, or any name); Secret is the 32 raw bytes, the A256KW wrapping key
// and the HS256 key of the inner JWS. A Key prints, logs and marshals as its
// ID and fingerprint only; Secret must not be modified once the Key is in use.
type Key struct {
	ID     string
	Secret []byte
}

// ParseSecret decodes a signing secret given as standard or URL-safe Base64,
// padded or not, with surrounding white space ignored. It requires exactly
// 32 decoded bytes and canonical encoding. The error never contains the
// input.
func ParseSecret(b64 string) ([]byte, error) {
	s := strings.TrimRight(strings.TrimSpace(b64), "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	if enc.DecodedLen(len(s)) != SecretSize {
		return nil, fmt.Errorf("%w: not 32 bytes", ErrInvalidSecret)
	}
	out := make([]byte, SecretSize)
	n, err := enc.Strict().Decode(out, []byte(s))
	if err != nil || n != SecretSize {
		clear(out)
		return nil, fmt.Errorf("%w: not Base64 of 32 bytes", ErrInvalidSecret)
	}
	return out, nil
}

// Fingerprint is a short, stable, non-reversible identifier of the secret: the
// first 8 bytes of its SHA-256, in lower-case hex (16 characters). It is safe
// to log and to use as a metric label. A Key without secret gives "none".
func (k Key) Fingerprint() string {
	if len(k.Secret) == 0 {
		return "none"
	}
	sum := sha256.Sum256(k.Secret)
	return hex.EncodeToString(sum[:8])
}

// String returns the ID and fingerprint, never the secret.
func (k Key) String() string {
	return "Key{ID:" + strconv.Quote(k.ID) + " Fingerprint:" + k.Fingerprint() + "}"
}

// GoString is used by %#v; it never contains the secret.
func (k Key) GoString() string {
	return "envelope.Key{ID:" + strconv.Quote(k.ID) + ", Fingerprint:" + strconv.Quote(k.Fingerprint()) + "}"
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %d, %x, ...) print String or
// GoString, so that no verb falls through to the struct's fields.
func (k Key) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, k.GoString())
		return
	}
	_, _ = io.WriteString(f, k.String())
}

// LogValue logs the ID and fingerprint as a group.
func (k Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", k.ID), slog.String("fingerprint", k.Fingerprint()))
}

// MarshalJSON writes {"id":…,"fingerprint":…}; the secret is never marshalled.
func (k Key) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 48+len(k.ID))
	b = append(b, `{"id":`...)
	b = strictjson.AppendString(b, k.ID)
	b = append(b, `,"fingerprint":"`...)
	b = append(b, k.Fingerprint()...)
	b = append(b, `"}`...)
	return b, nil
}

func (k Key) valid() bool { return len(k.Secret) == SecretSize }

// same reports whether k and o hold the same secret.
func (k Key) same(o Key) bool { return string(k.Secret) == string(o.Secret) }
