package envelope_test

import (
	"testing"

	"github.com/provider-ledger/adapter/envelope"
)

// BenchmarkOpenSeal measures the envelope work of one callback: open the
// request, seal the response. keys=3 has the right key last, the worst case
// of a package-level Open (a KeySet would have moved it to the front).
func BenchmarkOpenSeal(b *testing.B) {
	for _, n := range []int{1, 3} {
		keys := testKeys(n)
		right := keys[n-1]
		for _, form := range forms {
			req := seal(b, right, form, requestClaims(b, "bench"))
			resp := claimsJSON(b, "", map[string]string{
				"outcome": "approved", "holdReference": "h-1", "idempotencyKey": "bench",
			})
			b.Run("keys="+string(rune('0'+n))+"/form="+form.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					o, err := envelope.Open(req, keys)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := o.Reply(resp); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
