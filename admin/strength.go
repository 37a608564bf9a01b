package admin

import (
	"errors"
	"math"
	"strings"
)

// minTokenLength is the shortest LEDGER_ADMIN_TOKEN a non-loopback admin
// listener takes.
const minTokenLength = 32

// CheckTokenStrength refuses a break-glass token that anyone could guess
// or a bystander could remember: shorter than minTokenLength characters;
// under 128 bits by the estimate length × log2(the size of the character
// classes it uses: lower case 26, upper case 26, digits 10, others 33);
// fewer than 10 distinct characters; or a repetition of a shorter string.
// A token from `openssl rand -hex 32` (64 characters) or `-base64 32` (44)
// passes; "x", a password, or "abcabcabc…" does not. The error says which
// rule failed, never the token.
func CheckTokenStrength(token string) error {
	n := len(token)
	if n < minTokenLength {
		return errors.New("is shorter than 32 characters")
	}
	pool := 0
	for _, class := range []struct {
		in   func(rune) bool
		size int
	}{
		{func(r rune) bool { return r >= 'a' && r <= 'z' }, 26},
		{func(r rune) bool { return r >= 'A' && r <= 'Z' }, 26},
		{func(r rune) bool { return r >= '0' && r <= '9' }, 10},
		{func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }, 33},
	} {
		if strings.ContainsFunc(token, class.in) {
			pool += class.size
		}
	}
	if float64(n)*math.Log2(float64(pool)) < 128 {
		return errors.New("has under 128 bits by its length and character classes")
	}
	distinct := map[rune]bool{}
	for _, r := range token {
		distinct[r] = true
	}
	if len(distinct) < 10 {
		return errors.New("uses fewer than 10 distinct characters")
	}
	for p := 1; p <= n/2; p++ {
		if n%p == 0 && strings.Repeat(token[:p], n/p) == token {
			return errors.New("repeats a shorter string")
		}
	}
	return nil
}
