package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The retry policy of the service (spec, "Ledger callbacks hosted by the
// provider"): 408, 429, 5xx and transport errors are retried with the same
// key; other 4xx are terminal. The service retries for hours; a storm gives
// a request up after maxAttempts or its give-up time (--give-up-after,
// defaultGiveUpAfter) so the others go on, and at the end of the phase
// resends each one it gave up under the same key until it is answered
// (for --resolve-timeout at most): see runner.resolve.
const (
	maxAttempts   = 30
	backoffBase   = 20 * time.Millisecond
	backoffMax    = time.Second
	retryAfterMax = 5 * time.Second
)

var endpoints = []string{claims.Authorize, claims.Capture, claims.Release, claims.CreditAccount}

// endpointIndex is the position of an endpoint in endpoints.
func endpointIndex(ep string) int { return slices.Index(endpoints, ep) }

const numEndpoints = 4

// endpointStats counts one endpoint's traffic over the whole run. The
// runner's mutex guards it.
type endpointStats struct {
	requests  int // logical requests (idempotency keys sent)
	sent      int // HTTP attempts
	ok        int // 200 answers
	retried   int // attempts that retried a lost or retryable answer
	givenUp   int // requests given up after retries, then resent
	resolved  int // of those, answered once resent
	replays   int // deliberate repeats: duplicates and concurrent second sends
	dropped   int // answers discarded as lost
	statuses  map[int]int
	transport int
	// hist holds the latency of every measured attempt in microseconds
	// (see runner.attempt).
	hist        *hdrhistogram.Histogram
	first, last time.Time
}

// loop is how requests are started.
type loop struct {
	// conc closed-loop workers, each sending its next request when the
	// last is answered; used when rate is 0.
	conc int
	// rate > 0: open loop. Requests are started at rate per second whatever
	// is in flight (up to maxInflight), and each request's first attempt is
	// measured from its intended send time, so time spent queued behind a
	// slow ledgerd counts (no coordinated omission).
	rate        float64
	maxInflight int
}

// errAbort carries why a run stopped before its end: a refusal that every
// later request would get as well.
type errAbort struct{ err error }

func (e errAbort) Error() string { return e.err.Error() }
func (e errAbort) Unwrap() error { return e.err }

// runner sends plans and remembers what was answered: the counts, the
// latencies, the timeline, and in the model what the ledger must now hold.
type runner struct {
	client *caller.Client
	loop   loop
	model  *model
	abort  context.CancelCauseFunc // set by run
	// giveUpAfter bounds the retries of one send during the storm;
	// resolveFor how long the requests given up are resent afterwards.
	giveUpAfter, resolveFor time.Duration
	logf                    func(format string, a ...any)
	// deadline, when set (--duration), is when no more requests start:
	// stop is closed then (see window.go); unsent counts the requests
	// withdrawn.
	deadline time.Time
	stop     chan struct{}
	unsent   atomic.Int64

	mu    sync.Mutex
	stats [numEndpoints]*endpointStats
	tl    *timeline
	all   *hdrhistogram.Histogram // every measured attempt, for progress
	// answers keeps the first 200 answer to each key that the delivery plan
	// sends more than once (no other key can be answered 200 twice).
	answers map[string]*keyAnswers
	// lastGiveUp is the last answer of each request given up, by key.
	lastGiveUp map[string]string
	problems   []string // failures of the storm itself
	nProblem   int
	// pending are the requests of the current phase given up after
	// retries, to be resent by resolve; unresolved counts those still
	// unanswered after it.
	pending    []request
	unresolved int
	phases     [numPhases]time.Duration
	// authorizeRate is the 200 answers to authorize per second of the
	// authorize phases, which send nothing else.
	authorizeOK   int
	authorizeTime time.Duration

	lastOK atomic.Int64 // UnixNano of the end of the latest 200 answer
	done   atomic.Int64 // logical requests finished
	total  atomic.Int64 // logical requests planned so far
	round  atomic.Int64
	phase  atomic.Int64
}

// keyAnswers is what one idempotency key was answered.
type keyAnswers struct {
	first string // canonical JSON of the first 200 answer's service claims
	n     int
	diff  string // the first answer that differs, if any
}

func newRunner(client *caller.Client, l loop, m *model, start time.Time) *runner {
	x := &runner{client: client, loop: l, model: m, tl: newTimeline(start), all: newHist(), answers: map[string]*keyAnswers{}, lastGiveUp: map[string]string{},
		giveUpAfter: defaultGiveUpAfter, resolveFor: defaultResolveTimeout, logf: func(string, ...any) {}}
	for i := range x.stats {
		x.stats[i] = &endpointStats{statuses: map[int]int{}, hist: newHist()}
	}
	if x.model == nil {
		x.model = newModel("")
	}
	return x
}

const maxListed = 50

func (x *runner) fail(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.nProblem++
	if len(x.problems) < maxListed {
		x.problems = append(x.problems, fmt.Sprintf(format, args...))
	}
}

// attempt records one HTTP attempt that ended at end. measured attempts
// (those whose answer the caller read) go into the latency histograms, from
// start, which for the first attempt of an open-loop request is its
// intended send time.
func (x *runner) attempt(ep string, start, end time.Time, status int, transportErr, measured bool) {
	lat := end.Sub(start).Microseconds()
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.stats[endpointIndex(ep)]
	s.sent++
	if s.first.IsZero() || start.Before(s.first) {
		s.first = start
	}
	if end.After(s.last) {
		s.last = end
	}
	switch {
	case transportErr:
		s.transport++
	default:
		s.statuses[status]++
		if status == http.StatusOK {
			s.ok++
			x.lastOK.Store(end.UnixNano())
		}
	}
	if measured {
		_ = s.hist.RecordValue(max(lat, 1))
		_ = x.all.RecordValue(max(lat, 1))
	}
	x.tl.attempt(endpointIndex(ep), end, status, transportErr, measured, lat)
}

func (x *runner) count(ep string, f func(s *endpointStats)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f(x.stats[endpointIndex(ep)])
}

// run sends every phase of p in turn. It returns ctx's error, or the cause
// of an abort.
func (x *runner) run(ctx context.Context, p Plan) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	x.abort = cancel
	x.round.Store(int64(p.Header.Round))
	x.total.Add(int64(len(p.Requests)))
	rs := &roundState{finals: map[int]string{}}
	for ph := range numPhases {
		var reqs []request
		for _, r := range p.Requests {
			if r.Phase == ph {
				reqs = append(reqs, r)
			}
		}
		x.phase.Store(int64(ph))
		if x.stopped() {
			x.withdraw(reqs)
			continue
		}
		start := time.Now()
		if x.loop.rate > 0 {
			x.openLoop(ctx, rs, reqs)
		} else {
			x.closedLoop(ctx, rs, reqs)
		}
		x.resolve(ctx, rs)
		took := time.Since(start)
		x.mu.Lock()
		x.phases[ph] += took
		if ph == phaseAuthorize {
			x.authorizeTime += took
		}
		x.mu.Unlock()
		if ctx.Err() != nil {
			if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
				return c
			}
			return ctx.Err()
		}
	}
	return nil
}

