package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/server"
)

// stormAcks is how many acknowledged answers the storm gives before the
// primary is killed, and again once ledgerd is ready after the failover.
const stormAcks = 200

// answer is one callback of the storm and what ledgerd answered.
type answer struct {
	endpoint string
	claims   map[string]any
	status   int
	outcome  string
	ref      string // the reference the answer carries
	at       time.Time
}

// refOf is the reference claim of each endpoint's answer.
var refOf = map[string]string{claims.Authorize: "holdReference", claims.Capture: "captureReference", claims.CreditAccount: "creditReference"}

// storm sends payout lifecycles (authorize, capture) and credits from
// workers, one account each, until stop is closed, and returns every
// answer; seen, when set, is called with each as it comes. Keys are unique:
// an answer is never a replay.
func storm(t *testing.T, b *bank, workers int, stop <-chan struct{}, seen func(answer)) []answer {
	var mu sync.Mutex
	var all []answer
	var wg sync.WaitGroup
	send := func(endpoint string, claims map[string]any) answer {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := b.cb.Send(ctx, endpoint, claims)
		a := answer{endpoint: endpoint, claims: claims, at: time.Now()}
		if err != nil {
			t.Errorf("%s: transport error from ledgerd: %v", endpoint, err)
			return a
		}
		a.status, a.outcome, a.ref = r.Status, r.Outcome(), r.Str(refOf[endpoint])
		mu.Lock()
		all = append(all, a)
		mu.Unlock()
		if seen != nil {
			seen(a)
		}
		return a
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acct, owner := fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("%d-%d", w, i)
				a := send(claims.Authorize, map[string]any{"payoutID": "p-" + id, "providerID": b.provider, "externalID": owner,
					"fundingSource": "src-" + acct, "fraudScore": 0.1, "idempotencyKey": "ka-" + id, "amount": usd("1.00")})
				if a.status == 200 && a.outcome == "approved" {
					send(claims.Capture, map[string]any{"payoutID": "p-" + id, "providerID": b.provider,
						"holdReference": a.ref, "idempotencyKey": "kc-" + id})
				}
				send(claims.CreditAccount, map[string]any{"requestID": "rq-" + id, "providerID": b.provider,
					"requesterExternalID": owner, "fundingDestination": "dst-" + acct, "idempotencyKey": "kr-" + id, "amount": usd("0.25")})
			}
		}()
	}
	wg.Wait()
	return all
}

// metric returns the value of a metric line of ledgerd's /metrics ("" if absent).
func metric(t *testing.T, admin, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// waitReady waits for /readyz to answer want and returns how long that took.
func waitReady(t *testing.T, admin string, want int) time.Duration {
	t.Helper()
	start := time.Now()
	wait.Until(t, fmt.Sprintf("/readyz to answer %d", want), func() bool {
		return get(t, "http://"+admin+"/readyz", nil) == want
	})
	return time.Since(start)
}

// TestFailover runs ledgerd on a multi-host URL over a primary and a
// synchronous streaming standby of the test's own, kills the primary
// (SIGKILL) under a storm of callbacks, fences it and promotes the standby,
// then restarts the old primary read-write beside the new one.
//
// It runs twice, one after the other: each callback committing alone
// (LEDGER_GROUP_COMMIT=0), and under group commit with two lanes (batches
// sharing a commit and its wait for the standby; the default's one lane is
// the case of the chaos run and TestAutoFailover).
func TestFailover(t *testing.T) {
	tooltest.SkipShort(t, "runs a primary and a synchronous standby of its own and fails over under a storm")
	t.Parallel()
	for _, group := range []string{"0", "2"} {
		t.Run("group-commit="+group, func(t *testing.T) { failover(t, group) })
	}
}

// failover is TestFailover with LEDGER_GROUP_COMMIT=group.
func failover(t *testing.T, group string) {
	if _, err := embedpg.FindBinaries(""); err != nil {
		t.Fatalf("the failover test runs Postgres servers of its own: %v", err)
	}
	root := t.TempDir() + "/cluster"
	if err := embedpg.MkdirServer(root); err != nil {
		t.Fatal(err)
	}
	primary := newPrimary(t, root, "standby1")
	standby := newStandby(t, root, primary, "standby1")
	primary.waitStreaming("standby1", true)
	if err := primary.exec("postgres", "CREATE DATABASE ledger"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("primary's log:%s\nstandby's log:%s", primary.tail(), standby.tail())
		}
	})

	waitsForAStandby(t, standby)

	secret, b64 := testSecret()
	dbURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/ledger?target_session_attrs=read-write&sslmode=disable", primary.port, standby.port)
	var log syncbuf.Buffer
	addrs, failed := launch(t, config(t, "DATABASE_URL", dbURL, "LEDGER_PROVIDER_ID", "bank-f", "LEDGER_SIGNING_SECRETS", b64,
		"LEDGER_RECONCILE_EVERY", "0", "LEDGER_GROUP_COMMIT", group), &log)
	var d daemon
	select {
	case a := <-addrs:
		d.callbacks, d.admin = a[0], a[1]
	case err := <-failed:
		t.Fatalf("ledgerd did not start: %v\n%s", err, log.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("ledgerd's log:\n%s", tail(log.String(), 60))
		}
	}()
	b := newBank(t, &d, "bank-f", secret, "")
	const workers = 6
	for w := range workers {
		b.customer(fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w), "100000.00")
	}

	stalledStandbyWithholds(t, b, &d, primary, standby)

	all, killed, promoted, readyAfter := failOverUnderStorm(t, b, &d, primary, standby, workers)

	counts, firstAfter := onlyRetryableUntilRecovered(t, all, promoted)
	t.Logf("failover under %d workers: %d answers %v; primary killed, fenced and the standby promoted %s later; first 200 %s after the promotion; ready again %s after it",
		workers, len(all), counts, promoted.Sub(killed).Round(time.Millisecond), firstAfter.Sub(promoted).Round(time.Millisecond),
		readyAfter.Round(time.Millisecond))
	if got := metric(t, d.admin, "ledgerd_db_primary_changes_total"); got != "1" {
		t.Errorf("ledgerd_db_primary_changes_total = %q, want 1", got)
	}

	acked := resendAcknowledged(t, b, all, workers)
	t.Logf("all %d acknowledged callbacks answer the same after the failover", acked)
	for w := range workers {
		b.lifecycle(fmt.Sprintf("after-%d", w), fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w))
	}

	splitBrainRefused(t, b, &d, primary, &log, workers)
}

