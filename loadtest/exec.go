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
	"time"

	"github.com/provider-ledger/adapter/callbacks"
)

// The retry policy of the service (spec, "Ledger callbacks hosted by the
// provider"): 408, 429, 5xx and transport errors are retried with the same
// key; other 4xx are terminal. The service retries for hours; a load test
// gives up after these bounds and counts the request as failed.
const (
	maxAttempts   = 30
	maxRetryTime  = 60 * time.Second
	backoffBase   = 20 * time.Millisecond
	backoffMax    = time.Second
	retryAfterMax = 5 * time.Second
)

var endpoints = []string{callbacks.Authorize, callbacks.Capture, callbacks.Release, callbacks.CreditAccount}

// endpointStats counts one endpoint's traffic.
type endpointStats struct {
	mu          sync.Mutex
	requests    int // logical requests (idempotency keys sent)
	sent        int // HTTP attempts
	ok          int // 200 answers
	retried     int // attempts that retried a lost or retryable answer
	replays     int // deliberate repeats: duplicates and concurrent second sends
	dropped     int // answers discarded as lost
	statuses    map[int]int
	transport   int
	latencies   []time.Duration
	first, last time.Time
}

func (s *endpointStats) attempt(start time.Time, lat time.Duration, status int, transportErr, measured bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent++
	if s.first.IsZero() || start.Before(s.first) {
		s.first = start
	}
	if end := start.Add(lat); end.After(s.last) {
		s.last = end
	}
	if transportErr {
		s.transport++
		return
	}
	s.statuses[status]++
	if status == http.StatusOK {
		s.ok++
	}
	if measured {
		s.latencies = append(s.latencies, lat)
	}
}

