package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The soak view: ledgerd's resident memory, goroutines and database pool,
// read from its /metrics over the run.

const (
	metricRSS      = "process_resident_memory_bytes"
	metricGoroutes = "go_goroutines"
	metricAcquired = "ledgerd_db_pool_acquired_connections"
	metricTotal    = "ledgerd_db_pool_connections"
	metricMax      = "ledgerd_db_pool_max_connections"
)

// sample is one reading of ledgerd's /metrics.
type sample struct {
	// T is seconds since the storm began (negative before it).
	T          float64 `json:"t"`
	RSSMB      float64 `json:"rssMB"`
	Goroutines int     `json:"goroutines"`
	// PoolAcquired connections in use, PoolOpen open, PoolMax the pool's
	// size.
	PoolAcquired int `json:"poolAcquired"`
	PoolOpen     int `json:"poolOpen"`
	PoolMax      int `json:"poolMax"`
}

// resources is the soak view of a run.
type resources struct {
	EverySeconds float64  `json:"everySeconds"`
	Samples      []sample `json:"samples"`
	// Failed counts readings that got no answer (ledgerd down).
	Failed int `json:"failed"`
	// StormEnd is when the storm ended (seconds since it began).
	StormEnd float64 `json:"stormEnd"`
	// Summary figures, when there are samples.
	RSSMaxMB float64 `json:"rssMaxMB,omitempty"`
	// RSSSlopeMBPerMin is the least-squares slope of RSS over the storm
	// after its first fifth (warm-up).
	RSSSlopeMBPerMin float64 `json:"rssSlopeMBPerMin"`
	// RSSEarlyMB and RSSLateMB are the median RSS of the second and the
	// last fifth of the storm.
	RSSEarlyMB       float64 `json:"rssEarlyMB,omitempty"`
	RSSLateMB        float64 `json:"rssLateMB,omitempty"`
	GoroutinesBefore int     `json:"goroutinesBefore,omitempty"`
	GoroutinesPeak   int     `json:"goroutinesPeak,omitempty"`
	GoroutinesAfter  int     `json:"goroutinesAfter,omitempty"`
	PoolAcquiredPeak int     `json:"poolAcquiredPeak,omitempty"`
}

// sampler reads ledgerd's /metrics every interval until stopped.
type sampler struct {
	adm   *adminClient
	every time.Duration
	start time.Time // the storm's start; set before the first reading

	mu      sync.Mutex
	res     resources
	stopc   chan struct{}
	stopped chan struct{}
}

func newSampler(adm *adminClient, every time.Duration, start time.Time) *sampler {
	return &sampler{adm: adm, every: every, start: start, res: resources{EverySeconds: every.Seconds()},
		stopc: make(chan struct{}), stopped: make(chan struct{})}
}

// read takes one sample now.
func (s *sampler) read(ctx context.Context) (sample, bool) {
	cctx, cancel := context.WithTimeout(ctx, min(s.every, 2*time.Second)+time.Second)
	defer cancel()
	m, err := s.adm.metrics(cctx, metricRSS, metricGoroutes, metricAcquired, metricTotal, metricMax)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := m[metricRSS]; err != nil || !ok {
		s.res.Failed++
		return sample{}, false
	}
	x := sample{T: round2(time.Since(s.start).Seconds()), RSSMB: round(m[metricRSS] / (1 << 20)), Goroutines: int(m[metricGoroutes]),
		PoolAcquired: int(m[metricAcquired]), PoolOpen: int(m[metricTotal]), PoolMax: int(m[metricMax])}
	s.res.Samples = append(s.res.Samples, x)
	return x, true
}

// run samples until stop.
func (s *sampler) run(ctx context.Context) {
	defer close(s.stopped)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.read(ctx)
		case <-s.stopc:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (s *sampler) stop() {
	close(s.stopc)
	<-s.stopped
}

// summary computes the figures of the soak view. before and after are the
// goroutine counts of the idle ledgerd before the storm and after it
// (its connections closed); stormEnd is seconds since the storm began.
func (s *sampler) summary(before, after int, stormEnd float64) resources {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.res
	r.Samples = slices.Clone(r.Samples)
	r.StormEnd = round2(stormEnd)
	r.GoroutinesBefore, r.GoroutinesAfter = before, after
	var in []sample
	for _, x := range r.Samples {
		r.RSSMaxMB = max(r.RSSMaxMB, x.RSSMB)
		r.GoroutinesPeak = max(r.GoroutinesPeak, x.Goroutines)
		r.PoolAcquiredPeak = max(r.PoolAcquiredPeak, x.PoolAcquired)
		if x.T >= 0 && x.T <= stormEnd {
			in = append(in, x)
		}
	}
	// Leave out the first fifth: the heap grows to its working size there.
	fifth := stormEnd / 5
	var ts, vs, early, late []float64
	for _, x := range in {
		if x.T < fifth {
			continue
		}
		ts, vs = append(ts, x.T/60), append(vs, x.RSSMB)
		switch {
		case x.T < 2*fifth:
			early = append(early, x.RSSMB)
		case x.T >= 4*fifth:
			late = append(late, x.RSSMB)
		}
	}
	r.RSSSlopeMBPerMin = round2(slope(ts, vs))
	r.RSSEarlyMB, r.RSSLateMB = median(early), median(late)
	return r
}

// slope is the least-squares slope of ys over xs (0 with fewer than 3).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 3 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Soak thresholds (issue: RSS under 150 MB with no upward trend, no
// goroutine growth after the storm).
const (
	trendTolerance     = 0.10 // late median over early median
	trendToleranceMB   = 8.0
	goroutineTolerance = 10
)

// soakCheck judges the soak view: RSS under the limit throughout, no
// upward trend (the median of the storm's last fifth at most 10 % and 8 MB
// above that of its second fifth), and the goroutines of the idle ledgerd
// after the storm no more than 10 above those before it.
func soakCheck(r resources, rssLimitMB float64) Check {
	c := Check{Name: fmt.Sprintf("soak: ledgerd's RSS under %.0f MB with no upward trend through the storm; no goroutine growth after it", rssLimitMB)}
	if len(r.Samples) < 5 {
		c.NotChecked = fmt.Sprintf("only %d samples of ledgerd's /metrics", len(r.Samples))
		c.OK = true
		return c
	}
	c.Checked = len(r.Samples)
	if r.RSSMaxMB >= rssLimitMB {
		c.failf("RSS peaked at %.1f MB (limit %.0f MB)", r.RSSMaxMB, rssLimitMB)
	}
	if r.RSSEarlyMB > 0 && r.RSSLateMB > r.RSSEarlyMB*(1+trendTolerance) && r.RSSLateMB-r.RSSEarlyMB > trendToleranceMB {
		c.failf("RSS trends up: median %.1f MB late in the storm against %.1f MB early (slope %.2f MB/min)", r.RSSLateMB, r.RSSEarlyMB, r.RSSSlopeMBPerMin)
	}
	if r.GoroutinesAfter > r.GoroutinesBefore+goroutineTolerance {
		c.failf("goroutines grew: %d after the storm, %d before it", r.GoroutinesAfter, r.GoroutinesBefore)
	}
	c.OK = c.Failed == 0
	return c
}
