package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/provider-ledger/adapter/envelope"
)

// KEKSize is the size in bytes of the key-encryption key.
const KEKSize = 32

// SkipReason says why an active row opens no callback on this replica. The
// values are the reason label of ledgerd_keyring_undecryptable_secrets.
type SkipReason string

// The reasons a row is skipped.
const (
	// SkipOtherKEK: the row is encrypted under a KEK this replica was not
	// given (a rotation under way, or a wrong LEDGER_KEK). Nothing is wrong
	// with the row: a replica that has that KEK reads it.
	SkipOtherKEK SkipReason = "other_kek"
	// SkipDamaged: the row carries this replica's KEK fingerprint but does
	// not decrypt, or its plaintext does not match its fingerprint (damage
	// or tampering).
	SkipDamaged SkipReason = "damaged"
	// SkipWeak: the row decrypts to a weak secret (envelope.CheckStrength)
	// stored before those were refused: retire it.
	SkipWeak SkipReason = "weak"
)

// skipReasons lists every SkipReason.
var skipReasons = []SkipReason{SkipOtherKEK, SkipDamaged, SkipWeak}

// KEKFingerprint identifies a KEK without revealing it: the first 8 bytes of
// SHA-256 over a domain-separation label and the key, in hex. It is stored
// with each row (kek_fingerprint), so that a Vault knows which of its KEKs
// opens a row, and tells a row encrypted under another KEK from a damaged
// one.
func KEKFingerprint(kek []byte) string {
	h := sha256.New()
	h.Write([]byte("provider-ledger keyring KEK fingerprint v1\x00"))
	h.Write(kek)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// keks is the set of key-encryption keys of a Vault: the current one, which
// encrypts every new row and every rekeyed row, and during a rotation the
// previous one, which only decrypts. Only AES key schedules and
// fingerprints are kept, never the keys.
type keks struct {
	current  string // fingerprint of the current KEK
	previous string // fingerprint of the previous KEK, "" when none
	aeads    map[string]cipher.AEAD
}

// newKEKs checks both KEKs (previous may be nil) and builds their ciphers.
func newKEKs(current, previous []byte) (*keks, error) {
	k := &keks{aeads: make(map[string]cipher.AEAD, 2)}
	aead, err := newAEAD("the KEK", current)
	if err != nil {
		return nil, err
	}
	k.current = KEKFingerprint(current)
	k.aeads[k.current] = aead
	if previous == nil {
		return k, nil
	}
	if bytes.Equal(previous, current) {
		return nil, errors.New("keyring: the previous KEK is the current KEK: give the previous KEK only during a rotation, and a different one")
	}
	if aead, err = newAEAD("the previous KEK", previous); err != nil {
		return nil, err
	}
	k.previous = KEKFingerprint(previous)
	k.aeads[k.previous] = aead
	return k, nil
}

// newAEAD checks a KEK (32 bytes that pass envelope.CheckStrength) and
// returns its AES-256-GCM. name says which KEK in errors.
func newAEAD(name string, kek []byte) (cipher.AEAD, error) {
	if len(kek) != KEKSize {
		return nil, fmt.Errorf("keyring: %s must be %d bytes, got %d", name, KEKSize, len(kek))
	}
	if err := envelope.CheckStrength(kek); err != nil {
		return nil, fmt.Errorf("keyring: %s is not random (%w): use 32 bytes from a random source", name, err)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("keyring: %s: %w", name, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("keyring: %s: %w", name, err)
	}
	return aead, nil
}

// seal encrypts secret for the row secretID under the current KEK: a fresh
// random nonce, and the secret ID as AAD so that the ciphertext only
// decrypts in its own row.
func (k *keks) seal(secretID string, secret []byte) (nonce, ct []byte, err error) {
	aead := k.aeads[k.current]
	nonce = make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("keyring: random nonce: %w", err)
	}
	return nonce, aead.Seal(nil, nonce, secret, []byte(secretID)), nil
}

// open decrypts one row with the KEK its kekFP names and checks the
// plaintext against the row's fingerprint. On failure it returns nil, the
// reason and a detail that is safe to log.
func (k *keks) open(secretID, fp, kekFP string, nonce, ct []byte) ([]byte, SkipReason, string) {
	aead, ok := k.aeads[kekFP]
	if !ok {
		return nil, SkipOtherKEK, "encrypted under another KEK (kek fingerprint " + kekFP + ", this process has " + k.describe() +
			"): give this replica that KEK as LEDGER_KEK or LEDGER_KEK_PREVIOUS"
	}
	if len(nonce) != aead.NonceSize() {
		return nil, SkipDamaged, "damaged row: bad nonce length"
	}
	secret, err := aead.Open(nil, nonce, ct, []byte(secretID))
	if err != nil {
		return nil, SkipDamaged, "the ciphertext does not authenticate for this row (damaged, or moved from another row)"
	}
	if len(secret) != envelope.SecretSize || (envelope.Key{Secret: secret}).Fingerprint() != fp {
		clear(secret)
		return nil, SkipDamaged, "the decrypted secret does not match the row's fingerprint"
	}
	return secret, "", ""
}

// describe names the KEKs by fingerprint, for logs and errors.
func (k *keks) describe() string {
	if k.previous == "" {
		return k.current
	}
	return k.current + " and previous " + k.previous
}
