package reconciliation_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkReconcile times one full run (the invariants, the other
// database checks, and the comparison with the service through the fake
// provider API over HTTP) on a ledger of N payouts:
//
//	go test ./reconciliation -run '^$' -bench BenchmarkReconcile -benchtime 1x
//
// The seed is realistic and deterministic (see seedLedger and seedService):
// 60% of holds captured, 25% released (cancelled or expired), 15% held,
// placed over the last ten days by a few heavy senders (500 payouts each:
// five pages of the payments list) and many light ones (20 each); a tenth
// as many requests for payment as payouts, credited; and, per thousand
// payouts, one payout of each discrepancy the comparison finds, one stale
// hold, one payout the service does not list and one lost credit.
func BenchmarkReconcile(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		b.Run("payouts="+strconv.Itoa(n), func(b *testing.B) { benchReconcile(b, n) })
	}
}

func benchReconcile(b *testing.B, n int) {
	ctx := context.Background()
	url := storetest.URL(b)
	pool := storetest.PoolURL(b, url)
	db := store.Wrap(pool, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	shape := benchShape(n)
	start := time.Now()
	seedLedger(b, pool, shape, now)
	fake, client := seedService(b, shape, now)
	b.Logf("seeded %d payouts, %d senders, %d requests for payment in %s", n, shape.senders(), shape.requests,
		time.Since(start).Round(time.Millisecond))
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	rec, err := reconciliation.New(reconciliation.Config{DB: db, Provider: client, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	fake.ResetRequests()
	runtime.GC()
	heap := watchHeap()
	var rep reconciliation.Report
	stages := map[string]time.Duration{}
	b.ResetTimer()
	for range b.N {
		if rep, err = rec.Run(ctx, false); err != nil {
			b.Fatal(err)
		}
		for _, s := range rep.Stages {
			stages[s.Name] += s.Took
		}
	}
	b.StopTimer()
	peak := heap()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/run")
	b.ReportMetric(float64(per.Nanoseconds())/1e3/float64(n), "µs/hold")
	for name, took := range stages {
		b.ReportMetric(took.Seconds()/float64(b.N), name+"-s")
	}
	b.ReportMetric(float64(len(fake.Requests())/b.N), "pages/run")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	checkBenchReport(b, rep, shape)
}

// watchHeap samples the live heap (as of the last garbage collection)
// every millisecond until the returned function is called, which returns
// its peak growth over the start. The fake runs in the same process: its
// seeded state is in the start, and what it builds during the run (its
// request log, its sorted lists, about a third at 200,000) is counted.
func watchHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > base && v-base > peak.Load() {
					peak.Store(v - base)
				}
			}
		}
	}()
	return func() uint64 { close(done); <-stopped; return peak.Load() }
}

// shape is the seed's size.
type shape struct {
	payouts, heavy, light, requests int
}

const (
	heavyPayouts = 500 // per heavy sender
	lightPayouts = 20  // per light sender
)

func benchShape(n int) shape {
	heavyTotal := n / 10
	s := shape{payouts: n, heavy: max(1, heavyTotal/heavyPayouts), requests: n / 10}
	s.light = max(1, (n-s.heavy*heavyPayouts)/lightPayouts)
	return s
}

func (s shape) senders() int { return s.heavy + s.light }

// sender returns the sender of payout j (1-based).
func (s shape) sender(j int) int {
	if j <= s.heavy*heavyPayouts {
		return (j - 1) / heavyPayouts
	}
	return s.heavy + (j-1)%s.light
}

// Per thousand payouts, the discrepancies seeded (by j % 1000).
const (
	jCaptureCancel = 3  // captured here, cancelled there
	jReleaseDone   = 13 // released here, completed there
	jMissedCapture = 17 // held here, completed there
	jMissedRelease = 18 // held here, cancelled there
	jUnlisted      = 19 // held here, not listed there
	jStale         = 39 // held for 12 days (the service: authorized)
	kLostCredit    = 1  // a completed request never credited (by k % 1000)
	kPending       = 5  // a pending request, not credited (by k % 10)
)