func (x *runner) closedLoop(ctx context.Context, rs *roundState, reqs []request) {
	work := make(chan request)
	var wg sync.WaitGroup
	for range min(x.loop.conc, max(len(reqs), 1)) {
		wg.Go(func() {
			for r := range work {
				x.deliver(ctx, rs, r, time.Time{})
			}
		})
	}
feed:
	for i, r := range reqs {
		select {
		case work <- r:
		case <-x.stop:
			x.withdraw(reqs[i:])
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
}

// openLoop starts request i at start + i/rate, whatever is in flight, up to
// maxInflight at once. When that many are in flight the next start waits,
// but its latency still counts from its intended time.
func (x *runner) openLoop(ctx context.Context, rs *roundState, reqs []request) {
	interval := time.Duration(float64(time.Second) / x.loop.rate)
	sem := make(chan struct{}, max(x.loop.maxInflight, 1))
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range reqs {
		intended := start.Add(time.Duration(i) * interval)
		if d := time.Until(intended); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-x.stop:
			case <-ctx.Done():
			}
			t.Stop()
		}
		if x.stopped() {
			x.withdraw(reqs[i:])
			break
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		case <-x.stop:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if x.stopped() {
			x.withdraw(reqs[i:])
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			x.deliver(ctx, rs, r, intended)
		})
	}
	wg.Wait()
}

