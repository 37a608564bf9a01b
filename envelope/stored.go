package envelope

import "time"

// StoredSecret is a signing secret as the keyring keeps it at rest (a row
// of signing_secrets): encrypted under a KEK, never in clear, with its
// Fingerprint (Key.Fingerprint of the secret) in clear. Package keyring
// encrypts and decrypts it; package store only stores it.
//
// It is declared here, beside the Key it holds, rather than in keyring,
// because two packages speak it: keyring (through its Rows interface) and
// store, which implements that interface. Declared in keyring, it would
// make the database boundary import the keyring service, and with it its
// loader and metrics; here both import only the envelope's vocabulary, as
// every consumer interface speaks domain types (docs/architecture.md).
type StoredSecret struct {
	SecretID       string
	Fingerprint    string
	KEKFingerprint string
	Nonce          []byte // nil once retired
	Ciphertext     []byte // nil once retired
	Source         string
	AddedOn        time.Time
	RetiredOn      *time.Time
}

// SecretRekey is the re-encryption of one active stored secret: from the
// material the caller read and decrypted (FromKEKFingerprint, FromNonce)
// to a new one.
type SecretRekey struct {
	SecretID           string
	FromKEKFingerprint string
	FromNonce          []byte
	KEKFingerprint     string
	Nonce              []byte
	Ciphertext         []byte
}