// status is what payout j is here: captured, released (cancelled or
// expired) or held, by j % 20.
func status(j int) (here, there string) {
	switch b := j % 20; {
	case b < 12:
		here, there = "captured", providertest.PayoutCompleted
	case b < 16:
		here, there = "cancelled", providertest.PayoutCancelled
	case b == 16:
		here, there = "expired", providertest.PayoutExpired
	default:
		here, there = "held", []string{providertest.PayoutAuthorized, providertest.PayoutAccepted, providertest.PayoutClaiming}[b-17]
	}
	switch j % 1000 {
	case jCaptureCancel:
		there = providertest.PayoutCancelled
	case jReleaseDone, jMissedCapture:
		there = providertest.PayoutCompleted
	case jMissedRelease:
		there = providertest.PayoutCancelled
	case jUnlisted:
		there = ""
	}
	return here, there
}

// placedAt spreads the payouts over the last ten days, oldest first; a
// stale one was placed twelve days ago.
func placedAt(j, n int, now time.Time) time.Time {
	if j%1000 == jStale {
		return now.Add(-12 * 24 * time.Hour)
	}
	return now.Add(-time.Duration(n-j+1) * (10 * 24 * time.Hour / time.Duration(n+1)))
}

// Seeding SQL: the callbacks' own functions, a batch per statement.
// Payout j's sender s is given by the CASE of $3..$5 (heavy senders, their
// payouts, light senders).
const (
	benchSenderSQL = `CASE WHEN j <= $3::int * $4::int THEN (j - 1) / $4::int ELSE $3::int + (j - 1) % $5::int END`

	benchAccountsSQL = `WITH a AS (
  INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at)
  SELECT 'bench-acct-' || s, 'bench-own-' || s, 'USD', $1, $1 FROM generate_series(0, $2::int - 1) s
  RETURNING account_id
), i AS (
  INSERT INTO instruments (token, kind, account_id, created_at)
  SELECT 'bench-src-' || s, 'source', 'bench-acct-' || s, $1 FROM generate_series(0, $2::int - 1) s
  UNION ALL
  SELECT 'bench-dst-' || s, 'destination', 'bench-acct-' || s, $1 FROM generate_series(0, $2::int - 1, 2) s
)
SELECT count(*) FROM a`

	benchFundSQL = `SELECT count(*) FROM generate_series($1::int, $2::int) s,
  ledger_adjust(p_account_id => 'bench-acct-' || s, p_amount => 1000000, p_key => 'fund-' || s, p_memo => 'opening balance',
                p_transaction_id => gen_random_uuid(), p_now => $3)`

	// $1, $2: the payouts; $3..$5: the shape; $6 now; $7 the spacing (µs);
	// $8 N.
	benchAuthorizeSQL = `SELECT count(*) FILTER (WHERE a.outcome = 'approved')
FROM generate_series($1::int, $2::int) j,
  LATERAL (SELECT ` + benchSenderSQL + ` AS s,
                  CASE WHEN j % 1000 = 39 THEN $6::timestamptz - interval '12 days'
                       ELSE $6::timestamptz - ($8::int - j + 1) * $7::bigint * interval '1 microsecond' END AS at) x,
  cb_authorize(p_key => 'ka-' || j, p_fingerprint => sha256(('ka-' || j)::bytea), p_key_fingerprint => 'bench',
               p_caller_subject => NULL, p_audit_request_id => NULL, p_now => x.at, p_payout_id => 'bench-pay-' || j,
               p_external_id => 'bench-own-' || x.s, p_funding_source => 'bench-src-' || x.s, p_currency => 'USD',
               p_amount => 1 + (j % 50) + 0.25, p_fraud_score => 0.1, p_fraud_deny => 0.9, p_fraud_stepup => 0.75,
               p_hold_reference => 'hold_bench' || j) a`

	// Captures (j % 20 < 12) and releases (12..16) a minute after the
	// authorize. The filter on j runs before the function (a qual of the
	// series alone).
	benchCaptureSQL = `SELECT count(*) FILTER (WHERE c.outcome = 'approved')
FROM (SELECT j FROM generate_series($1::int, $2::int) j WHERE j % 20 < 12) g
  JOIN holds h ON h.payout_id = 'bench-pay-' || g.j,
  cb_capture(p_key => 'kc-' || g.j, p_fingerprint => sha256(('kc-' || g.j)::bytea), p_key_fingerprint => 'bench',
             p_now => h.placed_at + interval '1 minute', p_payout_id => h.payout_id, p_hold_reference => h.hold_reference,
             p_capture_reference => 'cap_bench' || g.j, p_transaction_id => gen_random_uuid()) c`
	benchReleaseSQL = `SELECT count(*) FILTER (WHERE r.outcome = 'approved')
FROM (SELECT j FROM generate_series($1::int, $2::int) j WHERE j % 20 BETWEEN 12 AND 16) g
  JOIN holds h ON h.payout_id = 'bench-pay-' || g.j,
  cb_release(p_key => 'kr-' || g.j, p_fingerprint => sha256(('kr-' || g.j)::bytea), p_key_fingerprint => 'bench',
             p_now => h.placed_at + interval '1 minute', p_payout_id => h.payout_id, p_hold_reference => h.hold_reference,
             p_reason => CASE WHEN g.j % 20 = 16 THEN 'expired' ELSE 'cancelled' END,
             p_release_reference => 'rel_bench' || g.j) r`

	// Requests for payment k to recipient (2k mod senders, an even sender:
	// those have a destination), credited unless lost or pending. $3 the
	// senders; $4 now; $5 the spacing (µs); $6 the requests.
	benchCreditSQL = `SELECT count(*) FILTER (WHERE c.outcome = 'approved')
FROM (SELECT k FROM generate_series($1::int, $2::int) k WHERE k % 1000 <> 1 AND k % 10 <> 5) g,
  LATERAL (SELECT (2 * k) % ($3::int - $3::int % 2) AS s,
                  $4::timestamptz - ($6::int - k + 1) * $5::bigint * interval '1 microsecond' AS at) x,
  cb_credit(p_key => 'kq-' || k, p_fingerprint => sha256(('kq-' || k)::bytea), p_key_fingerprint => 'bench',
            p_now => x.at, p_request_id => 'bench-req-' || k, p_destination => 'bench-dst-' || x.s,
            p_requester => 'bench-own-' || x.s, p_currency => 'USD', p_amount => 1 + (k % 30), p_max => NULL,
            p_credit_reference => 'cred_bench' || k, p_transaction_id => gen_random_uuid()) c`

	// Two captures of holds never issued: orphan_capture.
	benchOrphansSQL = `SELECT count(*) FROM generate_series(1, 2) o,
  cb_capture(p_key => 'ko-' || o, p_fingerprint => sha256(('ko-' || o)::bytea), p_key_fingerprint => 'bench',
             p_now => $1, p_payout_id => 'bench-orphan-' || o, p_hold_reference => 'hold_never' || o,
             p_capture_reference => 'cap_orphan' || o, p_transaction_id => gen_random_uuid())`
)

