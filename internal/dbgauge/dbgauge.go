// Package dbgauge serves metrics that ledgerd reads from the database at
// scrape time (the holds outstanding, the last reconciliation run) without
// letting the database set the pace of a scrape.
//
// A Reader runs its read in the background, at most one at a time: a scrape
// starts one unless one is under way, and waits for it at most Budget. A
// read that ends in time gives the scrape fresh values; one that fails,
// or is still running when the budget is spent, leaves the scrape the
// values of the latest read that succeeded, marked stale. So /metrics
// answers within the budget however busy or slow the database is, and a
// gauge never vanishes because one read failed: an alert's `for:` wait on
// it is not reset, and a panel keeps its line.
//
// Each Reader exports two series of its own, with the const label
// collector="<name>":
//
//   - ledgerd_collector_up: 1 when this scrape's values were read during
//     it, 0 when they are those of an earlier read (or there are none yet);
//   - ledgerd_collector_last_read_timestamp_seconds: when the values served
//     were read, in Unix seconds; absent until a read succeeds.
package dbgauge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Budget is how long a scrape waits for a read before it serves the
// latest values read: a read takes tens of milliseconds on a ledger of
// millions of payouts, and Prometheus's scrape timeouts are seconds.
const Budget = 500 * time.Millisecond

// readTimeout bounds one read; a scrape stops waiting for it long before.
const readTimeout = 10 * time.Second

// Options are a Reader's optional settings.
type Options struct {
	// Budget is how long a scrape waits for a read; 0 means Budget.
	Budget time.Duration
	// Timeout bounds one read; 0 means 10 s.
	Timeout time.Duration
	// Logger gets a failed read at debug level (nil: discard). A read
	// fails while the database is unreachable, which readiness and the
	// pool's metrics already report.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Reader reads a value of type T from the database for the scrapes of one
// collector, and exports the freshness of what it serves. Its methods are
// safe for concurrent use.
type Reader[T any] struct {
	name   string
	read   func(context.Context) (T, error)
	o      Options
	upDesc *prometheus.Desc
	tsDesc *prometheus.Desc

	mu      sync.Mutex
	last    T
	lastAt  time.Time // when last was read; zero before the first success
	running *attempt  // the read under way; nil when none
}

// attempt is one read: done is closed when it ends, ok set before.
type attempt struct {
	done chan struct{}
	ok   bool
}

// New returns a Reader named name (the collector label) whose reads call
// read.
func New[T any](name string, read func(context.Context) (T, error), o Options) *Reader[T] {
	if o.Budget <= 0 {
		o.Budget = Budget
	}
	if o.Timeout <= 0 {
		o.Timeout = readTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	labels := prometheus.Labels{"collector": name}
	return &Reader[T]{
		name: name, read: read, o: o,
		upDesc: prometheus.NewDesc("ledgerd_collector_up",
			"1 when the collector's values in this scrape were read from the database during it; 0 when they are those of an earlier read "+
				"(the database failed, or did not answer within the scrape's budget), or there are none yet.", nil, labels),
		tsDesc: prometheus.NewDesc("ledgerd_collector_last_read_timestamp_seconds",
			"When the collector's values in this scrape were read from the database, in Unix seconds; absent until a read succeeds.", nil, labels),
	}
}

// Snapshot is what a scrape gets from Read.
type Snapshot[T any] struct {
	// Value is the latest value read successfully; meaningful only when
	// ReadAt is not zero.
	Value T
	// ReadAt is when Value was read; zero when no read has succeeded yet.
	ReadAt time.Time
	// Fresh says Value comes from the read this scrape waited for: it
	// ended within the budget, and succeeded.
	Fresh bool
}

// Read starts a read unless one is under way, waits for it at most the
// budget, and returns the latest value read successfully.
func (r *Reader[T]) Read() Snapshot[T] {
	a := r.start()
	timer := time.NewTimer(r.o.Budget)
	defer timer.Stop()
	fresh := false
	select {
	case <-a.done:
		fresh = a.ok
	case <-timer.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return Snapshot[T]{Value: r.last, ReadAt: r.lastAt, Fresh: fresh}
}

// start returns the read under way, starting one when none is.
func (r *Reader[T]) start() *attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = &attempt{done: make(chan struct{})}
		go r.run(r.running)
	}
	return r.running
}

// run reads once and records the result.
func (r *Reader[T]) run(a *attempt) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Timeout)
	defer cancel()
	v, err := r.read(ctx)
	at := r.o.Now()
	r.mu.Lock()
	if err == nil {
		r.last, r.lastAt = v, at
	}
	a.ok = err == nil
	r.running = nil
	r.mu.Unlock()
	close(a.done)
	if err != nil {
		r.o.Logger.Debug("metrics: reading from the database", "collector", r.name, "err", err)
	}
}

// Describe sends the descriptions of the freshness series.
func (r *Reader[T]) Describe(ch chan<- *prometheus.Desc) {
	ch <- r.upDesc
	ch <- r.tsDesc
}

// CollectStatus sends the freshness series of a snapshot.
func (r *Reader[T]) CollectStatus(ch chan<- prometheus.Metric, s Snapshot[T]) {
	up := 0.0
	if s.Fresh {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(r.upDesc, prometheus.GaugeValue, up)
	if !s.ReadAt.IsZero() {
		ch <- prometheus.MustNewConstMetric(r.tsDesc, prometheus.GaugeValue, float64(s.ReadAt.UnixMicro())/1e6)
	}
}
