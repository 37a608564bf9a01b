package loadtest

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The timeline: what happened in each second of a run, by the time each
// attempt ended. The report's charts over time come from it.

// The timeline starts with buckets of firstWidth; when a run grows past
// maxBuckets of them, adjacent buckets are merged and the width doubles, so
// a run of any length keeps at most maxBuckets (a short run gets a fine
// resolution, a long one a bounded memory).
const (
	firstWidth = 250 * time.Millisecond
	maxBuckets = 600
)

type bucket struct {
	ok, sent  [numEndpoints]int
	statuses  map[int]int // non-200 answers
	transport int
	retries   int
	dropped   int
	// hist holds the measured latencies, in µs, with two significant
	// digits (a 1 % error: enough for a chart, and ~20 KB).
	hist *hdrhistogram.Histogram
	// eph is each endpoint's share of hist.
	eph [numEndpoints]*hdrhistogram.Histogram
}

func (b *bucket) merge(o *bucket) {
	for e := range numEndpoints {
		b.ok[e] += o.ok[e]
		b.sent[e] += o.sent[e]
	}
	for c, n := range o.statuses {
		b.statuses[c] += n
	}
	b.transport += o.transport
	b.retries += o.retries
	b.dropped += o.dropped
	if o.hist != nil {
		if b.hist == nil {
			b.hist = newBucketHist()
		}
		b.hist.Merge(o.hist)
	}
	for e, h := range o.eph {
		if h != nil {
			if b.eph[e] == nil {
				b.eph[e] = newBucketHist()
			}
			b.eph[e].Merge(h)
		}
	}
}

type timeline struct {
	start   time.Time
	width   time.Duration
	buckets []*bucket
}

func newTimeline(start time.Time) *timeline { return &timeline{start: start, width: firstWidth} }

func newBucketHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000, 2) }

func (t *timeline) at(when time.Time) *bucket {
	i := max(int(when.Sub(t.start)/t.width), 0)
	for i >= maxBuckets {
		t.compact()
		i = int(when.Sub(t.start) / t.width)
	}
	for len(t.buckets) <= i {
		t.buckets = append(t.buckets, &bucket{statuses: map[int]int{}})
	}
	return t.buckets[i]
}

// compact merges adjacent buckets and doubles the width.
func (t *timeline) compact() {
	var out []*bucket
	for i := 0; i < len(t.buckets); i += 2 {
		b := t.buckets[i]
		if i+1 < len(t.buckets) {
			b.merge(t.buckets[i+1])
		}
		out = append(out, b)
	}
	t.buckets, t.width = out, 2*t.width
}

func (t *timeline) attempt(ep int, end time.Time, status int, transportErr, measured bool, latMicros int64) {
	b := t.at(end)
	b.sent[ep]++
	switch {
	case transportErr:
		b.transport++
	case status == 200:
		b.ok[ep]++
	default:
		b.statuses[status]++
	}
	if measured {
		if b.hist == nil {
			b.hist = newBucketHist()
		}
		_ = b.hist.RecordValue(max(latMicros, 1))
		if b.eph[ep] == nil {
			b.eph[ep] = newBucketHist()
		}
		_ = b.eph[ep].RecordValue(max(latMicros, 1))
	}
}

func (t *timeline) retry(when time.Time)   { t.at(when).retries++ }
func (t *timeline) dropped(when time.Time) { t.at(when).dropped++ }

// series is the run over time, one point per BucketSeconds: rates per
// second, latency percentiles in milliseconds (-1 where nothing was
// measured), counts per bucket.
type series struct {
	BucketSeconds float64 `json:"bucketSeconds"`
	// T is each point's start, in seconds since the storm began.
	T []float64 `json:"t"`
	// OKPerSec is 200 answers per second by endpoint; SentPerSec every
	// HTTP attempt per second.
	OKPerSec   map[string][]float64 `json:"okPerSec"`
	SentPerSec []float64            `json:"sentPerSec"`
	// latencySeries is over every endpoint's measured attempts;
	// ByEndpoint over each endpoint's.
	latencySeries
	ByEndpoint map[string]latencySeries `json:"latencyByEndpoint"`
	// Statuses counts non-200 answers by status ("503") and transport
	// errors ("transport") per point; Retries the attempts that retried;
	// Dropped the answers discarded as lost.
	Statuses map[string][]int `json:"statuses"`
	Retries  []int            `json:"retries"`
	Dropped  []int            `json:"dropped"`
}