// onlyRetryableUntilRecovered checks that the storm's answers were 200,
// 408, 429 or 503 only, and that a callback succeeded after the promotion
// (ledgerd recovered without a restart); it returns the answers by status
// and the first 200 after the promotion.
func onlyRetryableUntilRecovered(t *testing.T, all []answer, promoted time.Time) (map[int]int, time.Time) {
	t.Helper()
	counts := map[int]int{}
	var firstAfter time.Time
	for _, a := range all {
		counts[a.status]++
		if a.status == 200 && a.at.After(promoted) && (firstAfter.IsZero() || a.at.Before(firstAfter)) {
			firstAfter = a.at
		}
		if a.status != 200 && a.status != 408 && a.status != 429 && a.status != 503 {
			t.Errorf("%s answered %d during the failover", a.endpoint, a.status)
		}
	}
	if firstAfter.IsZero() {
		t.Fatalf("no callback succeeded after the promotion: %v", counts)
	}
	return counts, firstAfter
}

// waitsForAStandby: a ledgerd given the standby alone waits for it to
// become a primary, saying why, rather than serving 503s.
func waitsForAStandby(t *testing.T, standby *pgNode) {
	t.Helper()
	var wlog syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	_, b64 := testSecret()
	go func() {
		done <- server.Run(ctx, config(t, "DATABASE_URL", standby.url("postgres"), "LEDGER_PROVIDER_ID", "bank-s", "LEDGER_SIGNING_SECRETS", b64),
			slog.New(slog.NewJSONHandler(&wlog, nil)), server.Hooks{Started: func(string, string) { t.Error("ledgerd started on a standby") }})
	}()
	wait.Until(t, "a wait for a read-only database logged", func() bool { return strings.Contains(wlog.String(), "read-only (a standby)") })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopped while waiting: %v", err)
	}
}

// stalledStandbyWithholds: with the synchronous standby stalled, a commit
// that waits past the request deadline is cancelled, committed locally
// and not replicated; ledgerd acknowledges neither it nor the retry, and
// answers the retry once the standby is back.
func stalledStandbyWithholds(t *testing.T, b *bank, d *daemon, primary, standby *pgNode) {
	t.Helper()
	// A stalled synchronous standby: a commit that waits past the request
	// deadline is cancelled, committed locally and not replicated; ledgerd
	// must not acknowledge it.
	standby.signal(syscall.SIGSTOP)
	r, err := b.authorize(context.Background(), "p-stall", "k-stall", "acc-f0", "owner-f0", "1.00")
	if err != nil || r.Status != http.StatusServiceUnavailable {
		standby.signal(syscall.SIGCONT)
		t.Fatalf("authorize while the synchronous standby is stalled: %+v %v, want 503", r, err)
	}
	// The service's retry while the standby is still stalled: the stored
	// answer is not replicated either.
	r, err = b.authorize(context.Background(), "p-stall", "k-stall", "acc-f0", "owner-f0", "1.00")
	standby.signal(syscall.SIGCONT)
	if err != nil || r.Status == 200 {
		t.Fatalf("the retry while the synchronous standby is stalled: %+v %v, want no acknowledgement", r, err)
	}
	if got := metric(t, d.admin, `ledgerd_unreplicated_answers_withheld_total`); got == "" || got == "0" {
		t.Errorf("ledgerd_unreplicated_answers_withheld_total = %q, want at least 1", got)
	}
	primary.waitStreaming("standby1", true)
	r, err = b.authorize(context.Background(), "p-stall", "k-stall", "acc-f0", "owner-f0", "1.00")
	if err != nil || r.Status != 200 || r.Outcome() != "approved" {
		t.Fatalf("the retry once the standby is back: %+v %v", r, err)
	}
	b.must(200, "GET", "/v1/holds/"+r.Str("holdReference"), nil)
}

