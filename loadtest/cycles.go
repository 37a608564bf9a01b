package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/internal/strictjson"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/shopspring/decimal"
)

// The cycle workload of the ceiling measure (docs/benchmarks.md): each
// client, in a closed loop, authorizes a random account out of the funded
// ones for 1.00 to 100.00 and then captures that hold. A cycle counts when
// both answered 200 approved.

// cycleSettings shapes a cycle run.
type cycleSettings struct {
	Clients  int           // closed-loop clients
	Duration time.Duration // measured window
	Warmup   time.Duration // run before the window, not counted
}

// cycleReport is what a cycle run measured in its window.
type cycleReport struct {
	Clients      int     `json:"clients"`
	Seconds      float64 `json:"seconds"`
	Cycles       int64   `json:"cycles"`
	CyclesPerSec float64 `json:"cyclesPerSec"`
	Authorize    latency `json:"authorize"`
	Capture      latency `json:"capture"`
	// Retried counts answers the service would retry (408, 429, 5xx,
	// transport errors); Failed counts cycles that did not end approved.
	Retried  int64          `json:"retried"`
	Failed   int64          `json:"failed"`
	Statuses map[string]int `json:"statuses,omitempty"`
	// CPU per cycle in microseconds, when it could be sampled: ledgerd (from
	// its process_cpu_seconds_total), Postgres (every postgres process on
	// this machine, from /proc) and this load generator.
	CPU *cpuPerCycle `json:"cpuPerCycle,omitempty"`
}

// cpuPerCycle is CPU time per completed cycle, in microseconds.
type cpuPerCycle struct {
	Ledgerd  float64 `json:"ledgerdMicros,omitempty"`
	Postgres float64 `json:"postgresMicros,omitempty"`
	Loadgen  float64 `json:"loadgenMicros,omitempty"`
}

// newHist returns a latency histogram in microseconds from 1 µs to 2 min
// with three significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 120_000_000, 3) }

func latencyOf(h *hdrhistogram.Histogram) latency {
	if h.TotalCount() == 0 {
		return latency{}
	}
	q := func(p float64) float64 { return round(float64(h.ValueAtQuantile(p)) / 1000) }
	return latency{P50: q(50), P90: q(90), P95: q(95), P99: q(99), P999: q(99.9), Max: round(float64(h.Max()) / 1000)}
}

// cycleWorker is one closed-loop client's tallies.
type cycleWorker struct {
	auth, capt      *hdrhistogram.Histogram
	cycles          int64
	retried, failed int64
	statuses        map[int]int
}

// runCycles drives the cycle workload against the callbacks with accounts
// (funded, each with its source instrument) and returns what the window
// measured. sample, when set, is called at the start and the end of the
// window (CPU sampling).
func runCycles(ctx context.Context, client *caller.Client, providerID, prefix string, accounts []accountSeed,
	set cycleSettings, sample func(start bool)) cycleReport {
	var wg sync.WaitGroup
	workers := make([]*cycleWorker, set.Clients)
	begin := time.Now()
	windowStart := begin.Add(set.Warmup)
	windowEnd := windowStart.Add(set.Duration)
	var startOnce sync.Once
	for i := range workers {
		w := &cycleWorker{auth: newHist(), capt: newHist(), statuses: map[int]int{}}
		workers[i] = w
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(begin.UnixNano())))
			for n := 0; ; n++ {
				now := time.Now()
				if now.After(windowEnd) || ctx.Err() != nil {
					return
				}
				if sample != nil && !now.Before(windowStart) {
					startOnce.Do(func() { sample(true) })
				}
				in := !now.Before(windowStart)
				a := accounts[rng.IntN(len(accounts))]
				payout := fmt.Sprintf("%s-c%d-%d", prefix, i, n)
				amount := decimal.New(int64(100+rng.IntN(9901)), -decimalPlaces)
				t0 := time.Now()
				r := w.send(ctx, client, claims.Authorize, authorizeJSON(payout, providerID, a, amount.StringFixed(decimalPlaces)))
				t1 := time.Now()
				if r == nil || r.Outcome() != "approved" {
					w.failed++
					continue
				}
				r = w.send(ctx, client, claims.Capture, captureJSON(payout, providerID, r.Str("holdReference")))
				t2 := time.Now()
				if r == nil || r.Outcome() != "approved" {
					w.failed++
					continue
				}
				if in && !t2.After(windowEnd) {
					_ = w.auth.RecordValue(t1.Sub(t0).Microseconds())
					_ = w.capt.RecordValue(t2.Sub(t1).Microseconds())
					w.cycles++
				}
			}
		})
	}
	wg.Wait()
	if sample != nil {
		sample(false)
	}
	rep := cycleReport{Clients: set.Clients, Seconds: set.Duration.Seconds(), Statuses: map[string]int{}}
	auth, capt := newHist(), newHist()
	for _, w := range workers {
		auth.Merge(w.auth)
		capt.Merge(w.capt)
		rep.Cycles += w.cycles
		rep.Retried += w.retried
		rep.Failed += w.failed
		for s, n := range w.statuses {
			rep.Statuses[strconv.Itoa(s)] += n
		}
	}
	rep.CyclesPerSec = round(float64(rep.Cycles) / set.Duration.Seconds())
	rep.Authorize, rep.Capture = latencyOf(auth), latencyOf(capt)
	return rep
}

