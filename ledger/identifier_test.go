package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/ledger"
)

// TestAccountIDIdentifierSecurity: account IDs that would print like
// another's are refused at /accountID (UTS #39's restricted profile and
// its no-mixed-scripts rule); IDs in one script, or in a combination
// UTS #39 allows, are taken.
func TestAccountIDIdentifierSecurity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, id string
		want     string // a word of the refusal; "" when accepted
	}{
		{"ASCII", "paypal", ""},
		{"ASCIIPunctuation", "acct_1-a.b:c", ""},
		{"ComposedLatin", "café-1", ""},
		{"AllCyrillic", "счёт-1", ""},
		{"AllGreek", "λογαριασμός", ""},
		{"JapaneseWithLatin", "口座-カナ-ひら-abc", ""},
		{"KoreanWithLatin", "계좌-abc", ""},
		{"DotlessIIsLatin", "paypaı", ""}, // the skeleton's to catch
		{"CyrillicMixedWithLatin", "раураl", "mix scripts"},
		{"GreekOmicronInLatin", "pοypal", "mix scripts"},
		{"CyrillicAInLatin", "pаypal", "mix scripts"},
		{"GreekWithCyrillic", "λογ-счёт", "mix scripts"},
		{"FullWidthDigit", "paypal１", "form KC"},
		{"FullWidthLetters", "ｐａｙｐａｌ", "form KC"},
		{"Ligature", "ﬁnance", "form KC"},
		{"RomanNumeral", "paypalⅠ", "letters, marks and digits"}, // a number letter (Nl), not NFKC either
		{"HangulFillerU3164", "pay\u3164pal", "invisible"},
		{"HangulChoseongFillerU115F", "pay\u115Fpal", "invisible"},
		{"HalfwidthHangulFillerUFFA0", "pay\uFFA0pal", "invisible"},
		{"CombiningGraphemeJoiner", "pay\u034Fpal", "invisible"},
		{"VariationSelector16", "paypal\uFE0F", "invisible"},
		{"BraillePatternBlank", "pay\u2800pal", "letters, marks and digits"},
		{"NonASCIIPunctuation", "pay\u2010pal", "letters, marks and digits"},
		{"Emoji", "pay\U0001F4B0", "letters, marks and digits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := ledger.NewAccount{AccountID: c.id, OwnerExternalID: "o", Currency: "USD"}
			err := ledger.ValidateNewAccount(&n)
			if c.want == "" {
				if err != nil {
					t.Fatalf("%q refused: %v", c.id, err)
				}
				return
			}
			var le *ledger.Error
			if !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != "/accountID" || !strings.Contains(le.Message, c.want) {
				t.Fatalf("%q: %v, want invalid at /accountID saying %q", c.id, err, c.want)
			}
			if strings.Contains(le.Message, c.id) {
				t.Fatalf("the refusal echoes the ID: %s", le.Message)
			}
		})
	}
}
