package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store"
)

// haRun is ledgerd on a formation under a storm, and what the test saw of
// it: the time of the latest 200, /readyz's answers.
type haRun struct {
	t      *testing.T
	f      *formation
	b      *bank
	admin  string
	lastOK atomic.Int64 // UnixNano of the latest 200
	mu     sync.Mutex
	ready  []readySample
}

type readySample struct {
	at     time.Time
	status int
}

// haEvent is what one event cost: the time without a 200 around it, and
// from the promotion to the first 200 after it.
type haEvent struct {
	name             string
	at, promoted     time.Time
	silent, toFirst  time.Duration
	notReady         bool
	primaryChangesAt int
}

// TestAutoFailover runs ledgerd on a pg_auto_failover formation (a monitor
// and two nodes, the monitor tuned as docs/high-availability.md says) under
// a storm of callbacks, through the primary node crashing (keeper and
// Postgres killed), the old primary coming back as a secondary, and a
// planned switchover back to it. The monitor alone decides and promotes;
// ledgerd is never restarted. Every answer is 200 or retryable, every
// acknowledged callback answers the same afterwards, the ledger's
// invariants hold on the last primary, /readyz and
// ledgerd_db_primary_changes_total follow the events, a reconciliation of
// the last primary against a fake of the service that knows every
// acknowledged payout and credit finds nothing, and the time without
// answers per event is logged.
func TestAutoFailover(t *testing.T) {
	tooltest.SkipShort(t, "runs a pg_auto_failover formation and fails it over three times under a storm")
	f := newFormation(t)
	secret, b64 := testSecret()
	var log syncbuf.Buffer
	addrs, failed := launch(t, config(t, "DATABASE_URL", f.url(), "LEDGER_PROVIDER_ID", "bank-ha", "LEDGER_SIGNING_SECRETS", b64,
		"LEDGER_RECONCILE_EVERY", "0"), &log)
	var d daemon
	select {
	case a := <-addrs:
		d.callbacks, d.admin = a[0], a[1]
	case err := <-failed:
		t.Fatalf("ledgerd did not start: %v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ledgerd's log:\n%s\nthe monitor's decisions:\n%s", tail(log.String(), 40), f.decisions())
		}
	})
	h := &haRun{t: t, f: f, b: newBank(t, &d, "bank-ha", secret, ""), admin: d.admin}
	const workers = 6
	for w := range workers {
		h.b.customer(fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w), "100000.00")
	}
	stop, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go h.watchReady(done)
	answers := make(chan []answer, 1)
	go func() {
		answers <- storm(t, h.b, workers, stop, func(a answer) {
			if a.status == 200 {
				h.lastOK.Store(a.at.UnixNano())
			}
		})
	}()
	h.waitAnswered(time.Now())

	events := []*haEvent{h.crash(), h.rejoin(), h.switchover()}
	close(stop)
	all := <-answers
	h.check(all, events, workers)
}

// crash kills the primary node (node1) under the storm; the monitor
// promotes node2.
func (h *haRun) crash() *haEvent {
	e := &haEvent{name: "primary crash", at: time.Now()}
	promoted := h.f.watchPromotion("node2")
	h.f.crash(h.f.nodes[0])
	e.promoted = <-promoted
	h.waitAnswered(e.promoted)
	h.waitPrimaryChanges(1)
	e.primaryChangesAt = 1
	return e
}

// rejoin runs the crashed node's keeper again: it comes back as the
// secondary; node2 stays the primary.
func (h *haRun) rejoin() *haEvent {
	e := &haEvent{name: "old primary back", at: time.Now()}
	h.f.restart(h.f.nodes[0])
	h.f.waitStates(3*time.Minute, map[string]string{"node1": "secondary", "node2": "primary"})
	e.promoted = e.at // no promotion: the primary stays
	h.waitAnswered(time.Now())
	e.primaryChangesAt = 1
	return e
}

// switchover is the planned `pg_autoctl perform switchover`: node1 is the
// primary again.
func (h *haRun) switchover() *haEvent {
	h.f.settle(h.f.nodes[1])
	e := &haEvent{name: "planned switchover", at: time.Now()}
	promoted := h.f.watchPromotion("node1")
	h.f.switchover()
	e.promoted = <-promoted
	h.waitAnswered(e.promoted)
	h.waitPrimaryChanges(2)
	e.primaryChangesAt = 2
	h.f.waitStates(time.Minute, map[string]string{"node1": "primary", "node2": "secondary"})
	return e
}

// watchPromotion reports when node's Postgres first commits a write (the
// promotion as a client sees it: a promoted node still waiting for a
// synchronous standby holds its commits until the monitor lets it go on
// alone), or the zero time when it does not within a minute.
func (f *formation) watchPromotion(node string) <-chan time.Time {
	var port int
	for _, n := range f.nodes {
		if n.name == node {
			port = n.port
		}
	}
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=1&target_session_attrs=read-write", port)
	ch := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if writable(url) {
				ch <- time.Now()
				return
			}
		}
		ch <- time.Time{}
	}()
	return ch
}

// writable tells whether the server at url commits a write within a
// second: txid_current() gives the transaction an ID, so its commit waits
// for the synchronous standby when one is required. The deadline closes
// the connection (pgx's default), so a commit still waiting is not taken
// for one made.
func writable(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, "SELECT txid_current()")
	return err == nil
}

