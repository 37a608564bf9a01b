package envelope

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
)

// The AES key wrap of RFC 3394 (A256KW, RFC 7518 §4.4) for the one size
// this package wraps: a 256-bit content key, n = 4 64-bit blocks, in
// fixed-size arrays (go-jose's general version allocates a slice per
// block; tests hold the two to the same results and to the RFC's vector).

// keyWrapIV is the RFC 3394 §2.2.3.1 default initial value.
const keyWrapIV = 0xA6A6A6A6A6A6A6A6

const wrapBlocks = SecretSize / 8

// keyWrap wraps cek with kek into out: RFC 3394 §2.2.1, index form.
func keyWrap(kek cipher.Block, out *[wrappedKeySize]byte, cek *[SecretSize]byte) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], keyWrapIV)
	r := out[8:]
	copy(r, cek[:])
	for j := range 6 {
		for i := range wrapBlocks {
			copy(b[8:], r[i*8:i*8+8])
			kek.Encrypt(b[:], b[:])
			t := uint64(wrapBlocks*j + i + 1)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(b[:8])^t)
			copy(r[i*8:i*8+8], b[8:])
		}
	}
	copy(out[:8], b[:8])
	clear(b[:])
}

// keyUnwrap unwraps wrapped with kek into cek and reports whether the
// integrity check of RFC 3394 §2.2.3 passed (compared in constant time).
// cek is cleared when it did not.
func keyUnwrap(kek cipher.Block, cek *[SecretSize]byte, wrapped *[wrappedKeySize]byte) bool {
	var b [16]byte
	copy(b[:8], wrapped[:8])
	r := cek[:]
	copy(r, wrapped[8:])
	for j := 5; j >= 0; j-- {
		for i := wrapBlocks - 1; i >= 0; i-- {
			t := uint64(wrapBlocks*j + i + 1)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(b[:8])^t)
			copy(b[8:], r[i*8:i*8+8])
			kek.Decrypt(b[:], b[:])
			copy(r[i*8:i*8+8], b[8:])
		}
	}
	var iv [8]byte
	binary.BigEndian.PutUint64(iv[:], keyWrapIV)
	ok := subtle.ConstantTimeCompare(b[:8], iv[:]) == 1
	clear(b[:])
	if !ok {
		clear(cek[:])
	}
	return ok
}
