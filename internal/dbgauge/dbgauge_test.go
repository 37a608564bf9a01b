package dbgauge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/internal/dbgauge"
	"github.com/provider-ledger/adapter/internal/wait"
)

// source is a read function a test steers: each read blocks until the
// test sends its answer (or its context ends).
type source struct {
	answers chan answer
	reads   atomic.Int32
}

type answer struct {
	v   float64
	err error
}

func newSource() *source { return &source{answers: make(chan answer)} }

func (s *source) read(ctx context.Context) (float64, error) {
	s.reads.Add(1)
	select {
	case a := <-s.answers:
		return a.v, a.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// waitReads waits until src has been read n times.
func waitReads(t *testing.T, src *source, n int32) {
	t.Helper()
	wait.Until(t, fmt.Sprintf("%d reads", n), func() bool { return src.reads.Load() >= n })
}

// readAnswering calls r.Read while the read it starts is answered a.
func readAnswering(t *testing.T, r *dbgauge.Reader[float64], src *source, a answer) dbgauge.Snapshot[float64] {
	t.Helper()
	before := src.reads.Load()
	got := make(chan dbgauge.Snapshot[float64], 1)
	go func() { got <- r.Read() }()
	waitReads(t, src, before+1)
	src.answers <- a
	return <-got
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeClock is a clock a test moves.
type fakeClock struct{ us atomic.Int64 }

func newClock() *fakeClock               { c := &fakeClock{}; c.us.Store(t0.UnixMicro()); return c }
func (c *fakeClock) now() time.Time      { return time.UnixMicro(c.us.Load()).UTC() }
func (c *fakeClock) add(d time.Duration) { c.us.Add(d.Microseconds()) }

// TestReaderKeepsTheLastValue: a read that ends within the budget gives the
// scrape its value, fresh; a failed read leaves the last value read, with
// the time it was read, stale.
func TestReaderKeepsTheLastValue(t *testing.T) {
	t.Parallel()
	src, clock := newSource(), newClock()
	// A budget no read here exceeds: the test answers each read.
	r := dbgauge.New("test", src.read, dbgauge.Options{Budget: time.Hour, Now: clock.now})
	if s := readAnswering(t, r, src, answer{v: 42}); s.Value != 42 || !s.ReadAt.Equal(t0) || !s.Fresh {
		t.Fatalf("a read in time: %+v, want 42 read at %v, fresh", s, t0)
	}
	clock.add(time.Minute)
	if s := readAnswering(t, r, src, answer{err: errors.New("connection refused")}); s.Value != 42 || !s.ReadAt.Equal(t0) || s.Fresh {
		t.Fatalf("after a failed read: %+v, want 42 read at %v, stale", s, t0)
	}
	if s := readAnswering(t, r, src, answer{v: 43}); s.Value != 43 || !s.ReadAt.Equal(t0.Add(time.Minute)) || !s.Fresh {
		t.Fatalf("after the database is back: %+v, want 43, fresh", s)
	}
}

// TestReaderDoesNotWaitPastItsBudget: a scrape whose read does not answer
// returns all the same, with what an earlier read gave; scrapes meanwhile
// start no second read.
func TestReaderDoesNotWaitPastItsBudget(t *testing.T) {
	t.Parallel()
	src, clock := newSource(), newClock()
	r := dbgauge.New("test", src.read, dbgauge.Options{Budget: time.Millisecond, Now: clock.now})
	// Nothing has answered: nothing to serve (Read returns, or the test
	// would hang here).
	for range 3 {
		if s := r.Read(); !s.ReadAt.IsZero() || s.Fresh {
			t.Fatalf("before any read answered: %+v", s)
		}
	}
	if n := src.reads.Load(); n != 1 {
		t.Fatalf("%d reads started by scrapes while one was under way, want 1", n)
	}
	src.answers <- answer{v: 7}
	// The read answered after its scrape gave up. Once it is recorded, a
	// scrape serves its value, stale, while its own read does not answer.
	wait.Until(t, "the late answer to be recorded", func() bool { return !r.Read().ReadAt.IsZero() })
	if s := r.Read(); s.Value != 7 || s.Fresh {
		t.Fatalf("while the second read does not answer: %+v, want 7, stale", s)
	}
	if n := src.reads.Load(); n != 2 {
		t.Fatalf("%d reads, want 2", n)
	}
	src.answers <- answer{v: 8} // let it end
}

// collector exports a Reader's value as test_value, with its status.
type collector struct {
	r    *dbgauge.Reader[float64]
	desc *prometheus.Desc
}

func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; c.r.Describe(ch) }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.r.Read()
	c.r.CollectStatus(ch, s)
	if !s.ReadAt.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, s.Value)
	}
}

// TestReaderSeries: ledgerd_collector_up says whether the values were read
// in this scrape; ledgerd_collector_last_read_timestamp_seconds is absent
// until a read succeeds, then says when. Two collectors' series sit in one
// registry, told apart by their collector label.
func TestReaderSeries(t *testing.T) {
	t.Parallel()
	src, clock := newSource(), newClock()
	slow := dbgauge.New("slow", src.read, dbgauge.Options{Budget: time.Millisecond, Now: clock.now})
	fast := dbgauge.New("fast", func(context.Context) (float64, error) { return 5, nil }, dbgauge.Options{Budget: time.Hour, Now: clock.now})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{slow, prometheus.NewDesc("test_slow", "A value read slowly.", nil, nil)},
		collector{fast, prometheus.NewDesc("test_fast", "A value read at once.", nil, nil)})
	want := `
# HELP ledgerd_collector_last_read_timestamp_seconds When the collector's values in this scrape were read from the database, in Unix seconds; absent until a read succeeds.
# TYPE ledgerd_collector_last_read_timestamp_seconds gauge
ledgerd_collector_last_read_timestamp_seconds{collector="fast"} 1.767323045e+09
# HELP ledgerd_collector_up 1 when the collector's values in this scrape were read from the database during it; 0 when they are those of an earlier read (the database failed, or did not answer within the scrape's budget), or there are none yet.
# TYPE ledgerd_collector_up gauge
ledgerd_collector_up{collector="fast"} 1
ledgerd_collector_up{collector="slow"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ledgerd_collector_up", "ledgerd_collector_last_read_timestamp_seconds"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "test_slow", "test_fast"); err != nil || n != 1 {
		t.Fatalf("%d value series (%v), want test_fast alone", n, err)
	}
	src.answers <- answer{v: 1} // let the slow read end
}