// seedBatch is the number of callbacks per seeding statement: each takes
// transaction-scoped advisory locks, which must fit the lock table.
const seedBatch = 1000

// seedLedger fills the ledger through the callbacks' SQL functions.
func seedLedger(b *testing.B, pool *pgxpool.Pool, s shape, now time.Time) {
	b.Helper()
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		b.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			b.Fatalf("seed: %v\n%s", err, sql)
		}
	}
	opened := now.Add(-30 * 24 * time.Hour)
	exec(`SELECT ledger_ensure_system_accounts('USD', $1)`, opened)
	exec(benchAccountsSQL, opened, s.senders())
	for lo := 0; lo < s.senders(); lo += seedBatch {
		exec(benchFundSQL, lo, min(lo+seedBatch, s.senders())-1, opened)
	}
	spacing := (10 * 24 * time.Hour / time.Duration(s.payouts+1)).Microseconds()
	for lo := 1; lo <= s.payouts; lo += seedBatch {
		hi := min(lo+seedBatch-1, s.payouts)
		exec(benchAuthorizeSQL, lo, hi, s.heavy, heavyPayouts, s.light, now, spacing, s.payouts)
		exec(benchCaptureSQL, lo, hi)
		exec(benchReleaseSQL, lo, hi)
	}
	cspacing := (10 * 24 * time.Hour / time.Duration(s.requests+1)).Microseconds()
	for lo := 1; lo <= s.requests; lo += seedBatch {
		exec(benchCreditSQL, lo, min(lo+seedBatch-1, s.requests), s.senders(), now, cspacing, s.requests)
	}
	exec(benchOrphansSQL, now.Add(-time.Hour))
	var held, captured, released int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'held'), count(*) FILTER (WHERE status = 'captured'),
