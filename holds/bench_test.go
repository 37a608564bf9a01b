package holds_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// runClients runs b.N operations spread over clients goroutines and reports
// operations per second.
func runClients(b *testing.B, clients int, op func(client, i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if err := op(c, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// benchDB is a database for a benchmark, committing as production does
// when PGTEST_SYNCHRONOUS_COMMIT=on.
func benchDB(b *testing.B) *store.DB {
	cfg, err := store.Config(storetest.URL(b), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 40
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	if sc := os.Getenv("PGTEST_SYNCHRONOUS_COMMIT"); sc != "" {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = sc
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return store.Wrap(pool, nil)
}

// BenchmarkAuthorizeCapture runs authorize-and-capture cycles, each step the
// one statement a callback runs, each client on its own account; every
// capture posts to settlement:USD, whose balance is derived from the
// journal, so cycles scale with clients instead of queueing on that row.
//
//	go test ./holds -run '^$' -bench AuthorizeCapture -benchtime 2000x
func BenchmarkAuthorizeCapture(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := benchDB(b)
			ctx := context.Background()
			for c := range clients {
				storetest.Account(b, db, storetest.AccountOpts{AccountID: fmt.Sprintf("cyc-%d", c),
					Owner: fmt.Sprintf("o-%d", c), Funds: "1000000", Source: fmt.Sprintf("cs-%d", c)})
			}
			runClients(b, clients, func(c, i int) error {
				payout := fmt.Sprintf("cp-%d-%d", clients, i)
				a, err := db.Authorize(ctx, auth{key: "a" + payout, payout: payout, owner: fmt.Sprintf("o-%d", c),
					source: fmt.Sprintf("cs-%d", c), amount: "1.00"}.params())
				if err != nil || !a.Approved() {
					return fmt.Errorf("authorize: %+v %v", a, err)
				}
				a, err = db.Capture(ctx, holds.CaptureParams{Key: "c" + payout, Fingerprint: fp(payout), KeyFingerprint: "bench",
					Now: time.Now(), PayoutID: payout, HoldReference: a.Reference, CaptureReference: ledger.NewReference("cap_"),
					TransactionID: ledger.NewTransactionID()})
				if err != nil || !a.Approved() {
					return fmt.Errorf("capture: %+v %v", a, err)
				}
				return nil
			})
			storetest.AssertInvariants(b, db)
		})
	}
}

// BenchmarkCreditHotAccount credits one destination account from many
// clients: every credit must lock that account's row, so this is the
// hot-account case and does not scale with clients.
//
//	go test ./holds -run '^$' -bench CreditHotAccount -benchtime 2000x
func BenchmarkCreditHotAccount(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := benchDB(b)
			ctx := context.Background()
			storetest.Account(b, db, storetest.AccountOpts{AccountID: "hot", Owner: "hot-owner", Dest: "hot-dst"})
			one := decimal.RequireFromString("1.00")
			runClients(b, clients, func(c, i int) error {
				key := fmt.Sprintf("hr-%d-%d", clients, i)
				a, err := db.Credit(ctx, ledger.CreditParams{Key: key, Fingerprint: fp(key), KeyFingerprint: "bench", Now: time.Now(),
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