// roundState is what one round's requests need from each other: the
// reference each first attempt was answered (second attempts must answer
// the same).
type roundState struct {
	mu     sync.Mutex
	finals map[int]string // seq → reference of the answer acted on
}

func scopeOf(r request) string {
	if p, _ := r.Service["payoutID"].(string); p != "" {
		return p
	}
	if r.Endpoint == claims.Release {
		h, _ := r.Service["holdReference"].(string)
		return h
	}
	return ""
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// deliver sends one logical request as its delivery plan says and checks the
// answer the caller acts on. intended is the open loop's send time (zero in
// a closed loop).
func (x *runner) deliver(ctx context.Context, rs *roundState, r request, intended time.Time) {
	defer x.done.Add(1)
	svc := clone(r.Service)
	if r.HoldOf != "" {
		ref := x.model.holdRef(r.HoldOf)
		if ref == "" {
			x.model.unsettled(r)
			x.fail("seq %d %s: payout %s has no approved hold; not sent", r.Seq, r.Endpoint, r.HoldOf)
			return
		}
		svc["holdReference"] = ref
	}
	r.Service = svc
	x.count(r.Endpoint, func(s *endpointStats) { s.requests++ })
	multi := r.Delivery.Drop || r.Delivery.Concurrent || r.Delivery.Duplicate
	if r.Delivery.Drop {
		x.dropped(ctx, r)
		intended = time.Time{} // the next send is a retry, measured from its own start
	}
	var final map[string]any
	var gaveUp bool
	if r.Delivery.Concurrent {
		var wg sync.WaitGroup
		var second map[string]any
		var gaveUp2 bool
		wg.Go(func() { final, gaveUp = x.send(ctx, r, r.Delivery.Drop, intended, multi) })
		wg.Go(func() { second, gaveUp2 = x.send(ctx, r, r.Delivery.Drop, intended, multi) })
		wg.Wait()
		x.count(r.Endpoint, func(s *endpointStats) { s.replays++ })
		if final == nil {
			final, gaveUp = second, gaveUp || gaveUp2
		}
	} else {
		final, gaveUp = x.send(ctx, r, r.Delivery.Drop, intended, multi)
	}
	if final == nil {
		if gaveUp {
			x.giveUp(r)
		}
		return // else send recorded why
	}
	if r.Delivery.Duplicate {
		x.count(r.Endpoint, func(s *endpointStats) { s.replays++ })
		x.send(ctx, r, false, time.Time{}, multi)
	}
	x.expect(rs, r, final)
}

// dropped sends r once and discards the answer, as a caller whose
// connection broke would: half the time by a client-side timeout that may
// fire before or after ledgerd commits, half the time by ignoring a full
// answer. A 200 answer still counts for the replay-consistency check.
func (x *runner) dropped(ctx context.Context, r request) {
	actx := ctx
	if r.Seq%2 == 1 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, time.Duration(200+rand.IntN(9800))*time.Microsecond)
		defer cancel()
	}
	start := time.Now()
	reply, err := x.client.Send(actx, r.Endpoint, r.Service)
	end := time.Now()
	if ctx.Err() != nil {
		return
	}
	if reply == nil {
		// Timed out by the caller (or a real transport error): either way
		// an attempt whose answer is lost, not counted as a status.
		x.count(r.Endpoint, func(s *endpointStats) { s.sent++ })
	} else {
		x.attempt(r.Endpoint, start, end, reply.Status, false, false)
	}
	x.count(r.Endpoint, func(s *endpointStats) { s.dropped++ })
	x.mu.Lock()
	x.tl.dropped(end)
	x.mu.Unlock()
	if err == nil && reply.Status == http.StatusOK {
		x.record(r, reply.Service)
	}
}

