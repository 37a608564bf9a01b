package envelope

import (
	"crypto/aes"
	"crypto/cipher"
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

	// prepared is what a KeySet derives from Secret once, when the key
	// is set, instead of on every message; nil on keys made elsewhere.
	prepared *prepared
}

// prepared is the state a KeySet derives from a key's secret: the AES
// key schedule of the key-wrapping key (a cipher.Block is safe for
// concurrent use) and the fingerprint. It belongs to the secret it was
// derived from, identified by the address of its first byte: a Key whose
// Secret field was given another slice does not use it.
type prepared struct {
	secret      *byte
	kek         cipher.Block
	fingerprint string
}

// Prepared returns k carrying the state derived from its secret (the
// key-wrapping key's AES schedule, the fingerprint), computed once here
// instead of for every message sealed or opened, as the keys of a KeySet
// carry it. The state stays with this Secret slice: a copy given another
// Secret does not use it; the bytes of Secret must not change. A key whose
// secret is not 32 bytes is returned as it is.
func (k Key) Prepared() Key {
	if !k.valid() {
		return k
	}
	return k.prepare()
}

// prepare returns k with its derived state, computed from its secret; k
// must be valid.
func (k Key) prepare() Key {
	kek, err := aes.NewCipher(k.Secret)
	if err != nil {
		return k
	}
	k.prepared = nil // the fingerprint below is computed from the secret
	k.prepared = &prepared{secret: &k.Secret[0], kek: kek, fingerprint: k.Fingerprint()}
	return k
}

// derived returns k's prepared state when it was derived from k.Secret.
func (k Key) derived() *prepared {
	if p := k.prepared; p != nil && len(k.Secret) == SecretSize && p.secret == &k.Secret[0] {
		return p
	}
	return nil
}

// kek returns the AES block of the key-wrapping key, k.Secret.
func (k Key) kek() (cipher.Block, error) {
	if p := k.derived(); p != nil {
		return p.kek, nil
	}
	return aes.NewCipher(k.Secret)
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
	if p := k.derived(); p != nil {
		return p.fingerprint
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
