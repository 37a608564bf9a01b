package ledger

import (
	"crypto/rand"
	"encoding/base32"

	"github.com/google/uuid"
)

var refEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewReference returns prefix followed by 128 random bits in lowercase
// base32 (26 characters): unguessable, URL-safe, and telling its kind at a
// glance ("hold_", "cap_", "rel_", "cred_").
func NewReference(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + refEncoding.EncodeToString(b[:])
}

// NewTransactionID returns a journal transaction ID: a UUIDv7, ordered by
// time, so that the journal's primary key grows at its end.
func NewTransactionID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}
