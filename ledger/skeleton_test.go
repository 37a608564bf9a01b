package ledger_test

import (
	"testing"

	"github.com/provider-ledger/adapter/ledger"
)

// TestSkeleton: IDs that print alike share a skeleton (UTS #39's
// confusables table); IDs that print otherwise do not.
func TestSkeleton(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"paypal", "paypaI", true},
		{"paypal", "paypa1", true},
		{"paypal", "раураl", true}, // Cyrillic: refused earlier, confusable anyway
		{"bill", "bıll", true},
		{"modem", "rnodern", true},
		{"paypal", "Paypal", false},
		{"acct-0", "acct-o", false},
	} {
		if got := ledger.Skeleton(c.a) == ledger.Skeleton(c.b); got != c.same {
			t.Errorf("%q and %q: same skeleton %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// TestAccountIDsThatPrintLikeSystemAccounts: a customer ID that prints
// like settlement:… or core:… is refused at /accountID.
func TestAccountIDsThatPrintLikeSystemAccounts(t *testing.T) {
	t.Parallel()
	for id, refused := range map[string]bool{"settIement:USD": true, "settlernent:x": true, "core:USD": true, "c0re:x": false, "settle": false} {
		n := ledger.NewAccount{AccountID: id, OwnerExternalID: "o", Currency: "USD"}
		err := ledger.ValidateNewAccount(&n)
		if got := ledger.CodeOf(err) == ledger.CodeInvalid; got != refused {
			t.Errorf("%q: %v, want refused %v", id, err, refused)
		}
	}
}
