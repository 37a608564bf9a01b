package callbacks

import (
	"context"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/dbgauge"
)

// Metrics are the callback server's Prometheus metrics. Label values are
// endpoint names, outcomes, statuses and key fingerprints: bounded sets,
// never IDs.
type Metrics struct {
	requests      *prometheus.CounterVec   // endpoint, outcome, status
	duration      *prometheus.HistogramVec // endpoint
	replays       *prometheus.CounterVec   // endpoint
	undecryptable *prometheus.CounterVec   // endpoint
	inflight      prometheus.Gauge
	txRetries     *prometheus.CounterVec // endpoint
	opens         *prometheus.CounterVec // fingerprint
}

// DurationBuckets are the bounds of ledgerd_callback_duration_seconds.
// The service waits 2 to 3 s for an answer and LEDGER_REQUEST_TIMEOUT is
// 3 s by default: a quarter-second apart from 2 s to 3 s, so that a p99
// near the deadline reads within 0.25 s; 1 s and 2 s, the latency alerts'
// thresholds, are bounds; 3.5, 4 and 5 s catch what the deadline's grace
// lets through.
var DurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, .75, 1, 1.5, 2, 2.25, 2.5, 2.75, 3, 3.5, 4, 5}

func newMetrics(reg prometheus.Registerer, db HoldCounter, staleAge time.Duration, log *slog.Logger) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_callback_requests_total",
			Help: "Callbacks answered, by endpoint, business outcome (or error) and HTTP status.",
		}, []string{"endpoint", "outcome", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ledgerd_callback_duration_seconds",
			Help:    "Time from receiving a callback to answering it.",
			Buckets: DurationBuckets,
		}, []string{"endpoint"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_callback_replays_total",
			Help: "Callbacks answered with the stored response of an earlier request with the same key.",
		}, []string{"endpoint"}),
		undecryptable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_callback_undecryptable_total",
			Help: "Callbacks no active signing secret could open.",
		}, []string{"endpoint"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ledgerd_callback_inflight",
			Help: "Callbacks being processed.",
		}),
		txRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_callback_tx_retries_total",
			Help: "Callback transactions run again after a serialization failure or deadlock.",
		}, []string{"endpoint"}),
		opens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_keyring_opens_total",
			Help: "Callbacks opened, by the fingerprint of the signing secret that opened them: shows when an old secret stops being used.",
		}, []string{"fingerprint"}),
	}
	// Every series an alert may use exists from the start, at zero.
	for _, ep := range claims.Endpoints {
		m.requests.WithLabelValues(ep, "approved", "200")
		m.replays.WithLabelValues(ep)
		m.undecryptable.WithLabelValues(ep)
		m.txRetries.WithLabelValues(ep)
		m.duration.WithLabelValues(ep)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.replays, m.undecryptable, m.inflight, m.txRetries, m.opens)
		if db != nil {
			reg.MustRegister(newHoldsCollector(db, staleAge, log))
		}
	}
	return m
}

// holdsCollector reports the holds outstanding (count and amount per
// currency, and how many are older than the stale-hold age), read from the
// database at scrape time within dbgauge.Budget: while the database is
// slow or unreachable a scrape reports the values last read, with
// ledgerd_collector_up{collector="holds"} 0.
type holdsCollector struct {
	reader *dbgauge.Reader[[]holds.Outstanding]

	mu   sync.Mutex
	seen map[string]bool // currencies that had holds: reported at zero once they have none
}

func newHoldsCollector(db HoldCounter, staleAge time.Duration, log *slog.Logger) *holdsCollector {
	read := func(ctx context.Context) ([]holds.Outstanding, error) {
		return db.OutstandingHolds(ctx, time.Now().Add(-staleAge))
	}
	return &holdsCollector{reader: dbgauge.New("holds", read, dbgauge.Options{Logger: log}), seen: map[string]bool{}}
}

var (
	holdsCountDesc  = prometheus.NewDesc("ledgerd_holds_outstanding", "Holds in status held.", []string{"currency"}, nil)
	holdsAmountDesc = prometheus.NewDesc("ledgerd_holds_outstanding_amount", "Sum of the amounts of holds in status held.", []string{"currency"}, nil)
	holdsStaleDesc  = prometheus.NewDesc("ledgerd_holds_stale", "Holds held for longer than LEDGER_HOLD_MAX_AGE (stale_hold findings).", []string{"currency"}, nil)
)

func (c *holdsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- holdsCountDesc
	ch <- holdsAmountDesc
	ch <- holdsStaleDesc
	c.reader.Describe(ch)
}

func (c *holdsCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.reader.Read()
	c.reader.CollectStatus(ch, snap)
	if snap.ReadAt.IsZero() {
		return // nothing read yet: no value is better than a made-up zero
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	left := maps.Clone(c.seen)
	for _, o := range snap.Value {
		c.seen[o.Currency] = true
		delete(left, o.Currency)
		ch <- prometheus.MustNewConstMetric(holdsCountDesc, prometheus.GaugeValue, float64(o.Count), o.Currency)
		ch <- prometheus.MustNewConstMetric(holdsAmountDesc, prometheus.GaugeValue, o.Amount.InexactFloat64(), o.Currency)
		ch <- prometheus.MustNewConstMetric(holdsStaleDesc, prometheus.GaugeValue, float64(o.Stale), o.Currency)
	}
	// A currency whose holds were all settled is at zero, not gone: a
	// vanished series would read as "no data" to an alert.
	for cur := range left {
		for _, d := range []*prometheus.Desc{holdsCountDesc, holdsAmountDesc, holdsStaleDesc} {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, 0, cur)
		}
	}
}

// Metrics returns the server's metrics, for tests and dashboards' docs.
func (s *Handler) Metrics() *Metrics { return s.m }

// Undecryptable returns the counter of undecryptable requests of endpoint.
func (m *Metrics) Undecryptable(endpoint string) prometheus.Counter {
	return m.undecryptable.WithLabelValues(endpoint)
}

// Inflight returns the in-flight gauge.
func (m *Metrics) Inflight() prometheus.Gauge { return m.inflight }

// Replays returns the counter of replays served for endpoint.
func (m *Metrics) Replays(endpoint string) prometheus.Counter {
	return m.replays.WithLabelValues(endpoint)
}

// Opens returns the counter of callbacks opened by the key of fingerprint.
func (m *Metrics) Opens(fingerprint string) prometheus.Counter {
	return m.opens.WithLabelValues(fingerprint)
}

// Requests returns the counter of callbacks of endpoint answered with
// outcome and status.
func (m *Metrics) Requests(endpoint, outcome string, status int) prometheus.Counter {
	return m.requests.WithLabelValues(endpoint, outcome, strconv.Itoa(status))
}

// TxRetries returns the counter of transaction retries of endpoint.
func (m *Metrics) TxRetries(endpoint string) prometheus.Counter {
	return m.txRetries.WithLabelValues(endpoint)
}