count(*) FILTER (WHERE status = 'released') FROM hold_states`).Scan(&held, &captured, &released); err != nil {
		b.Fatal(err)
	}
	if held+captured+released != s.payouts {
		b.Fatalf("seeded %d held, %d captured, %d released holds, want %d in all", held, captured, released, s.payouts)
	}
}

// seedService registers every sender with a fake provider API, and seeds
// the payouts and requests for payment as the service sees them.
func seedService(b *testing.B, s shape, now time.Time) (*providertest.Service, *provider.Client) {
	b.Helper()
	fake, client := newBenchService(b)
	register(b, client, s.senders())
	pid := fake.ProviderID()
	for j := 1; j <= s.payouts; j++ {
		_, there := status(j)
		if there == "" {
			continue
		}
		if _, err := fake.SeedPayout(pid, providertest.Payout{PayoutID: "bench-pay-" + strconv.Itoa(j),
			SenderExternalID: "bench-own-" + strconv.Itoa(s.sender(j)), Amount: providertest.USD(strconv.Itoa(1+j%50) + ".25"), Status: there,
			CreatedOn: placedAt(j, s.payouts, now)}); err != nil {
			b.Fatal(err)
		}
	}
	even := s.senders() - s.senders()%2
	spacing := 10 * 24 * time.Hour / time.Duration(s.requests+1)
	for k := 1; k <= s.requests; k++ {
		st := "completed"
		if k%10 == kPending {
			st = "pending"
		}
		if err := fake.SeedPayment(pid, "bench-own-"+strconv.Itoa((2*k)%even), providertest.Payment{
			ID: "bench-req-" + strconv.Itoa(k), Type: "request", Direction: "received", Status: st,
			Amount: providertest.USD("1.00"), CreatedOn: now.Add(-time.Duration(s.requests-k+1) * spacing)}); err != nil {
			b.Fatal(err)
		}
	}
	return fake, client
}

// register registers the participants bench-own-0 … with four workers.
func register(b *testing.B, client *provider.Client, n int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				_, _, err := client.Participants.Create(context.Background(), &provider.ParticipantCreateRequest{
					ExternalID: "bench-own-" + strconv.Itoa(i), GivenName: "Pat", FamilyName: "Payer",
					Address: provider.Address{AddressLine1: "1 Main St", City: "Springfield", StateOrProvince: "IL",
						PostalCode: "62701", Country: "US"}, PhoneNumbers: []string{"+15555550100"}})
				if err != nil {
					errs <- fmt.Errorf("register bench-own-%d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// checkBenchReport fails b unless the run found exactly the seeded
// discrepancies: a run that found nothing would time nothing.
func checkBenchReport(b *testing.B, rep reconciliation.Report, s shape) {
	b.Helper()
	got := map[string]int{}
	for _, f := range rep.Findings {
		got[f.Kind]++
	}
	per := func(k int) int { return (s.payouts - k + 1000) / 1000 }
	want := map[string]int{
		reconciliation.KindCaptureCancelConflict:  per(jCaptureCancel),
		reconciliation.KindCaptureReleaseConflict: per(jReleaseDone),
		reconciliation.KindMissedCapture:          per(jMissedCapture),
		reconciliation.KindMissedRelease:          per(jMissedRelease),
		reconciliation.KindStaleHold:              per(jStale),
		reconciliation.KindMissingCredit:          (s.requests - kLostCredit + 1000) / 1000,
		reconciliation.KindOrphanCapture:          2,
	}
	for k, w := range want {
		if got[k] != w {
			b.Errorf("%s findings: %d, want %d", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			b.Errorf("unexpected %d %s findings", g, k)
		}
	}
}
