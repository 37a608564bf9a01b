package storetest

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/store"
)

// RunClients runs b.N operations spread over clients goroutines, each
// calling op with its client number and the operation's index, and reports
// operations per second. An error of op fails the benchmark.
func RunClients(b *testing.B, clients int, op func(client, i int) error) {
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

// BenchDB is a migrated database of its own for a benchmark, with a pool
// of 40 connections that commit with synchronous_commit off, or as
// PGTEST_SYNCHRONOUS_COMMIT says (on: as production commits).
func BenchDB(b *testing.B) *store.DB {
	b.Helper()
	cfg, err := store.Config(URL(b), store.Options{})
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
