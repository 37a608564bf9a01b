package callbacks_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/store/storetest"
)

// deliver sends like the service: the same request again on 408, 429, 503
// and transport errors, up to a bound. Any other status fails the test: a
// terminal 4xx would make the service give up, and a 500 would mean the
// outage was taken for a bug.
func deliver(t *testing.T, c *caller.Client, endpoint string, service any, retryable *atomic.Int64) *caller.Reply {
	t.Helper()
	for attempt := 0; attempt < 400; attempt++ {
		r, err := c.Send(context.Background(), endpoint, service)
		switch {
		case err != nil:
			retryable.Add(1)
		case r.Status == 200:
			return r
		case r.Status == 408 || r.Status == 429 || r.Status == 503:
			retryable.Add(1)
		default:
			t.Errorf("%s %s: terminal %d %v", endpoint, keyOf(service), r.Status, r.Problem)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s %s: no answer after 400 attempts", endpoint, keyOf(service))
	return nil
}

// outageRecord is one callback TestOutage delivered, and its answer.
type outageRecord struct {
	endpoint string
	claims   any
	reply    *caller.Reply
}

// startOutage cuts url's database off in a fixed number of rounds: every
// connection is terminated 12 times, 80 ms apart, and twice new ones are
// refused for 300 ms. The channel closes when the rounds are over.
func startOutage(t *testing.T, url string) <-chan struct{} {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	var dbName string
	if err := admin.QueryRow(ctx, `SELECT current_database()`).Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	// ALTER DATABASE … ALLOW_CONNECTIONS is refused on a connection to
	// that database: it is run from the maintenance database.
	mu, err := neturl.Parse(storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	mu.Path = "/postgres"
	maint, err := pgx.Connect(ctx, mu.String())
	if err != nil {
		t.Fatal(err)
	}
	allow := func(on bool) {
		if _, err := maint.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %q WITH ALLOW_CONNECTIONS %t`, dbName, on)); err != nil {
			t.Errorf("allow connections %t: %v", on, err)
		}
	}
	t.Cleanup(func() {
		allow(true)
		maint.Close(ctx)
	})

	// The chaos runs a fixed number of rounds (two of them refusing
	// connections for 300 ms); the traffic goes on until it is over.
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		kill := func() {
			_, _ = admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName)
		}
		for round := 0; round < 12; round++ {
			time.Sleep(80 * time.Millisecond)
			if round%5 == 2 {
				// Refuse connections for a while: the database is "down".
				allow(false)
				kill()
				time.Sleep(300 * time.Millisecond)
				allow(true)
				continue
			}
			kill()
		}
	}()
	return stop
}

// verifyAfterOutage checks that every answer of records is approved and
// that delivering it again after the outage answers the same (nothing
// lost, nothing doubled), and the money it moved: payouts of 1.00 from
// o-src, every other one captured and the rest released, and a credit of
// 0.50 each to o-dst.
func verifyAfterOutage(t *testing.T, b *bundle, records [][]outageRecord) {
	t.Helper()
	var retryable atomic.Int64
	// Every answer is approved, and a delivery after the outage answers the
	// same: nothing lost, nothing doubled.
	for _, rs := range records {
		for _, rec := range rs {
			if rec.reply == nil || rec.reply.Outcome() != "approved" {
				t.Fatalf("%s %s: %+v", rec.endpoint, keyOf(rec.claims), rec.reply)
			}
			again := deliver(t, b.client, rec.endpoint, rec.claims, &retryable)
			if again == nil || !reflect.DeepEqual(again.Service, rec.reply.Service) {
				t.Fatalf("%s %s: after the outage %v, during %v", rec.endpoint, keyOf(rec.claims), again, rec.reply.Service)
			}
		}
	}
	// Payouts of 1.00, every other one captured, the rest released; a
	// credit of 0.50 each.
	captured, credited := decimal.Zero, decimal.Zero
	for _, rs := range records {
		for _, rec := range rs {
			switch rec.endpoint {
			case claims.Capture:
				captured = captured.Add(decimal.NewFromInt(1))
			case claims.CreditAccount:
				credited = credited.Add(decimal.RequireFromString("0.50"))
			}
		}
	}
	left := decimal.NewFromInt(1000).Sub(captured).String()
	storetest.AssertBalances(t, b.db, "o-src", left, "0", left)
	storetest.AssertBalances(t, b.db, "o-dst", credited.String(), "0", credited.String())
	storetest.AssertInvariants(t, b.db)
}

// TestOutage cuts every database connection repeatedly and refuses new ones
// for a while, mid-traffic. Callbacks must answer 503 (never a terminal 4xx,
// never 200 with a wrong outcome), recover without a restart, and lose or
// double nothing.
func TestOutage(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	pool := storetest.PoolURL(t, url)
	b := setup(t, opts{pool: pool, maxInflight: 1000})
	b.account(t, storetest.AccountOpts{AccountID: "o-src", Owner: "alice", Funds: "1000", Source: "src-o"})
	b.account(t, storetest.AccountOpts{AccountID: "o-dst", Owner: "bob", Dest: "dst-o"})
	stop := startOutage(t, url)

	const workers = 8
	var retryable atomic.Int64
	records := make([][]outageRecord, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for p := 0; ; p++ {
				select {
				case <-stop:
					return
				default:
				}
				payout := fmt.Sprintf("o-%d-%d", w, p)
				auth := authorizeClaims(payout, "k-"+payout, "alice", "src-o", "1.00", 0)
				ra := deliver(t, b.client, claims.Authorize, auth, &retryable)
				if ra == nil {
					return
				}
				records[w] = append(records[w], outageRecord{claims.Authorize, auth, ra})
				next, service := claims.Capture, any(captureClaims(payout, "k-"+payout, ra.Str("holdReference")))
				if p%2 == 1 {
					next, service = claims.Release, releaseClaims(payout, "k-"+payout, ra.Str("holdReference"))
				}
				records[w] = append(records[w], outageRecord{next, service, deliver(t, b.client, next, service, &retryable)})
				credit := creditClaims("rq-"+payout, "kc-"+payout, "bob", "dst-o", "0.50")
				records[w] = append(records[w], outageRecord{claims.CreditAccount, credit, deliver(t, b.client, claims.CreditAccount, credit, &retryable)})
			}
		})
	}
	wg.Wait()
	<-stop
	if t.Failed() {
		return
	}
	if retryable.Load() == 0 {
		t.Fatal("the outage produced no retryable answer: it did not happen")
	}
	t.Logf("%d retryable answers during the outage", retryable.Load())
	verifyAfterOutage(t, b, records)
}
