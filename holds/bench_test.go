package holds_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkAuthorizeCapture runs authorize-and-capture cycles, each step the
// one statement a callback runs, each client on its own account; every
// capture posts to settlement:USD, whose balance is derived from the
// journal, so cycles scale with clients instead of queueing on that row.
//
//	go test ./holds -run '^$' -bench AuthorizeCapture -benchtime 2000x
func BenchmarkAuthorizeCapture(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := storetest.BenchDB(b)
			ctx := context.Background()
			for c := range clients {
				storetest.Account(b, db, storetest.AccountOpts{AccountID: fmt.Sprintf("cyc-%d", c),
					Owner: fmt.Sprintf("o-%d", c), Funds: "1000000", Source: fmt.Sprintf("cs-%d", c)})
			}
			storetest.RunClients(b, clients, func(c, i int) error {
				payout := fmt.Sprintf("cp-%d-%d", clients, i)
				a, err := db.Authorize(ctx, auth{key: "a" + payout, payout: payout, owner: fmt.Sprintf("o-%d", c),
					source: fmt.Sprintf("cs-%d", c), amount: "1.00"}.params())
				if err != nil || !a.Approved() {
					return fmt.Errorf("authorize: %+v %v", a, err)
				}
				a, err = db.Capture(ctx, captureParams("c"+payout, payout, a.Reference))
				if err != nil || !a.Approved() {
					return fmt.Errorf("capture: %+v %v", a, err)
				}
				return nil
			})
			storetest.AssertInvariants(b, db)
		})
	}
}
