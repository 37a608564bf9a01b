package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// TestValidateLengthsAreCharacters: the limits count characters, as their
// messages, the database's length() and the admin API's maxLength do: a
// key of 255 two-byte characters (510 bytes) is accepted, 256 are not.
func TestValidateLengthsAreCharacters(t *testing.T) {
	t.Parallel()
	one := decimal.NewFromInt(1)
	src := func(token string) ledger.Instrument {
		return ledger.Instrument{Token: token, Kind: ledger.InstrumentSource, AccountID: "a-1"}
	}
	for _, c := range []struct {
		name    string
		err     error
		pointer string // "" accepted
	}{
		{"KeyAtTheLimit", ledger.ValidateAdjustment(one, strings.Repeat("é", 255), ""), ""},
		{"KeyOver", ledger.ValidateAdjustment(one, strings.Repeat("é", 256), ""), "/idempotencyKey"},
		{"KeyEmpty", ledger.ValidateAdjustment(one, "", ""), "/idempotencyKey"},
		{"KeyNotUTF8", ledger.ValidateAdjustment(one, "k\xff", ""), "/idempotencyKey"},
		{"MemoAtTheLimit", ledger.ValidateAdjustment(one, "k", strings.Repeat("€", 1024)), ""},
		{"MemoOver", ledger.ValidateAdjustment(one, "k", strings.Repeat("€", 1025)), "/memo"},
		{"MemoNUL", ledger.ValidateAdjustment(one, "k", "a\x00"), "/memo"},
		{"AmountZero", ledger.ValidateAdjustment(decimal.Zero, "k", ""), "/amount"},
		{"TokenAtTheLimit", ledger.ValidateInstrument(src(strings.Repeat("ü", 256))), ""},
		{"TokenOver", ledger.ValidateInstrument(src(strings.Repeat("ü", 257))), "/token"},
		{"TokenEmpty", ledger.ValidateInstrument(src("")), "/token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var le *ledger.Error
			switch {
			case c.pointer == "" && c.err != nil:
				t.Fatalf("refused: %v", c.err)
			case c.pointer != "" && (!errors.As(c.err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != c.pointer):
				t.Fatalf("error %v, want invalid at %s", c.err, c.pointer)
			}
		})
	}
}
