package loadtest

import (
	"context"
	"sync"
	"time"
)

// Defaults of --give-up-after and --resolve-timeout.
const (
	defaultGiveUpAfter    = 60 * time.Second
	defaultResolveTimeout = 30 * time.Minute
)

// giveUp queues r, given up after retries, for resolve.
func (x *runner) giveUp(r request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.stats[endpointIndex(r.Endpoint)].givenUp++
	x.pending = append(x.pending, r)
}

// resolve resends, under their own keys, the requests of the phase that
// were given up after retries, as the service does (it retries for hours):
// each is retried until answered or until resolveFor has passed since
// resolve began. An answered one is checked like any other, so the model
// (and the money checks) hold exactly what the ledger must; one still
// unanswered is unresolved: it fails the run, and the accounts and payouts
// it touches are left out of the money checks, since the storm cannot know
// whether ledgerd applied it. resolve runs before the next phase, whose
// captures and releases need the holds the authorizes were answered.
func (x *runner) resolve(ctx context.Context, rs *roundState) {
	x.mu.Lock()
	pend := x.pending
	x.pending = nil
	x.mu.Unlock()
	if len(pend) == 0 || ctx.Err() != nil {
		return
	}
	x.logf("resending %d requests given up after retries, until answered (at most %s)", len(pend), x.resolveFor)
	deadline := time.Now().Add(x.resolveFor)
	work := make(chan request)
	var wg sync.WaitGroup
	for range min(max(x.loop.conc, 1), len(pend)) {
		wg.Go(func() {
			for r := range work {
				x.resend(ctx, rs, r, deadline)
			}
		})
	}
	for _, r := range pend {
		work <- r
	}
	close(work)
	wg.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	if ctx.Err() == nil {
		x.logf("resent %d requests given up: %d still unanswered", len(pend), x.unresolved)
	}
}

// resend sends one request given up until deadline.
func (x *runner) resend(ctx context.Context, rs *roundState, r request, deadline time.Time) {
	svc, gaveUp := x.sendUntil(ctx, r, sendBounds{retrying: true, keep: true, deadline: deadline})
	switch {
	case svc != nil:
		x.count(r.Endpoint, func(s *endpointStats) { s.resolved++ })
		x.expect(rs, r, svc)
	case gaveUp:
		x.model.unsettled(r)
		x.mu.Lock()
		last := x.lastGiveUp[str(r.Service, "idempotencyKey")]
		x.unresolved++
		x.mu.Unlock()
		x.fail("seq %d %s key %s: unresolved: given up after retries and still unanswered after resending for %s; last: %s",
			r.Seq, r.Endpoint, str(r.Service, "idempotencyKey"), x.resolveFor, last)
	}
}
