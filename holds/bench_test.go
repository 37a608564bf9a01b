package holds_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/ledgertest"
	"github.com/provider-ledger/adapter/internal/pgtest"
	"github.com/provider-ledger/adapter/ledger"
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

// BenchmarkPlaceCapture runs place-and-capture cycles (each step its own
// transaction, as the callbacks run them), each client on its own account.
// Every capture credits settlement:USD; its balance is sharded per database
// session, so cycles scale with clients instead of queueing on that row.
//
//	go test ./holds -run '^$' -bench PlaceCapture -benchtime 2000x
//
// The baseline, measured in the same run, is shards=1: the settlement
// balance on a single row, as an unsharded design would have it. Run with
// PGTEST_SYNCHRONOUS_COMMIT=on for commit costs as in production, where a
// hot row is held for the whole fsync of every commit.
func BenchmarkPlaceCapture(b *testing.B) {
	for _, shards := range []int{64, 1} {
		for _, clients := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("shards=%d/clients=%d", shards, clients), func(b *testing.B) {
				benchPlaceCapture(b, shards, clients)
			})
		}
	}
}

func benchPlaceCapture(b *testing.B, shards, clients int) {
	cfg, err := ledger.PoolConfig(pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 40
	cfg.ConnConfig.RuntimeParams["ledger.settlement_shards"] = fmt.Sprint(shards)
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	if sc := os.Getenv("PGTEST_SYNCHRONOUS_COMMIT"); sc != "" {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = sc
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	bb := bundle{pool: pool, ledger: ledger.NewStore(pool, nil), holds: holds.NewStore(pool, nil)}
	for c := range clients {
		ledgertest.Account(b, bb.ledger, ledgertest.AccountOpts{AccountID: fmt.Sprintf("cyc-%d", c),
			Owner: fmt.Sprintf("o-%d", c), Funds: "1000000", Source: fmt.Sprintf("cs-%d", c)})
	}
	amount := ledgertest.USD("1.00")
	runClients(b, clients, func(c, i int) error {
		d, err := bb.holds.Place(ctx, holds.PlaceRequest{PayoutID: fmt.Sprintf("cp-%d-%d", clients, i),
			ExternalID: fmt.Sprintf("o-%d", c), FundingSource: fmt.Sprintf("cs-%d", c), Amount: amount})
		if err != nil || !d.Approved() {
			return fmt.Errorf("place: %+v %v", d, err)
		}
		d, err = bb.holds.Capture(ctx, holds.CaptureRequest{HoldReference: d.Reference})
		if err != nil || !d.Approved() {
			return fmt.Errorf("capture: %+v %v", d, err)
		}
		return nil
	})
	ledgertest.AssertInvariants(b, bb.pool)
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM account_shards WHERE account_id = 'settlement:USD'`).Scan(&rows); err != nil {
		b.Fatal(err)
	}
	if shards == 1 && rows != 1 {
		b.Fatalf("baseline used %d settlement rows, want 1", rows)
	}
}

// BenchmarkCreditHotAccount credits one destination account from many
// clients: every credit must lock that account's row, so this is the
// hot-account case and does not scale with clients (settlement, sharded,
// is not the bottleneck).
//
//	go test ./holds -run '^$' -bench CreditHotAccount -benchtime 2000x
func BenchmarkCreditHotAccount(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			ctx, bb := setup(b)
			ledgertest.Account(b, bb.ledger, ledgertest.AccountOpts{AccountID: "hot", Owner: "hot-owner", Dest: "hot-dst"})
			amount := ledgertest.USD("1.00")
			runClients(b, clients, func(c, i int) error {
				return ledger.InTx(ctx, bb.pool, func(tx pgx.Tx) error {
					d, err := ledger.Credit(ctx, tx, ledger.CreditRequest{RequestID: fmt.Sprintf("hr-%d-%d", clients, i),
						Destination: "hot-dst", RequesterExternalID: "hot-owner", Amount: amount, Now: time.Now()})
					if err != nil || !d.Approved() {
						return fmt.Errorf("credit: %+v %v", d, err)
					}
					return nil
				})
			})
			ledgertest.AssertInvariants(b, bb.pool)
		})
	}
}
