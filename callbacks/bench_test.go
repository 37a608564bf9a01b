package callbacks_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/store/storetest"
)

// clientLevels are the concurrencies the benchmarks report.
var clientLevels = []int{1, 16, 64}

// measure runs b.N operations over clients goroutines and reports ops/s and
// the p50 and p99 latency of one operation.
func measure(b *testing.B, clients int, op func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[b.N*99/100].Microseconds())/1000, "p99-ms")
}

func benchSetup(b *testing.B, clients int) *bundle {
	bb := setup(b, opts{maxInflight: 1000})
	bb.client.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 4}}
	for c := range clients {
		storetest.Account(b, bb.db, storetest.AccountOpts{AccountID: fmt.Sprintf("b-%d", c), Owner: fmt.Sprintf("o-%d", c),
			Funds: "1000000", Source: fmt.Sprintf("s-%d", c)})
	}
	return bb
}

// BenchmarkAuthorize: the full authorize path (HTTP, JWE open and seal, one
// statement) from clients concurrent senders, each on its own account.
//
//	go test ./callbacks -run '^$' -bench 'Authorize|Capture|NaiveSQL' -benchtime 3000x
func BenchmarkAuthorize(b *testing.B) {
	for _, clients := range clientLevels {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			bb := benchSetup(b, clients)
			ctx := context.Background()
			measure(b, clients, func(i int) error {
				c := i % clients
				r, err := bb.client.Send(ctx, claims.Authorize, authorizeClaims(fmt.Sprintf("ba-%d", i), "k",
					fmt.Sprintf("o-%d", c), fmt.Sprintf("s-%d", c), "1.00", 0))
				if err != nil || r.Outcome() != "approved" {
					return fmt.Errorf("authorize %d: %+v %v", i, r, err)
				}
				return nil
			})
		})
	}
}

// BenchmarkCapture: the full capture path, of holds placed beforehand.
func BenchmarkCapture(b *testing.B) {
	for _, clients := range clientLevels {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			bb := benchSetup(b, clients)
			ctx := context.Background()
			refs := make([]string, b.N)
			for i := range refs {
				c := i % clients
				r, err := bb.client.Send(ctx, claims.Authorize, authorizeClaims(fmt.Sprintf("bc-%d", i), "k",
					fmt.Sprintf("o-%d", c), fmt.Sprintf("s-%d", c), "1.00", 0))
				if err != nil || r.Outcome() != "approved" {
					b.Fatal(r, err)
				}
				refs[i] = r.Str("holdReference")
			}
			measure(b, clients, func(i int) error {
				r, err := bb.client.Send(ctx, claims.Capture, captureClaims(fmt.Sprintf("bc-%d", i), "k", refs[i]))
				if err != nil || r.Outcome() != "approved" {
					return fmt.Errorf("capture %d: %+v %v", i, r, err)
				}
				return nil
			})
		})
	}
}