// failOverUnderStorm runs a storm of callbacks through b, kills the
// primary under it once the storm has acknowledged stormAcks answers, fences
// it and promotes the standby; the storm goes on until ledgerd is ready
// again and has acknowledged stormAcks more answers. It returns every
// answer, when the primary was killed and the standby promoted, and how
// long after the promotion /readyz answered 200.
func failOverUnderStorm(t *testing.T, b *bank, d *daemon, primary, standby *pgNode, workers int) (all []answer, killed, promoted time.Time, readyAfter time.Duration) {
	t.Helper()
	// The storm; the primary dies under it.
	var acks atomic.Int64
	seen := func(a answer) {
		if a.status == 200 {
			acks.Add(1)
		}
	}
	stop := make(chan struct{})
	answers := make(chan []answer, 1)
	go func() { answers <- storm(t, b, workers, stop, seen) }()
	finish := sync.OnceValue(func() []answer { close(stop); return <-answers })
	defer finish() // a failed wait still ends the storm before the test does
	wait.Until(t, "the storm's first acknowledged answers", func() bool { return acks.Load() >= stormAcks })
	killed = time.Now()
	primary.killPostmaster()
	// A real-time delay on purpose: the failover manager's detection delay,
	// during which the orphaned backends of the old primary live on and the
	// storm runs into them.
	time.Sleep(300 * time.Millisecond)
	primary.kill() // fence: no process of the old primary is left
	if err := standby.exec("postgres", "SELECT pg_promote(true, 60)"); err != nil {
		t.Fatal(err)
	}
	promoted = time.Now()
	// Callbacks go on until ledgerd answers again (measured), then until
	// the storm has acknowledged stormAcks more answers.
	for time.Since(promoted) < 30*time.Second {
		if resp, err := http.Get("http://" + d.admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				readyAfter = time.Since(promoted)
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if readyAfter == 0 {
		t.Errorf("ledgerd was not ready within 30 s of the promotion")
	} else {
		after := acks.Load()
		wait.Until(t, "acknowledged answers after the failover", func() bool { return acks.Load() >= after+stormAcks })
	}
	return finish(), killed, promoted, readyAfter
}

// splitBrainRefused: the old primary comes back read-write beside the new
// one; ledgerd turns not ready, counts and logs the split brain, writes
// nothing to the old primary, and is ready again once it is fenced.
func splitBrainRefused(t *testing.T, b *bank, d *daemon, primary *pgNode, log *syncbuf.Buffer, workers int) {
	t.Helper()
	primary.start()
	noticed := waitReady(t, d.admin, http.StatusServiceUnavailable)
	if got := metric(t, d.admin, "ledgerd_db_split_brains_total"); got != "1" {
		t.Errorf("ledgerd_db_split_brains_total = %q, want 1", got)
	}
	for w := range workers {
		b.lifecycle(fmt.Sprintf("split-%d", w), fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w))
	}
	var onOld int
	if err := primary.scalar("ledger", `SELECT count(*) FROM holds WHERE payout_id LIKE 'p-split-%' OR payout_id LIKE 'p-after-%'`, &onOld); err != nil {
		t.Fatal(err)
	}
	if onOld != 0 {
		t.Fatalf("%d holds written to the old primary after the failover", onOld)
	}
	if !strings.Contains(log.String(), "split brain") {
		t.Error("the split brain was not logged")
	}
	primary.kill() // fenced again
	cleared := waitReady(t, d.admin, http.StatusOK)
	t.Logf("split brain: the old primary restarted read-write was refused, /readyz failed %s after its start and recovered %s after it was stopped",
		noticed.Round(time.Millisecond), cleared.Round(time.Millisecond))
}

// resendAcknowledged sends every callback answered 200 again, from workers,
// and fails the test unless each answers the same (outcome and reference):
// nothing acknowledged was lost, and nothing is applied twice. It returns
// how many there were.
func resendAcknowledged(t *testing.T, b *bank, all []answer, workers int) int {
	t.Helper()
	var lost atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan answer)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range jobs {
				r, err := b.cb.Send(context.Background(), a.endpoint, a.claims)
				if err != nil {
					t.Errorf("acknowledged %s %v: resending it: %v", a.endpoint, a.claims["idempotencyKey"], err)
					continue
				}
				if r.Status != 200 || r.Outcome() != a.outcome || r.Str(refOf[a.endpoint]) != a.ref {
					if lost.Add(1) <= 10 {
						t.Errorf("acknowledged %s %v at %s (%s %s) answers now %d %s %s",
							a.endpoint, a.claims["idempotencyKey"], a.at.Format("15:04:05.000"), a.outcome, a.ref,
							r.Status, r.Outcome(), r.Str(refOf[a.endpoint]))
					}
				}
			}
		}()
	}
	acked := 0
	for _, a := range all {
		if a.status == 200 {
			acked++
			jobs <- a
		}
	}
	close(jobs)
	wg.Wait()
	if n := lost.Load(); n > 0 {
		t.Fatalf("%d of %d acknowledged callbacks lost or changed across the failover", n, acked)
	}
	return acked
}
