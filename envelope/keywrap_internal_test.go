package envelope

import (
	"bytes"
	"crypto/aes"
	"crypto/rand"
	"encoding/hex"
	"testing"

	josecipher "github.com/go-jose/go-jose/v4/cipher"
)

// TestKeyWrap holds the fixed-size RFC 3394 wrap to the RFC's own vector
// (§4.6, 256 bits of key data with a 256-bit KEK) and to go-jose's
// implementation both ways, and requires a wrong key or a changed byte to
// fail the unwrap's integrity check.
func TestKeyWrap(t *testing.T) {
	t.Parallel()
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("RFC3394Vector", func(t *testing.T) {
		t.Parallel()
		kek, _ := aes.NewCipher(unhex("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"))
		var cek [SecretSize]byte
		copy(cek[:], unhex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F"))
		want := unhex("28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21")
		var got [wrappedKeySize]byte
		keyWrap(kek, &got, &cek)
		if !bytes.Equal(got[:], want) {
			t.Fatalf("wrap = %x, want %x", got, want)
		}
		var back [SecretSize]byte
		if !keyUnwrap(kek, &back, &got) || back != cek {
			t.Fatalf("unwrap = %x", back)
		}
	})
	t.Run("SameAsGoJose", func(t *testing.T) {
		t.Parallel()
		for range 50 {
			var secret, cek [SecretSize]byte
			_, _ = rand.Read(secret[:])
			_, _ = rand.Read(cek[:])
			kek, _ := aes.NewCipher(secret[:])
			var ours [wrappedKeySize]byte
			keyWrap(kek, &ours, &cek)
			theirs, err := josecipher.KeyWrap(kek, cek[:])
			if err != nil || !bytes.Equal(ours[:], theirs) {
				t.Fatalf("wrap differs from go-jose: %x, %x (%v)", ours, theirs, err)
			}
			var back [SecretSize]byte
			if !keyUnwrap(kek, &back, (*[wrappedKeySize]byte)(theirs)) || back != cek {
				t.Fatal("go-jose's wrap does not unwrap")
			}
		}
	})
	t.Run("IntegrityCheck", func(t *testing.T) {
		t.Parallel()
		var secret, other, cek [SecretSize]byte
		_, _ = rand.Read(secret[:])
		_, _ = rand.Read(other[:])
		_, _ = rand.Read(cek[:])
		kek, _ := aes.NewCipher(secret[:])
		wrong, _ := aes.NewCipher(other[:])
		var w [wrappedKeySize]byte
		keyWrap(kek, &w, &cek)
		var back [SecretSize]byte
		if keyUnwrap(wrong, &back, &w) || back != ([SecretSize]byte{}) {
			t.Fatalf("a wrong key unwrapped: %x", back)
		}
		for i := range w {
			bad := w
			bad[i] ^= 1
			if keyUnwrap(kek, &back, &bad) {
				t.Fatalf("byte %d changed and the unwrap passed", i)
			}
		}
	})
}
