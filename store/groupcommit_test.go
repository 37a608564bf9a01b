package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// authorizeParams authorizes payout from source (owner's) for amount USD,
// under key.
func authorizeParams(payout, key, owner, source, amount string) holds.AuthorizeParams {
	fp := sha256.Sum256([]byte(payout + "|" + owner + "|" + source + "|" + amount))
	return holds.AuthorizeParams{Key: key, Fingerprint: fp[:], KeyFingerprint: "test", Now: time.Now(),
		PayoutID: payout, ExternalID: owner, FundingSource: source, Currency: "USD",
		Amount: decimal.RequireFromString(amount), FraudDeny: 0.9, FraudStepUp: 0.75,
		HoldReference: ledger.NewReference("hold_")}
}

func captureParams(payout, key, hold string) holds.CaptureParams {
	fp := sha256.Sum256([]byte("capture|" + payout + "|" + hold))
	return holds.CaptureParams{Key: key, Fingerprint: fp[:], KeyFingerprint: "test", Now: time.Now(),
		PayoutID: payout, HoldReference: hold, CaptureReference: ledger.NewReference("cap_"),
		TransactionID: ledger.NewTransactionID()}
}

// laneDB is a store over a database of the test's own, with its URL (for
// the sessions that hold locks beside it).
func laneDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	url := storetest.URL(t)
	return store.Wrap(storetest.PoolURL(t, url), nil), url
}

// fourAccounts opens accounts prefix-0 to prefix-3 with funds each, owned
// by o-0 to o-3, with the funding sources src-0 to src-3.
func fourAccounts(t *testing.T, db *store.DB, prefix, funds string) {
	t.Helper()
	for i := range 4 {
		storetest.Account(t, db, storetest.AccountOpts{AccountID: fmt.Sprintf("%s-%d", prefix, i), Owner: fmt.Sprintf("o-%d", i),
			Funds: funds, Source: fmt.Sprintf("src-%d", i)})
	}
}

// blockLane holds the advisory lock of payout's authorize on a connection
// of its own and sends that authorize, which takes the one lane of db and
// waits there; release lets it go on. The callbacks sent meanwhile queue.
func blockLane(t *testing.T, db *store.DB, url, payout, owner, source string) (release func(), done <-chan ledger.Answer) {
	t.Helper()
	ctx := context.Background()
	conn := storetest.PoolURL(t, url)
	c, err := conn.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(1, hashtext($1))`, payout); err != nil {
		t.Fatal(err)
	}
	out := make(chan ledger.Answer, 1)
	go func() {
		a, err := db.Authorize(ctx, authorizeParams(payout, "k-"+payout, owner, source, "1.00"))
		if err != nil {
			t.Error(err)
		}
		out <- a
	}()
	// The blocker is on the lane once it waits for the lock.
	storetest.WaitForLockWaiters(t, conn, 1)
	return func() {
		if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock(1, hashtext($1))`, payout); err != nil {
			t.Error(err)
		}
		c.Release()
	}, out
}