// latencySeries are latency percentiles over time, in milliseconds, -1
// where a point has no measured attempt.
type latencySeries struct {
	P50  []float64 `json:"p50Ms"`
	P90  []float64 `json:"p90Ms"`
	P95  []float64 `json:"p95Ms"`
	P99  []float64 `json:"p99Ms"`
	P999 []float64 `json:"p999Ms"`
	Max  []float64 `json:"maxMs"`
}

// add appends the percentiles of h (-1 each when h is empty).
func (l *latencySeries) add(h *hdrhistogram.Histogram) {
	q := func(p float64) float64 {
		if h == nil || h.TotalCount() == 0 {
			return -1
		}
		if p == 100 {
			return msOf(h.Max())
		}
		return msOf(h.ValueAtQuantile(p))
	}
	l.P50, l.P90, l.P95 = append(l.P50, q(50)), append(l.P90, q(90)), append(l.P95, q(95))
	l.P99, l.P999, l.Max = append(l.P99, q(99)), append(l.P999, q(99.9)), append(l.Max, q(100))
}

// series turns the timeline into a series.
func (t *timeline) series() series {
	width := t.width.Seconds()
	s := series{BucketSeconds: width, OKPerSec: map[string][]float64{}, Statuses: map[string][]int{}, ByEndpoint: map[string]latencySeries{}}
	n := len(t.buckets)
	for _, b := range t.buckets {
		for c := range b.statuses {
			if s.Statuses[strconv.Itoa(c)] == nil {
				s.Statuses[strconv.Itoa(c)] = make([]int, n)
			}
		}
		if b.transport > 0 && s.Statuses["transport"] == nil {
			s.Statuses["transport"] = make([]int, n)
		}
	}
	for _, ep := range endpoints {
		s.OKPerSec[ep] = make([]float64, n)
	}
	for i, b := range t.buckets {
		sent := 0
		for e := range numEndpoints {
			s.OKPerSec[endpoints[e]][i] = round(float64(b.ok[e]) / width)
			sent += b.sent[e]
		}
		for c, k := range b.statuses {
			s.Statuses[strconv.Itoa(c)][i] += k
		}
		if b.transport > 0 {
			s.Statuses["transport"][i] += b.transport
		}
		s.T = append(s.T, roundTo(float64(i)*width, 6))
		s.SentPerSec = append(s.SentPerSec, round(float64(sent)/width))
		s.Retries = append(s.Retries, b.retries)
		s.Dropped = append(s.Dropped, b.dropped)
		s.latencySeries.add(b.hist)
		for e, ep := range endpoints {
			l := s.ByEndpoint[ep]
			l.add(b.eph[e])
			s.ByEndpoint[ep] = l
		}
	}
	return s
}

// msOf is microseconds as milliseconds with three decimals.
func msOf(us int64) float64 { return math.Round(float64(us)) / 1000 }

// histogram is an endpoint's latency distribution on logarithmic bins:
// Counts[i] attempts took from EdgesMs[i] to EdgesMs[i+1] milliseconds.
type histogram struct {
	Endpoint string    `json:"endpoint"`
	EdgesMs  []float64 `json:"edgesMs"`
	Counts   []int64   `json:"counts"`
}

const histogramBins = 48

// logHistogram bins h (µs) into histogramBins logarithmic bins from its
// smallest to its largest value, widened to whole decades.
func logHistogram(endpoint string, h *hdrhistogram.Histogram) histogram {
	out := histogram{Endpoint: endpoint}
	if h.TotalCount() == 0 {
		return out
	}
	lo := math.Pow(10, math.Floor(math.Log10(float64(max(h.Min(), 1)))))
	hi := math.Pow(10, math.Ceil(math.Log10(float64(h.Max())+1)))
	if hi <= lo {
		hi = lo * 10
	}
	ratio := math.Log(hi / lo)
	for i := range histogramBins + 1 {
		out.EdgesMs = append(out.EdgesMs, roundTo(lo*math.Exp(ratio*float64(i)/histogramBins)/1000, 4))
	}
	out.Counts = make([]int64, histogramBins)
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		mid := float64(bar.From+bar.To) / 2
		i := int(math.Log(max(mid, lo)/lo) / ratio * histogramBins)
		out.Counts[min(max(i, 0), histogramBins-1)] += bar.Count
	}
	return out
}

func roundTo(f float64, digits int) float64 {
	if f == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(f))))
	return math.Round(f*p) / p
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