// The service claims of the cycle's requests, written directly: what
// encoding/json writes for the structs they stand for (the test holds
// them to it), without its reflection, for a load generator that shares
// the machine.

// authorizeJSON is the authorize of payout on account a for amount (USD,
// two places), fraud score 0.01, idempotency key "a-" + payout.
func authorizeJSON(payout, providerID string, a accountSeed, amount string) json.RawMessage {
	b := make([]byte, 0, 256+len(payout)+len(a.OwnerExternalID)+len(a.SourceToken))
	b = append(b, `{"payoutID":`...)
	b = strictjson.AppendString(b, payout)
	b = append(b, `,"providerID":`...)
	b = strictjson.AppendString(b, providerID)
	b = append(b, `,"externalID":`...)
	b = strictjson.AppendString(b, a.OwnerExternalID)
	b = append(b, `,"fundingSource":`...)
	b = strictjson.AppendString(b, a.SourceToken)
	b = append(b, `,"amount":{"currency":{"code":`...)
	b = strictjson.AppendString(b, stormCurrency)
	b = append(b, `,"decimalPlaces":`...)
	b = strconv.AppendInt(b, decimalPlaces, 10)
	b = append(b, `},"value":`...)
	b = strictjson.AppendString(b, amount)
	b = append(b, `},"fraudScore":0.01,"idempotencyKey":`...)
	b = strictjson.AppendString(b, "a-"+payout)
	return append(b, '}')
}

// captureJSON is the capture of payout's hold, idempotency key "c-" +
// payout.
func captureJSON(payout, providerID, hold string) json.RawMessage {
	b := make([]byte, 0, 128+2*len(payout)+len(hold))
	b = append(b, `{"payoutID":`...)
	b = strictjson.AppendString(b, payout)
	b = append(b, `,"providerID":`...)
	b = strictjson.AppendString(b, providerID)
	b = append(b, `,"holdReference":`...)
	b = strictjson.AppendString(b, hold)
	b = append(b, `,"idempotencyKey":`...)
	b = strictjson.AppendString(b, "c-"+payout)
	return append(b, '}')
}

// send posts one callback, service object svc, under the service's retry
// policy (each attempt with a fresh iat) and returns the 200 answer, or
// nil.
func (w *cycleWorker) send(ctx context.Context, client *caller.Client, endpoint string, svc json.RawMessage) *caller.Reply {
	deadline := time.Now().Add(defaultGiveUpAfter)
	for attempt := 0; attempt < maxAttempts && ctx.Err() == nil; attempt++ {
		c := claims.AppendHeader(make([]byte, 0, len(svc)+96), time.Now(), endpoint)
		reply, err := client.SendClaims(ctx, endpoint, append(append(c, svc...), '}'))
		status := 0
		if reply != nil {
			status = reply.Status
		}
		w.statuses[status]++
		switch {
		case err != nil && reply != nil:
			return nil
		case err == nil && reply.Status == http.StatusOK:
			return reply
		case err == nil && !reply.Retryable():
			return nil
		}
		w.retried++
		wait := min(backoffBase<<min(attempt, 10), backoffMax)
		if reply != nil {
			if s, perr := strconv.Atoi(strings.TrimSpace(reply.RetryAfter)); perr == nil && s > 0 {
				wait = max(wait, min(time.Duration(s)*time.Second, retryAfterMax))
			}
		}
		if time.Now().Add(wait).After(deadline) {
			return nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	return nil
}