func statusOr(r *caller.Reply) int {
	if r == nil {
		return 0
	}
	return r.Status
}

// send delivers r under the retry policy and returns the opened service
// claims of the 200 answer. Without one it returns nil and whether it gave
// r up after retries (the caller then queues it for resolve); any other
// reason is recorded as a failure. retrying says the first attempt is
// already a retry (its answer was lost); intended, when set, is the open
// loop's send time of the first attempt; keep says the answer is kept for
// the replay-consistency check.
func (x *runner) send(ctx context.Context, r request, retrying bool, intended time.Time, keep bool) (map[string]any, bool) {
	return x.sendUntil(ctx, r, sendBounds{retrying: retrying, intended: intended, keep: keep,
		deadline: time.Now().Add(x.giveUpAfter), attempts: maxAttempts})
}

// sendBounds are the options of one sendUntil.
type sendBounds struct {
	retrying, keep bool
	intended       time.Time
	deadline       time.Time // no attempt starts after it
	attempts       int       // 0: no bound but deadline
}

func (x *runner) sendUntil(ctx context.Context, r request, b sendBounds) (map[string]any, bool) {
	var last string
	for attempt := 0; b.attempts == 0 || attempt < b.attempts; attempt++ {
		if attempt > 0 || b.retrying {
			x.count(r.Endpoint, func(s *endpointStats) { s.retried++ })
			x.mu.Lock()
			x.tl.retry(time.Now())
			x.mu.Unlock()
		}
		start := time.Now()
		if attempt == 0 && !b.intended.IsZero() {
			start = b.intended
		}
		reply, err := x.client.Send(ctx, r.Endpoint, r.Service)
		end := time.Now()
		if ctx.Err() != nil {
			return nil, false
		}
		x.attempt(r.Endpoint, start, end, statusOr(reply), err != nil && reply == nil, true)
		var wait time.Duration
		switch {
		case err != nil && reply != nil:
			// A 200 whose answer does not open or is not a proper response:
			// the caller cannot trust it, and a retry would get the same.
			x.fail("seq %d %s: status %d with an unusable answer: %v", r.Seq, r.Endpoint, reply.Status, err)
			return nil, false
		case err != nil:
			last = "transport error: " + err.Error()
		case reply.Status == http.StatusOK:
			if b.keep {
				x.record(r, reply.Service)
			}
			return reply.Service, false
		case reply.Retryable():
			last = fmt.Sprintf("status %d %s", reply.Status, problemType(reply))
			if s, perr := strconv.Atoi(strings.TrimSpace(reply.RetryAfter)); perr == nil && s >= 0 {
				wait = min(time.Duration(s)*time.Second, retryAfterMax)
			}
		default:
			x.terminal(r, reply)
			return nil, false
		}
		if !x.backoff(ctx, attempt, wait, b.deadline) {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, false
	}
	x.mu.Lock()
	x.lastGiveUp[str(r.Service, "idempotencyKey")] = last
	x.mu.Unlock()
	return nil, true
}

// backoff waits before the next attempt: exponential with jitter, at least
// wait (a Retry-After). It returns false when the next attempt would start
// after deadline, or ctx ended.
func (x *runner) backoff(ctx context.Context, attempt int, wait time.Duration, deadline time.Time) bool {
	backoff := min(backoffBase<<min(attempt, 10), backoffMax)
	backoff = backoff/2 + rand.N(backoff/2+1)
	wait = max(wait, backoff)
	if time.Now().Add(wait).After(deadline) {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// terminal records a terminal answer. Two refusals say that every request
// of the run would be refused the same way: another provider (403) and a
// key ledgerd does not know (400 undecryptable); they abort the run with
// what to do.
func (x *runner) terminal(r request, reply *caller.Reply) {
	pt := problemType(reply)
	switch {
	case reply.Status == http.StatusForbidden && strings.HasSuffix(pt, "wrong-provider") && x.abort != nil:
		x.abort(errAbort{fmt.Errorf("ledgerd refuses provider %q (403 wrong-provider): set --provider-id to its LEDGER_PROVIDER_ID",
			str(r.Service, "providerID"))})
	case reply.Status == http.StatusBadRequest && strings.HasSuffix(pt, "undecryptable") && x.abort != nil:
		x.abort(errAbort{errors.New("ledgerd cannot open the callbacks (400 undecryptable): its keyring does not hold the signing secret; " +
			"check --secret-file, or let loadtest install one (no --secret-file)")})
	}
	x.fail("seq %d %s key %s: terminal status %d %s", r.Seq, r.Endpoint, str(r.Service, "idempotencyKey"), reply.Status, pt)
}

// problemType is the reply's problem type, "" for no reply or no problem.
func problemType(r *caller.Reply) string {
	if r == nil {
		return ""
	}
	return r.ProblemType()
}

// record keeps a 200 answer for the replay-consistency check.
func (x *runner) record(r request, service map[string]any) {
	b, _ := json.Marshal(service) // maps marshal with sorted keys: canonical
	k := r.Endpoint + "|" + scopeOf(r) + "|" + str(r.Service, "idempotencyKey")
	x.mu.Lock()
	defer x.mu.Unlock()
	a := x.answers[k]
	switch {
	case a == nil:
		x.answers[k] = &keyAnswers{first: string(b), n: 1}
	default:
		a.n++
		if a.diff == "" && string(b) != a.first {
			a.diff = string(b)
		}
	}
}

// referenceClaim is the reference an approved answer of each endpoint carries.
var referenceClaim = map[string]string{claims.Authorize: "holdReference", claims.Capture: "captureReference",
	claims.Release: "releaseReference", claims.CreditAccount: "creditReference"}

// expect checks the answer the caller acts on: every request of a storm is
// valid and funded, so every one is approved with a reference and echoes
// its key; a second attempt under a new key answers the first's reference.
func (x *runner) expect(rs *roundState, r request, svc map[string]any) {
	refName := referenceClaim[r.Endpoint]
	ref := str(svc, refName)
	if got, want := str(svc, "idempotencyKey"), str(r.Service, "idempotencyKey"); got != want {
		x.fail("seq %d %s: answer echoes idempotencyKey %q, sent %q", r.Seq, r.Endpoint, got, want)
	}
	if o := str(svc, "outcome"); o != "approved" || ref == "" {
		x.fail("seq %d %s: outcome %q reason %q %s %q; want approved with a reference", r.Seq, r.Endpoint, o, str(svc, "reason"), refName, ref)
		return
	}
	rs.mu.Lock()
	rs.finals[r.Seq] = ref
	first, ok := rs.finals[r.SecondOf]
	rs.mu.Unlock()
	switch {
	case r.SecondOf == 0:
		x.model.answered(r, ref)
	case !ok:
		x.fail("seq %d %s: the first attempt (seq %d) has no approved answer", r.Seq, r.Endpoint, r.SecondOf)
	case first != ref:
		x.fail("seq %d %s: a second attempt under a new key answered %s %q, the first (seq %d) %q",
			r.Seq, r.Endpoint, refName, ref, r.SecondOf, first)
	}
}

// consistency checks that every key's 200 answers are identical. It
// returns the number of keys answered more than once and the differences.
func (x *runner) consistency() (repeated int, diffs []string, nDiff int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	keys := make([]string, 0, len(x.answers))
	for k, a := range x.answers {
		if a.n > 1 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		a := x.answers[k]
		repeated++
		if a.diff != "" {
			nDiff++
			if len(diffs) < maxListed {
				diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, a.first, a.diff))
			}
		}
	}
	return repeated, diffs, nDiff
}
