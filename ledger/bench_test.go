package ledger_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkCreditHotAccount credits one destination account from many
// clients: every credit must lock that account's row, so this is the
// hot-account case and does not scale with clients.
//
//	go test ./ledger -run '^$' -bench CreditHotAccount -benchtime 2000x
func BenchmarkCreditHotAccount(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := storetest.BenchDB(b)
			ctx := context.Background()
			storetest.Account(b, db, storetest.AccountOpts{AccountID: "hot", Owner: "hot-owner", Dest: "hot-dst"})
			one := dec("1.00")
			storetest.RunClients(b, clients, func(c, i int) error {
				key := fmt.Sprintf("hr-%d-%d", clients, i)
				fp := sha256.Sum256([]byte(key))
				a, err := db.Credit(ctx, ledger.CreditParams{Key: key, Fingerprint: fp[:], KeyFingerprint: "bench", Now: time.Now(),
					RequestID: key, Destination: "hot-dst", Requester: "hot-owner", Currency: "USD", Amount: one,
					CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()})
				if err != nil || !a.Approved() {
					return fmt.Errorf("credit: %+v %v", a, err)
				}
				return nil
			})
			storetest.AssertInvariants(b, db)
		})
	}
}