// TestGroupCommitBatchesWhatQueued: with one lane busy, 40 callbacks queue
// (authorizes on four accounts, captures of earlier holds, and a second
// copy of every authorize under the same key); they commit as one batch,
// each with the answer it would have had alone: every copy answers as its
// twin, each hold placed once, the money exact, I1-I6 hold.
func TestGroupCommitBatchesWhatQueued(t *testing.T) {
	t.Parallel()
	db, url := laneDB(t)
	fourAccounts(t, db, "gc", "100")
	var pre []string
	for i := range 8 {
		d := storetest.Hold(t, db, fmt.Sprintf("pre-%d", i), fmt.Sprintf("o-%d", i%4), fmt.Sprintf("src-%d", i%4), "5.00")
		pre = append(pre, d.Reference)
	}
	db.SetGroupCommit(1)
	release, blocked := blockLane(t, db, url, "blocker", "o-0", "src-0")

	type result struct {
		a   ledger.Answer
		err error
	}
	results := make([]result, 40)
	var wg sync.WaitGroup
	for i := range 16 { // 16 authorizes, each twice under its key
		for copy := range 2 {
			wg.Go(func() {
				a, err := db.Authorize(context.Background(), authorizeParams(fmt.Sprintf("new-%d", i), fmt.Sprintf("ka-%d", i),
					fmt.Sprintf("o-%d", i%4), fmt.Sprintf("src-%d", i%4), "10.00"))
				results[2*i+copy] = result{a, err}
			})
		}
	}
	for i := range 8 {
		wg.Go(func() {
			a, err := db.Capture(context.Background(), captureParams(fmt.Sprintf("pre-%d", i), fmt.Sprintf("kc-%d", i), pre[i]))
			results[32+i] = result{a, err}
		})
	}
	stats := db.GroupCommit()
	wait.Until(t, "40 callbacks queued", func() bool { return stats.Queued.Load() == 40 })
	release()
	wg.Wait()
	<-blocked

	if stats.Batches.Load() != 1 || stats.Batched.Load() != 40 || stats.Fallbacks.Load() != 0 {
		t.Fatalf("batches %d of %d callbacks, %d fallbacks; want one batch of 40", stats.Batches.Load(), stats.Batched.Load(), stats.Fallbacks.Load())
	}
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("callback %d: %v", i, r.err)
		}
	}
	// Each account: 100 - 8 captures' 5.00 spread two per account; holds:
	// the blocker's 1.00 on gc-0 and four of 10.00 per account, each once
	// whatever copy placed it (90 available: all approved).
	for i := range 16 {
		a, b := results[2*i].a, results[2*i+1].a
		if a.Outcome != "approved" || b.Outcome != "approved" || a.Reference != b.Reference {
			t.Fatalf("authorize %d: copies answered %+v and %+v", i, a, b)
		}
		if (a.State == ledger.StateNew) == (b.State == ledger.StateNew) {
			t.Fatalf("authorize %d: states %s and %s, want one new and one replay", i, a.State, b.State)
		}
	}
	for i := range 8 {
		if r := results[32+i].a; r.Outcome != "approved" || r.State != ledger.StateNew {
			t.Fatalf("capture %d: %+v", i, r)
		}
	}
	storetest.AssertBalances(t, db, "gc-0", "90", "41", "49")
	for i := 1; i < 4; i++ {
		storetest.AssertBalances(t, db, fmt.Sprintf("gc-%d", i), "90", "40", "50")
	}
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitOneFailureChangesNoOtherAnswer: a batch in which one
// callback fails (an amount the holds table refuses) commits nothing; each
// callback then runs alone: the others are approved as they would have
// been, the failing one gets the error it gets alone, and nothing of it is
// applied.
func TestGroupCommitOneFailureChangesNoOtherAnswer(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	pool := storetest.PoolURL(t, url)
	db := store.Wrap(pool, nil)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "gf-0", Owner: "o", Funds: "100", Source: "src"})

	alone := store.Wrap(pool, nil)
	_, wantErr := alone.Authorize(context.Background(), authorizeParams("bad-alone", "kb-alone", "o", "src", "0"))
	if wantErr == nil {
		t.Fatal("an authorize of 0 succeeded alone: the test needs a callback that fails")
	}

	db.SetGroupCommit(1)
	release, blocked := blockLane(t, db, url, "blocker", "o", "src")
	errs := make([]error, 10)
	answers := make([]ledger.Answer, 10)
	var wg sync.WaitGroup
	for i := range 10 {
		amount := "3.00"
		if i == 4 {
			amount = "0"
		}
		wg.Go(func() {
			answers[i], errs[i] = db.Authorize(context.Background(), authorizeParams(fmt.Sprintf("p-%d", i), fmt.Sprintf("k-%d", i), "o", "src", amount))
		})
	}
	stats := db.GroupCommit()
	wait.Until(t, "10 callbacks queued", func() bool { return stats.Queued.Load() == 10 })
	release()
	wg.Wait()
	<-blocked

	if stats.Fallbacks.Load() != 1 {
		t.Fatalf("%d fallbacks, want 1", stats.Fallbacks.Load())
	}
	for i := range 10 {
		if i == 4 {
			if errs[i] == nil || errs[i].Error() != wantErr.Error() {
				t.Fatalf("the failing callback: %v, want the error it gets alone: %v", errs[i], wantErr)
			}
			continue
		}
		if errs[i] != nil || answers[i].Outcome != "approved" || answers[i].State != ledger.StateNew {
			t.Fatalf("callback %d: %+v %v", i, answers[i], errs[i])
		}
	}
	storetest.AssertBalances(t, db, "gf-0", "100", "28", "72") // the blocker's 1.00 and nine of 3.00
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitStormNeverDeadlocks: 4 lanes, 32 goroutines each
// authorizing then capturing 25 payouts on four shared accounts, so that
// batches of authorizes and captures of the same accounts meet all the
// time: no batch fails (a deadlock would fail one: the accounts are locked
// in one order first), every payout is captured once, the money is exact
// and I1-I6 hold.
func TestGroupCommitStormNeverDeadlocks(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	db := store.Wrap(pool, nil)
	fourAccounts(t, db, "gs", "1000")
	db.SetGroupCommit(4)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for n := range 25 {
				acct := (g + n) % 4
				payout := fmt.Sprintf("s-%d-%d", g, n)
				a, err := db.Authorize(ctx, authorizeParams(payout, "ka-"+payout, fmt.Sprintf("o-%d", acct), fmt.Sprintf("src-%d", acct), "1.00"))
				if err != nil || a.Outcome != "approved" {
					t.Errorf("authorize %s: %+v %v", payout, a, err)
					return
				}
				c, err := db.Capture(ctx, captureParams(payout, "kc-"+payout, a.Reference))
				if err != nil || c.Outcome != "approved" {
					t.Errorf("capture %s: %+v %v", payout, c, err)
					return
				}
			}
		})
	}
	wg.Wait()
	stats := db.GroupCommit()
	t.Logf("%d batches of %d callbacks (of 1600), %d fallbacks", stats.Batches.Load(), stats.Batched.Load(), stats.Fallbacks.Load())
	if stats.Fallbacks.Load() != 0 {
		t.Errorf("%d batches failed as a whole", stats.Fallbacks.Load())
	}
	if stats.Batches.Load() == 0 {
		t.Error("no batch formed: 32 goroutines on 4 lanes should queue")
	}
	for i := range 4 {
		storetest.AssertBalances(t, db, fmt.Sprintf("gs-%d", i), "800", "0", "800")
	}
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitFreeLanesRunSideBySide: two callbacks that arrive at once
// while two lanes are free run side by side, each alone on its own
// connection, never one lane's batch of both (which would leave a lane, and
// a pooled connection, idle while the other waits).
func TestGroupCommitFreeLanesRunSideBySide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := laneDB(t)
	fourAccounts(t, db, "gs", "100")
	db.SetGroupCommit(2)
	// Both payouts' advisory locks are held elsewhere, so each callback
	// waits on its lane until released.
	locker := storetest.PoolURL(t, url)
	c, err := locker.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for _, payout := range []string{"side-0", "side-1"} {
		if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(1, hashtext($1))`, payout); err != nil {
			t.Fatal(err)
		}
	}
	start := make(chan struct{})
	answers := make([]ledger.Answer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			<-start
			answers[i], errs[i] = db.Authorize(ctx, authorizeParams(fmt.Sprintf("side-%d", i), fmt.Sprintf("ks-%d", i),
				fmt.Sprintf("o-%d", i), fmt.Sprintf("src-%d", i), "3.00"))
		})
	}
	close(start)
	storetest.WaitForLockWaiters(t, locker, 2)
	stats := db.GroupCommit()
	if n := stats.Queued.Load(); n != 0 {
		t.Errorf("%d callbacks queued with a lane free", n)
	}
	if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || answers[i].Outcome != ledger.OutcomeApproved {
			t.Errorf("callback %d: %+v, %v; want approved", i, answers[i], errs[i])
		}
	}
	if n := stats.Batches.Load(); n != 0 {
		t.Errorf("%d batches: each callback should have run alone", n)
	}
	storetest.AssertBalances(t, db, "gs-0", "100", "3", "97")
	storetest.AssertBalances(t, db, "gs-1", "100", "3", "97")
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitOneLaneStalledByALock: the cost of one lane. A session
// outside ledgerd holds an account's row lock; the lane's callback on that
// account waits there until its deadline and is answered ledger.ErrTimeout,
// nothing applied; the callbacks on other accounts that queued behind it
// then commit as one batch, approved; and the stalled account's callback,
// sent again once the lock is gone, is approved.
func TestGroupCommitOneLaneStalledByALock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := laneDB(t)
	fourAccounts(t, db, "gl", "100")
	db.SetGroupCommit(1)

	locker := storetest.PoolURL(t, url)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE account_id = 'gl-0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// The deadline leaves time for the others to queue on a busy machine.
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stalled := make(chan error, 1)
	go func() {
		_, err := db.Authorize(short, authorizeParams("stalled", "k-stalled", "o-0", "src-0", "4.00"))
		stalled <- err
	}()
	storetest.WaitForLockWaiters(t, locker, 1)
	answers := make([]ledger.Answer, 6)
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			n := 1 + i%3
			answers[i], errs[i] = db.Authorize(ctx, authorizeParams(fmt.Sprintf("behind-%d", i), fmt.Sprintf("kb-%d", i),
				fmt.Sprintf("o-%d", n), fmt.Sprintf("src-%d", n), "2.00"))
		})
	}
	stats := db.GroupCommit()
	wait.Until(t, "6 callbacks queued behind the stalled lane", func() bool { return stats.Queued.Load() == 6 })
	if err := <-stalled; !errors.Is(err, ledger.ErrTimeout) {
		t.Fatalf("the stalled callback: %v, want ledger.ErrTimeout", err)
	}
	wg.Wait()
	for i := range 6 {
		if errs[i] != nil || answers[i].Outcome != ledger.OutcomeApproved {
			t.Errorf("callback %d queued behind the lock: %+v, %v; want approved", i, answers[i], errs[i])
		}
	}
	if b, n := stats.Batches.Load(), stats.Batched.Load(); b != 1 || n != 6 {
		t.Errorf("%d batches of %d callbacks; want the 6 queued in one", b, n)
	}
	storetest.AssertBalances(t, db, "gl-0", "100", "0", "100")
	for n := 1; n <= 3; n++ {
		storetest.AssertBalances(t, db, fmt.Sprintf("gl-%d", n), "100", "4", "96")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := db.Authorize(ctx, authorizeParams("stalled", "k-stalled", "o-0", "src-0", "4.00"))
	if err != nil || a.Outcome != ledger.OutcomeApproved {
		t.Fatalf("the stalled callback sent again: %+v, %v; want approved", a, err)
	}
	storetest.AssertBalances(t, db, "gl-0", "100", "4", "96")
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitDeadlinePassedInTheQueue: callbacks whose deadline
// passes while they queue behind a busy lane are answered
// ledger.ErrTimeout and applied nowhere, without failing the batch of the
// one queued with time left, which is applied.
func TestGroupCommitDeadlinePassedInTheQueue(t *testing.T) {
	t.Parallel()
	db, url := laneDB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "gd-0", Owner: "o", Funds: "100", Source: "src"})
	db.SetGroupCommit(1)
	release, blocked := blockLane(t, db, url, "blocker", "o", "src")

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		ctx := short
		if i == 3 {
			ctx = context.Background()
		}
		wg.Go(func() {
			_, errs[i] = db.Authorize(ctx, authorizeParams(fmt.Sprintf("d-%d", i), fmt.Sprintf("kd-%d", i), "o", "src", "2.00"))
		})
	}
	stats := db.GroupCommit()
	wait.Until(t, "4 callbacks queued", func() bool { return stats.Queued.Load() == 4 })
	wait.Until(t, "the short deadline to pass", func() bool { return short.Err() != nil })
	release()
	wg.Wait()
	<-blocked
	for i := range 3 {
		if !errors.Is(errs[i], ledger.ErrTimeout) {
			t.Errorf("callback %d, deadline passed in the queue: %v, want ledger.ErrTimeout", i, errs[i])
		}
	}
	if errs[3] != nil {
		t.Errorf("callback 3, no deadline: %v", errs[3])
	}
	if n := stats.Fallbacks.Load(); n != 0 {
		t.Errorf("%d batches failed: the expired callbacks should have been left out, not sent", n)
	}
	storetest.AssertBalances(t, db, "gd-0", "100", "3", "97") // the blocker's 1.00 and d-3's 2.00
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitConcurrentCopiesNeverDeadlock: every callback sent three
// times at once (the service's retry racing its first send), on two lanes:
// copies meet in one batch, in two batches, and alone beside a batch, and
// no transaction ever deadlocks (one would fail a batch, or run a single
// callback twice), each key decided once.
func TestGroupCommitConcurrentCopiesNeverDeadlock(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	db := store.Wrap(pool, nil)
	fourAccounts(t, db, "gk", "1000")
	db.SetGroupCommit(2)
	ctx := context.Background()
	type sent struct {
		a   ledger.Answer
		err error
	}
	const payouts, copies = 40, 3
	var holds [payouts]string
	send := func(op func(i int) (ledger.Answer, error)) [payouts][copies]sent {
		var out [payouts][copies]sent
		var wg sync.WaitGroup
		for i := range payouts {
			for c := range copies {
				wg.Go(func() { a, err := op(i); out[i][c] = sent{a, err} })
			}
		}
		wg.Wait()
		return out
	}
	check := func(what string, out [payouts][copies]sent) {
		t.Helper()
		for i, cs := range out {
			for c, r := range cs {
				if r.err != nil || r.a.Outcome != "approved" || r.a.Runs != 1 || r.a.Reference != cs[0].a.Reference {
					t.Fatalf("%s %d copy %d: %+v %v (runs above 1: a deadlock or serialization failure)", what, i, c, r.a, r.err)
				}
			}
		}
	}
	const rounds = 4 // each a burst: the first copies alone, the rest in batches beside them
	for r := range rounds {
		auth := send(func(i int) (ledger.Answer, error) {
			return db.Authorize(ctx, authorizeParams(fmt.Sprintf("cp-%d-%d", r, i), fmt.Sprintf("ka-%d-%d", r, i), fmt.Sprintf("o-%d", i%4), fmt.Sprintf("src-%d", i%4), "1.00"))
		})
		check("authorize", auth)
		for i := range payouts {
			holds[i] = auth[i][0].a.Reference
		}
		check("capture", send(func(i int) (ledger.Answer, error) {
			return db.Capture(ctx, captureParams(fmt.Sprintf("cp-%d-%d", r, i), fmt.Sprintf("kc-%d-%d", r, i), holds[i]))
		}))
	}
	stats := db.GroupCommit()
	t.Logf("%d batches of %d callbacks (of %d), %d fallbacks", stats.Batches.Load(), stats.Batched.Load(), rounds*2*payouts*copies, stats.Fallbacks.Load())
	if stats.Fallbacks.Load() != 0 {
		t.Errorf("%d batches failed as a whole", stats.Fallbacks.Load())
	}
	for i := range 4 {
		storetest.AssertBalances(t, db, fmt.Sprintf("gk-%d", i), "960", "0", "960") // 4 rounds of 10 payouts of 1.00
	}
	storetest.AssertInvariants(t, db)
}

// TestGroupCommitLocksByKey: the statement that locks a batch's accounts
// reads accounts and holds by key in every plan Postgres may cache for it
// (generic or custom), on tables never analyzed (a new ledger, whose
// statistics are an empty table's while it fills) and on some thousands
// of rows: a scan of either would grow with the ledger, in every batch.
func TestGroupCommitLocksByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.DB(t)
	explain(t, pool, "empty tables")
	if _, err := pool.Exec(ctx, planSeed+`
INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at)
SELECT 'g-acct-' || a, 'g-own-' || a, 'USD', now(), now() FROM generate_series(1, 20000) a;
INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
SELECT 'hold_g' || h, 'pay-g' || h, 'g-acct-' || (h % 20000 + 1), 'src', 'USD', 1, now() FROM generate_series(1, 20000) h;
ANALYZE accounts, holds;`); err != nil {
		t.Fatal(err)
	}
	explain(t, pool, "seeded")
}

// explain fails t when a plan of the batch's locks scans accounts or holds.
func explain(t *testing.T, pool *pgxpool.Pool, tables string) {
	t.Helper()
	ctx := context.Background()
	{
		for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
			name := "locks_" + mode + "_" + strings.ReplaceAll(tables, " ", "_")
			conn, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var raw []byte
			_, err = conn.Exec(ctx, "SET plan_cache_mode = "+mode)
			if err == nil {
				_, err = conn.Exec(ctx, "PREPARE "+name+"(text[], text[]) AS "+store.BatchLocksSQL)
			}
			if err == nil {
				err = conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE "+name+"('{p-dst-1,p-dst-3}', '{hold_p1,hold_p2}')").Scan(&raw)
			}
			conn.Release()
			if err != nil {
				t.Fatal(err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal(raw, &plans); err != nil {
				t.Fatal(err)
			}
			if rel := scansOf(plans[0].Plan, []string{"accounts", "holds"}); rel != "" {
				t.Errorf("%s, %s: the batch's locks scan %s:\n%s", tables, mode, rel, raw)
			}
		}
	}
}
