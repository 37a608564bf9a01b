package callbacks

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/callbacks/claims"
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

func newMetrics(reg prometheus.Registerer, db Decisions, staleAge time.Duration) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_callback_requests_total",
			Help: "Callbacks answered, by endpoint, business outcome (or error) and HTTP status.",
		}, []string{"endpoint", "outcome", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ledgerd_callback_duration_seconds",
			Help:    "Time from receiving a callback to answering it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
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
		if o, ok := db.(outstanding); ok {
			reg.MustRegister(&holdsCollector{db: o, staleAge: staleAge, seen: map[string]bool{}})
		}
	}
	return m
}

// holdsCollector reports the holds outstanding (count and amount per
// currency, and how many are older than the stale-hold age), read from the
// database at scrape time.
type holdsCollector struct {
	db       outstanding
	staleAge time.Duration

	mu   sync.Mutex
	seen map[string]bool // currencies that had holds: reported at zero once they have none
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
}

func (c *holdsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := c.db.OutstandingHolds(ctx, time.Now().Add(-c.staleAge))
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	left := maps.Clone(c.seen)
	for _, o := range out {
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
