package ledger

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
)

var refEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewReference returns prefix followed by 128 random bits in lowercase
// base32 (26 characters): unguessable, URL-safe, and telling its kind at a
// glance ("hold_", "cap_", "rel_", "cred_").
func NewReference(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("ledger: crypto/rand failed: " + err.Error()) // crypto/rand never fails on Linux
	}
	return prefix + refEncoding.EncodeToString(b[:])
}

func randUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
