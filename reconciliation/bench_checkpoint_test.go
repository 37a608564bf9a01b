package reconciliation_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkReconcileFromCheckpoint times a run from a checkpoint against
// a full run, on a ledger of H payouts of history and newPayouts since the
// checkpoint:
//
//	go test ./reconciliation -run '^$' -bench 'BenchmarkReconcileFromCheckpoint/history=2000000$' -benchtime 1x -timeout 2h
//
// The history is written set-based (INSERT … SELECT generate_series, a
// consistent ledger: funded accounts, holds captured or released with
// their journal), placed 12 to 40 days ago by H/20 senders; the new
// activity goes through the callbacks' SQL functions, by 1,000 of them,
// with status(k)'s mix and discrepancies, known to the fake service. The
// first run is full and writes the checkpoint; each timed run (three per
// iteration) starts from it (the checkpoint it writes is taken back
// between runs). The full run
// of the same ledger, with the new activity, is reported beside it
// (full-s): its comparison reads every customer's payments list (up to 2
// million payouts; beyond, the database checks alone).
func BenchmarkReconcileFromCheckpoint(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a large ledger")
	}
	for _, h := range []int{200_000, 2_000_000, 20_000_000} {
		b.Run("history="+strconv.Itoa(h), func(b *testing.B) { benchFromCheckpoint(b, h) })
	}
}

const (
	// benchRepeats: runs from the checkpoint per iteration (the seed is
	// long: run with -benchtime 1x).
	benchRepeats  = 3
	newPayouts    = 20_000
	activeSenders = 1_000
)