func (s *endpointStats) add(f func(s *endpointStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// answer is one opened 200 answer to an idempotency key.
type answer struct {
	seq       int
	canonical string // the decrypted service claims, canonical JSON
}

// runner sends a plan and remembers what was answered.
type runner struct {
	plan   Plan
	client *callbacks.Client
	conc   int
	rate   float64

	stats map[string]*endpointStats

	mu       sync.Mutex
	answers  map[string][]answer    // endpoint|scope|key → every 200 answer
	finals   map[int]map[string]any // seq → the answer the caller acted on
	holdRefs map[string]string      // payoutID → holdReference (first attempt)
	problems []string               // failures of the storm itself
	nProblem int
	phases   [numPhases]time.Duration
	// authorizeRate is the 200 answers to authorize per second of the
	// authorize phase, which sends nothing else.
	authorizeRate float64

	pace struct {
		sync.Mutex
		next time.Time
	}
}

func newRunner(plan Plan, client *callbacks.Client, conc int, rate float64) *runner {
	x := &runner{plan: plan, client: client, conc: conc, rate: rate, stats: map[string]*endpointStats{},
		answers: map[string][]answer{}, finals: map[int]map[string]any{}, holdRefs: map[string]string{}}
	for _, ep := range endpoints {
		x.stats[ep] = &endpointStats{statuses: map[int]int{}}
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

// wait paces request starts at x.rate per second (0: flat out).
func (x *runner) wait(ctx context.Context) error {
	if x.rate <= 0 {
		return ctx.Err()
	}
	interval := time.Duration(float64(time.Second) / x.rate)
	x.pace.Lock()
	now := time.Now()
	at := x.pace.next
	if at.Before(now) {
		at = now
	}
	x.pace.next = at.Add(interval)
	x.pace.Unlock()
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run sends every phase in turn, each over x.conc workers.
func (x *runner) run(ctx context.Context) error {
	for ph := range numPhases {
		var reqs []Request
		for _, r := range x.plan.Requests {
			if r.Phase == ph {
				reqs = append(reqs, r)
			}
		}
		start := time.Now()
		work := make(chan Request)
		var wg sync.WaitGroup
		for range min(x.conc, max(len(reqs), 1)) {
			wg.Go(func() {
				for r := range work {
					x.deliver(ctx, r)
				}
			})
		}
	feed:
		for _, r := range reqs {
			if err := x.wait(ctx); err != nil {
				break feed
			}
			select {
			case work <- r:
			case <-ctx.Done():
				break feed
			}
		}
		close(work)
		wg.Wait()
		x.phases[ph] = time.Since(start)
		if ph == PhaseAuthorize && x.phases[ph] > 0 {
			st := x.stats[callbacks.Authorize]
			st.mu.Lock()
			x.authorizeRate = float64(st.ok) / x.phases[ph].Seconds()
			st.mu.Unlock()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func scopeOf(r Request) string {
	if p, _ := r.Service["payoutID"].(string); p != "" {
		return p
	}
	if r.Endpoint == callbacks.Release {
		h, _ := r.Service["holdReference"].(string)
		return h
	}
	return ""
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// deliver sends one logical request as its delivery plan says and checks the
// answer the caller acts on.
func (x *runner) deliver(ctx context.Context, r Request) {
	svc := clone(r.Service)
	if r.HoldOf != "" {
		x.mu.Lock()
		ref := x.holdRefs[r.HoldOf]
		x.mu.Unlock()
		if ref == "" {
			x.fail("seq %d %s: payout %s has no approved hold; not sent", r.Seq, r.Endpoint, r.HoldOf)
			return
		}
		svc["holdReference"] = ref
	}
	r.Service = svc
	st := x.stats[r.Endpoint]
	st.add(func(s *endpointStats) { s.requests++ })
	if r.Delivery.Drop {
		x.dropped(ctx, r)
	}
	var final map[string]any
	if r.Delivery.Concurrent {
		var wg sync.WaitGroup
		var second map[string]any
		wg.Go(func() { final = x.send(ctx, r, r.Delivery.Drop) })
		wg.Go(func() { second = x.send(ctx, r, r.Delivery.Drop) })
		wg.Wait()
		st.add(func(s *endpointStats) { s.replays++ })
		if final == nil {
			final = second
		}
	} else {
		final = x.send(ctx, r, r.Delivery.Drop)
	}
	if final == nil {
		return // send recorded why
	}
	if r.Delivery.Duplicate {
		st.add(func(s *endpointStats) { s.replays++ })
		x.send(ctx, r, false)
	}
	x.expect(r, final)
}

// dropped sends r once and discards the answer, as a caller whose
// connection broke would: half the time by a client-side timeout that may
// fire before or after ledgerd commits, half the time by ignoring a full
// answer. A 200 answer still counts for the replay-consistency check.
func (x *runner) dropped(ctx context.Context, r Request) {
	st := x.stats[r.Endpoint]
	actx := ctx
	if r.Seq%2 == 1 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, time.Duration(200+rand.IntN(9800))*time.Microsecond)
		defer cancel()
	}
	start := time.Now()
	reply, err := x.client.Send(actx, r.Endpoint, r.Service)
	lat := time.Since(start)
	if ctx.Err() != nil {
		return
	}
	if reply == nil {
		// Timed out by the caller (or a real transport error): either way
		// an attempt whose answer is lost, not counted as a status.
		st.add(func(s *endpointStats) { s.sent++ })
	} else {
		st.attempt(start, lat, reply.Status, false, false)
	}
	st.add(func(s *endpointStats) { s.dropped++ })
	if err == nil && reply.Status == http.StatusOK {
		x.record(r, reply.Service)
	}
}

func statusOr(r *callbacks.Reply) int {
	if r == nil {
		return 0
	}
	return r.Status
}

// send delivers r under the retry policy and returns the opened service
// claims of the 200 answer, or nil after recording why there is none.
// retrying says the first attempt is already a retry (its answer was lost).
func (x *runner) send(ctx context.Context, r Request, retrying bool) map[string]any {
	st := x.stats[r.Endpoint]
	deadline := time.Now().Add(maxRetryTime)
	var last string
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 || retrying {
			st.add(func(s *endpointStats) { s.retried++ })
		}
		start := time.Now()
		reply, err := x.client.Send(ctx, r.Endpoint, r.Service)
		lat := time.Since(start)
		if ctx.Err() != nil {
			return nil
		}
		st.attempt(start, lat, statusOr(reply), err != nil && reply == nil, true)
		var wait time.Duration
		switch {
		case err != nil && reply != nil:
			// A 200 whose answer does not open or is not a proper response:
			// the caller cannot trust it, and a retry would get the same.
			x.fail("seq %d %s: status %d with an unusable answer: %v", r.Seq, r.Endpoint, reply.Status, err)
			return nil
		case err != nil:
			last = "transport error: " + err.Error()
		case reply.Status == http.StatusOK:
			x.record(r, reply.Service)
			return reply.Service
		case reply.Retryable():
			last = fmt.Sprintf("status %d %s", reply.Status, problemType(reply))
			if s, perr := strconv.Atoi(strings.TrimSpace(reply.RetryAfter)); perr == nil && s >= 0 {
				wait = min(time.Duration(s)*time.Second, retryAfterMax)
			}
		default:
			x.fail("seq %d %s key %s: terminal status %d %s", r.Seq, r.Endpoint, str(r.Service, "idempotencyKey"), reply.Status, problemType(reply))
			return nil
		}
		backoff := min(backoffBase<<min(attempt, 10), backoffMax)
		backoff = backoff/2 + rand.N(backoff/2+1)
		wait = max(wait, backoff)
		if time.Now().Add(wait).After(deadline) {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
	x.fail("seq %d %s key %s: gave up after retries; last: %s", r.Seq, r.Endpoint, str(r.Service, "idempotencyKey"), last)
	return nil
}

func problemType(r *callbacks.Reply) string {
	if r == nil || r.Problem == nil {
		return ""
	}
	t, _ := r.Problem["type"].(string)
	return t
}

// record keeps a 200 answer for the replay-consistency check.
func (x *runner) record(r Request, service map[string]any) {
	b, _ := json.Marshal(service) // maps marshal with sorted keys: canonical
	k := r.Endpoint + "|" + scopeOf(r) + "|" + str(r.Service, "idempotencyKey")
	x.mu.Lock()
	x.answers[k] = append(x.answers[k], answer{seq: r.Seq, canonical: string(b)})
	x.mu.Unlock()
}

// referenceClaim is the reference an approved answer of each endpoint carries.
var referenceClaim = map[string]string{callbacks.Authorize: "holdReference", callbacks.Capture: "captureReference",
	callbacks.Release: "releaseReference", callbacks.CreditAccount: "creditReference"}

// expect checks the answer the caller acts on: every request of a storm is
// valid and funded, so every one is approved with a reference and echoes
// its key; a second attempt under a new key answers the first's reference.
func (x *runner) expect(r Request, svc map[string]any) {
	refName := referenceClaim[r.Endpoint]
	ref := str(svc, refName)
	if got, want := str(svc, "idempotencyKey"), str(r.Service, "idempotencyKey"); got != want {
		x.fail("seq %d %s: answer echoes idempotencyKey %q, sent %q", r.Seq, r.Endpoint, got, want)
	}
	if o := str(svc, "outcome"); o != "approved" || ref == "" {
		x.fail("seq %d %s: outcome %q reason %q %s %q; want approved with a reference", r.Seq, r.Endpoint, o, str(svc, "reason"), refName, ref)
		return
	}
	var msg string
	x.mu.Lock()
	x.finals[r.Seq] = svc
	switch first, ok := x.finals[r.SecondOf]; {
	case r.SecondOf == 0:
		if r.Endpoint == callbacks.Authorize {
			x.holdRefs[str(r.Service, "payoutID")] = ref
		}
	case !ok:
		msg = fmt.Sprintf("seq %d %s: the first attempt (seq %d) has no approved answer", r.Seq, r.Endpoint, r.SecondOf)
	case str(first, refName) != ref:
		msg = fmt.Sprintf("seq %d %s: a second attempt under a new key answered %s %q, the first (seq %d) %q",
			r.Seq, r.Endpoint, refName, ref, r.SecondOf, str(first, refName))
	}
	x.mu.Unlock()
	if msg != "" {
		x.fail("%s", msg)
	}
}

// consistency checks that every key's 200 answers are identical. It
// returns the number of keys answered more than once and the differences.
func (x *runner) consistency() (repeated int, diffs []string, nDiff int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	keys := make([]string, 0, len(x.answers))
	for k := range x.answers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		as := x.answers[k]
		if len(as) < 2 {
			continue
		}
		repeated++
		for _, a := range as[1:] {
			if a.canonical != as[0].canonical {
				nDiff++
				if len(diffs) < maxListed {
					diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, as[0].canonical, a.canonical))
				}
				break
			}
		}
	}
	return repeated, diffs, nDiff
}

// errUndecryptable tells the warm-up that the keyring does not know the key yet.
var errUndecryptable = errors.New("undecryptable")