// waitAnswered waits for a 200 answered after since.
func (h *haRun) waitAnswered(since time.Time) {
	h.t.Helper()
	if since.IsZero() {
		h.t.Fatal("no promotion seen within a minute")
	}
	wait.Until(h.t, "a callback answered 200 after "+since.Format(time.RFC3339Nano), func() bool {
		return h.lastOK.Load() > since.UnixNano()
	})
}

// waitPrimaryChanges waits for ledgerd_db_primary_changes_total to reach n.
func (h *haRun) waitPrimaryChanges(n int) {
	h.t.Helper()
	wait.Until(h.t, fmt.Sprintf("ledgerd_db_primary_changes_total = %d", n), func() bool {
		v, _ := strconv.Atoi(metric(h.t, h.admin, "ledgerd_db_primary_changes_total"))
		if v > n {
			h.t.Fatalf("ledgerd_db_primary_changes_total = %d, want %d", v, n)
		}
		return v == n
	})
}

// watchReady samples /readyz until done is closed.
func (h *haRun) watchReady(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
		status := 0
		if resp, err := http.Get("http://" + h.admin + "/readyz"); err == nil {
			resp.Body.Close()
			status = resp.StatusCode
		}
		h.mu.Lock()
		h.ready = append(h.ready, readySample{time.Now(), status})
		h.mu.Unlock()
	}
}

// check asserts the storm's answers and logs each event's figures.
func (h *haRun) check(all []answer, events []*haEvent, workers int) {
	t := h.t
	counts := map[int]int{}
	var oks []time.Time
	for _, a := range all {
		counts[a.status]++
		if a.status == 200 {
			oks = append(oks, a.at)
		} else if a.status != 408 && a.status != 429 && a.status != 503 {
			t.Errorf("%s answered %d (not retryable) during the events", a.endpoint, a.status)
		}
	}
	slices.SortFunc(oks, func(a, b time.Time) int { return a.Compare(b) })
	h.mu.Lock()
	ready := slices.Clone(h.ready)
	h.mu.Unlock()
	for i, e := range events {
		end := time.Now()
		if i+1 < len(events) {
			end = events[i+1].at
		}
		e.silent, e.toFirst = silence(oks, e.at, end), firstAfter(oks, e.promoted).Sub(e.promoted)
		for _, s := range ready {
			e.notReady = e.notReady || (s.at.After(e.at) && s.at.Before(end) && s.status != 200)
		}
		promotion := "no promotion"
		if e.promoted != e.at {
			promotion = fmt.Sprintf("promoted %s after the event, first 200 %s after the promotion",
				e.promoted.Sub(e.at).Round(10*time.Millisecond), e.toFirst.Round(time.Millisecond))
		}
		t.Logf("%s (at %s): longest time without a 200 %s; %s; /readyz not ready meanwhile: %t",
			e.name, e.at.Format("15:04:05.000"), e.silent.Round(10*time.Millisecond), promotion, e.notReady)
	}
	if !events[0].notReady {
		t.Error("/readyz never answered not ready while the primary was down")
	}
	// The demoted primary can answer read-write for a while after the
	// promotion (the monitor lets the new primary go on after its demote
	// timeout, not once the old one has stopped): ledgerd refuses it and is
	// not ready until store.SplitBrainWindow after it last answered.
	since := time.Now()
	wait.Until(t, "/readyz to answer 200 after the events", func() bool {
		status, _ := readyz(t, &daemon{admin: h.admin})
		return status == 200
	})
	if last := ready[len(ready)-1]; last.status != 200 {
		t.Logf("/readyz answered %d at the end of the events; 200 %s later", last.status, time.Since(since).Round(10*time.Millisecond))
	}
	acked := resendAcknowledged(t, h.b, all, workers)
	t.Logf("%d answers %v; all %d acknowledged callbacks answer the same afterwards", len(all), counts, acked)
	db, err := store.Open(context.Background(), h.f.url(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	violations, err := db.CheckInvariants(context.Background())
	if err != nil || len(violations) > 0 {
		t.Fatalf("the ledger's invariants on the last primary: %v %v", violations, err)
	}
	h.reconcile(db, all, workers)
}

// reconcile runs a reconciliation of the last primary against a fake of
// the service that knows every payout and credit the storm acknowledged
// (a payout completed when its capture was acknowledged), and requires it
// clean: an acknowledged effect lost or applied twice is a finding.
func (h *haRun) reconcile(db *store.DB, all []answer, workers int) {
	a := acknowledged(all)
	rep := reconcileWithService(h.t, db, a, workers)
	counts := requireClean(h.t, rep)
	h.t.Logf("reconciliation against the service (%d authorized payouts, %d of them captured, %d credits): status %s, %d findings %v",
		len(a.authorized), len(a.captured), len(a.credited), rep.Status, len(rep.Findings), counts)
}

// silence is the longest gap between consecutive 200s (sorted oks) that
// overlaps [from, to).
func silence(oks []time.Time, from, to time.Time) time.Duration {
	var longest time.Duration
	for i := 1; i < len(oks); i++ {
		if oks[i].After(from) && oks[i-1].Before(to) {
			longest = max(longest, oks[i].Sub(oks[i-1]))
		}
	}
	return longest
}

// firstAfter is the first 200 after at.
func firstAfter(oks []time.Time, at time.Time) time.Time {
	for _, ok := range oks {
		if ok.After(at) {
			return ok
		}
	}
	return time.Time{}
}
