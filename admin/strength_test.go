package admin_test

import (
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/admin"
)

// TestCheckTokenStrength: random tokens of the usual tools pass; short,
// low-entropy, few-character and repeated ones do not, and the error
// never holds the token.
func TestCheckTokenStrength(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, token string
		ok          bool
	}{
		{"OneCharacter", "x", false},
		{"Password", "Correct-Horse-Battery-Staple-1!", false},
		{"LongButOneCharacter", strings.Repeat("a", 64), false},
		{"FewDistinct", strings.Repeat("abc123", 6), false},
		{"Repeated", strings.Repeat("Zq8#wE2!", 5), false},
		{"DigitsOnly", "12345678901234567890123456789012345", false},
		{"Hex64", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", true},
		{"Base64Of32Bytes", "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", true},
		{"NamedToken", "lat_n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := admin.CheckTokenStrength(c.token)
			if (err == nil) != c.ok {
				t.Fatalf("CheckTokenStrength = %v, want ok %v", err, c.ok)
			}
			if err != nil && strings.Contains(err.Error(), c.token) {
				t.Fatalf("the error holds the token: %v", err)
			}
		})
	}
}