func benchFromCheckpoint(b *testing.B, history int) {
	ctx := context.Background()
	pool := storetest.PoolURL(b, storetest.URL(b))
	db := store.Wrap(pool, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	start := time.Now()
	seedHistory(b, pool, history, now)
	b.Logf("seeded %d payouts of history in %s", history, time.Since(start).Round(time.Second))
	fake, client := newBenchService(b)
	register(b, client, activeSenders)
	rec, err := reconciliation.New(reconciliation.Config{DB: db, Provider: client, Now: func() time.Time { return now },
		SnapshotTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	// The first run, full, writes the checkpoint: without the service (every
	// customer's list, a million at 20 million payouts, adds nothing to it).
	dbOnly, err := reconciliation.New(reconciliation.Config{DB: db, Now: func() time.Time { return now }, SnapshotTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	first, err := dbOnly.Run(ctx, false)
	b.Logf("first run (full, history only) in %s", time.Since(start).Round(time.Millisecond))
	if err != nil || first.Checkpoint == "" || len(first.Findings) != 0 {
		b.Fatalf("first run: %v, checkpoint %q, findings %v", err, first.Checkpoint, first.Findings)
	}
	start = time.Now()
	seedNewActivity(b, pool, fake, now)
	b.Logf("seeded %d payouts since the checkpoint in %s", newPayouts, time.Since(start).Round(time.Second))
	exec(b, pool, `VACUUM ANALYZE`)
	exec(b, pool, `CREATE TABLE bench_states AS SELECT * FROM reconciliation_account_states`)
	logQueries(b, db, first.Checkpoint, now)
	rep := timeFromCheckpoint(b, rec, pool, first.Checkpoint)
	// The full run of the same ledger: with the service up to 2 million
	// payouts (its findings must be the incremental run's), the database
	// checks alone beyond.
	withService := history <= 2_000_000
	fullRec := rec
	if !withService {
		fullRec = dbOnly
	}
	fullStart := time.Now()
	full, err := fullRec.RunWith(ctx, reconciliation.RunOptions{Full: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(fullStart).Seconds(), "full-s")
	b.ReportMetric(float64(time.Since(fullStart).Nanoseconds())/1e3/float64(history+newPayouts), "full-µs/payout")
	b.Logf("full run (with the service: %t): %v", withService, full.Stages)
	if got, want := issues(rep), issues(full); withService && (!slices.Equal(got, want) || len(got) != 4*newPayouts/1000) {
		b.Errorf("from the checkpoint %d findings, full %d, want the same %d", len(got), len(want), 4*newPayouts/1000)
	}
	if len(issues(rep)) != 4*newPayouts/1000 {
		b.Errorf("from the checkpoint %d findings, want %d", len(issues(rep)), 4*newPayouts/1000)
	}
}

// timeFromCheckpoint times benchRepeats runs from checkpoint from per
// iteration, taking back the checkpoint each writes, and reports them; it
// returns the last run's report.
func timeFromCheckpoint(b *testing.B, rec *reconciliation.Reconciler, pool *pgxpool.Pool, from string) reconciliation.Report {
	ctx := context.Background()
	var rep reconciliation.Report
	stages := map[string]time.Duration{}
	var took time.Duration
	b.ResetTimer()
	for range b.N * benchRepeats {
		runStart := time.Now()
		var err error
		if rep, err = rec.Run(ctx, false); err != nil {
			b.Fatal(err)
		}
		took += time.Since(runStart)
		for _, s := range rep.Stages {
			stages[s.Name] += s.Took
		}
		if rep.Mode != reconciliation.ModeIncremental || rep.FromCheckpoint != from {
			b.Fatalf("run %s from %q, want incremental from %s", rep.Mode, rep.FromCheckpoint, from)
		}
		exec(b, pool, `DELETE FROM reconciliation_account_states`)
		exec(b, pool, `INSERT INTO reconciliation_account_states SELECT * FROM bench_states`)
		exec(b, pool, `DELETE FROM reconciliation_checkpoints WHERE checkpoint_id = $1`, rep.Checkpoint)
	}
	b.StopTimer()
	per := took / time.Duration(b.N*benchRepeats)
	b.ReportMetric(per.Seconds(), "s/run")
	b.ReportMetric(float64(per.Nanoseconds())/1e3/newPayouts, "µs/new-payout")
	for name, took := range stages {
		b.ReportMetric(took.Seconds()/float64(b.N*benchRepeats), name+"-s")
	}
	return rep
}

// logQueries logs how long each query of a snapshot from the checkpoint
// takes (read only: no checkpoint written).
func logQueries(b *testing.B, db *store.DB, from string, now time.Time) {
	b.Helper()
	snap, err := db.Reconcile(context.Background(), ledger.ReconcileParams{Now: now, StaleBefore: now.Add(-264 * time.Hour),
		ComparedSince: now.Add(-264 * time.Hour), CreditsSince: now.Add(-31 * 24 * time.Hour), WithProvider: true, From: from})
	if err != nil {
		b.Fatal(err)
	}
	var line strings.Builder
	for _, t := range snap.Timings {
		fmt.Fprintf(&line, " %s=%s", t.Query, t.Took.Round(time.Millisecond))
	}
	b.Logf("queries from the checkpoint:%s", line.String())
}

func exec(b *testing.B, pool *pgxpool.Pool, sql string, args ...any) {
	b.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		b.Fatalf("%v\n%s", err, sql)
	}
}

// History, set-based: $1 senders, $2 opened, $3 now; payouts $4..$5 of
// $6, placed 40 to 12 days before $3. Payout j is sender (j-1) % $1's, of
// 1.25 to 50.25; captured when j % 10 < 7, else released.
const (
	historyAccountsSQL = `
INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at)
SELECT 'bench-acct-' || s, 'bench-own-' || s, 'USD', $2, $2 FROM generate_series(0, $1::int - 1) s;
INSERT INTO instruments (token, kind, account_id, created_at)
SELECT 'bench-src-' || s, 'source', 'bench-acct-' || s, $2 FROM generate_series(0, $1::int - 1) s;
INSERT INTO adjustments (idempotency_key, account_id, amount, memo, transaction_id, created_at)
SELECT 'fund', 'bench-acct-' || s, 100000, 'opening balance', md5('fund' || s)::uuid, $2 FROM generate_series(0, $1::int - 1) s;
INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
SELECT md5('fund' || s)::uuid, 'adjustment', 'fund', 'opening balance', 'bench-acct-' || s, 'core:USD', 'USD', 100000, $2
FROM generate_series(0, $1::int - 1) s;`

	historyHoldsSQL = `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
SELECT 'hold_hist' || j, 'bench-hist-' || j, 'bench-acct-' || ((j - 1) % $1::int), 'bench-src-' || ((j - 1) % $1::int), 'USD',
       1 + j % 50 + 0.25, $3::timestamptz - interval '40 days' + j * (interval '28 days' / $6::int)
FROM generate_series($4::int, $5::int) j WHERE $2::timestamptz IS NOT NULL`

	historySettlementsSQL = `INSERT INTO hold_settlements (hold_reference, status, reference, reason, transaction_id, settled_at)
SELECT 'hold_hist' || j, CASE WHEN j % 10 < 7 THEN 'captured' ELSE 'released' END,
       CASE WHEN j % 10 < 7 THEN 'cap_hist' || j ELSE 'rel_hist' || j END,
       CASE WHEN j % 10 < 7 THEN NULL ELSE 'cancelled' END,
       CASE WHEN j % 10 < 7 THEN md5('cap' || j)::uuid END,
       $3::timestamptz - interval '40 days' + j * (interval '28 days' / $6::int) + interval '1 minute'
FROM generate_series($4::int, $5::int) j WHERE $1::int > 0 AND $2::timestamptz IS NOT NULL`

	historyCapturesSQL = `INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
SELECT md5('cap' || j)::uuid, 'capture', 'cap_hist' || j, 'bench-hist-' || j, 'bench-acct-' || ((j - 1) % $1::int),
       'settlement:USD', 'USD', -(1 + j % 50 + 0.25),
       $3::timestamptz - interval '40 days' + j * (interval '28 days' / $6::int) + interval '1 minute'
FROM generate_series($4::int, $5::int) j WHERE j % 10 < 7 AND $2::timestamptz IS NOT NULL`

	historyBalancesSQL = `UPDATE accounts a SET balance = t.total
FROM (SELECT account_id, sum(amount) AS total FROM journal GROUP BY account_id) t
WHERE a.account_id = t.account_id AND a.kind = 'customer'`
)

// seedHistory writes history payouts, a million per statement.
func seedHistory(b *testing.B, pool *pgxpool.Pool, history int, now time.Time) {
	b.Helper()
	senders := history / 20
	opened := now.Add(-60 * 24 * time.Hour)
	exec(b, pool, `SELECT ledger_ensure_system_accounts('USD', $1)`, opened)
	for _, sql := range splitStatements(historyAccountsSQL) {
		exec(b, pool, sql, senders, opened)
	}
	const batch = 1_000_000
	for lo := 1; lo <= history; lo += batch {
		hi := min(lo+batch-1, history)
		for _, sql := range []string{historyHoldsSQL, historySettlementsSQL, historyCapturesSQL} {
			exec(b, pool, sql, senders, opened, now, lo, hi, history)
		}
	}
	exec(b, pool, historyBalancesSQL)
	exec(b, pool, `VACUUM ANALYZE`)
}

// splitStatements splits SQL statements separated by ";\n".
func splitStatements(sql string) []string {
	var out []string
	for _, s := range strings.Split(sql, ";\n") {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// New activity through the callbacks: payout k (1..newPayouts) by sender
// (k-1) % activeSenders, placed in the last hour; $1, $2 the payouts, $3
// now.
var (
	newAuthorizeSQL = `SELECT count(*) FILTER (WHERE a.outcome = 'approved')
FROM generate_series($1::int, $2::int) k,
  LATERAL (SELECT (k - 1) % ` + strconv.Itoa(activeSenders) + ` AS s,
                  $3::timestamptz - interval '1 hour' + k * (interval '50 minutes' / ` + strconv.Itoa(newPayouts) + `) AS at) x,
  cb_authorize(p_key => 'kn-' || k, p_fingerprint => sha256(('kn-' || k)::bytea), p_key_fingerprint => 'bench',
               p_caller_subject => NULL, p_audit_request_id => NULL, p_now => x.at, p_payout_id => 'bench-pay-' || k,
               p_external_id => 'bench-own-' || x.s, p_funding_source => 'bench-src-' || x.s, p_currency => 'USD',
               p_amount => 1 + (k % 50) + 0.25, p_fraud_score => 0.1, p_fraud_deny => 0.9, p_fraud_stepup => 0.75,
               p_hold_reference => 'hold_bench' || k) a`
)

// seedNewActivity places, captures and releases the new payouts through
// the callbacks' functions (benchCaptureSQL and benchReleaseSQL), and
// tells the fake service about them (status).
func seedNewActivity(b *testing.B, pool *pgxpool.Pool, fake *providertest.Service, now time.Time) {
	b.Helper()
	for lo := 1; lo <= newPayouts; lo += seedBatch {
		hi := min(lo+seedBatch-1, newPayouts)
		exec(b, pool, newAuthorizeSQL, lo, hi, now)
		exec(b, pool, benchCaptureSQL, lo, hi)
		exec(b, pool, benchReleaseSQL, lo, hi)
	}
	pid := fake.ProviderID()
	for k := 1; k <= newPayouts; k++ {
		_, there := status(k)
		if there == "" {
			continue
		}
		if _, err := fake.SeedPayout(pid, providertest.Payout{PayoutID: "bench-pay-" + strconv.Itoa(k),
			SenderExternalID: "bench-own-" + strconv.Itoa((k-1)%activeSenders), Amount: providertest.USD(strconv.Itoa(1+k%50) + ".25"),
			Status: there, CreatedOn: now.Add(-time.Hour + time.Duration(k)*(50*time.Minute/newPayouts))}); err != nil {
			b.Fatal(err)
		}
	}
}

// newBenchService is a fake provider API over HTTP and its client.
func newBenchService(b *testing.B) (*providertest.Service, *provider.Client) {
	b.Helper()
	fake := providertest.NewService()
	ts := httptest.NewServer(fake)
	b.Cleanup(ts.Close)
	id, secret := fake.APIKey()
	client, err := provider.NewClient(ts.URL, provider.WithProviderID(fake.ProviderID()), provider.WithAPIKey(id, secret),
		provider.WithRetryPolicy(provider.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		b.Fatal(err)
	}
	return fake, client
}
