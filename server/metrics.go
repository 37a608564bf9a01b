package server

import (
	"log/slog"
	"math"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/provider-ledger/adapter/internal/buildinfo"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
)

// registerMetrics registers what the keyring and reconciliation report,
// once the keyring is loaded: ledgerd_keyring_age_seconds,
// ledgerd_keyring_active_keys and the reconciliation metrics. Every series
// the alerts (deploy/prometheus/alerts.yml) read exists from the start.
func (d *daemon) registerMetrics() error {
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ledgerd_keyring_age_seconds",
		Help: "Time since this replica last loaded its keyring successfully (reloads every 2 s; over 10 s it refuses callbacks)."},
		func() float64 {
			age := d.loader.Age()
			if age == math.MaxInt64 { // never loaded
				return math.Inf(1)
			}
			return age.Seconds()
		})
	active := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ledgerd_keyring_active_keys",
		Help: "Signing secrets this replica's keyring holds active (0: every callback is refused)."},
		func() float64 { return float64(d.keys.Len()) })
	for _, c := range []prometheus.Collector{age, active} {
		if err := d.reg.Register(c); err != nil {
			return err
		}
	}
	return reconciliation.RegisterMetrics(d.reg, d.metricsDB, d.log)
}

// metricsHandler serves /metrics. Its answer is bounded: the collectors
// that read the database do so on a pool of their own and wait for it at
// most dbgauge.Budget, serving their last values after that. A collector
// that fails drops its own series, not the scrape.
func (d *daemon) metricsHandler() http.Handler {
	return promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{
		Registry:      d.reg,
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	})
}

// initSeries makes the callback series of the keys active at start exist
// at zero (ledgerd_keyring_opens_total{fingerprint}), so that a rotation's
// "old key dropping to zero" has a line from the start.
func (d *daemon) initSeries() {
	for _, k := range d.keys.Keys() {
		d.cb.Metrics().Opens(k.Fingerprint())
		clear(k.Secret)
	}
}

// poolCollector exports the database pool's statistics.
type poolCollector struct {
	db                                                      *store.DB
	total, idle, acquired, constructing, maxConns           *prometheus.Desc
	acquireCount, acquireDuration, emptyAcquire, canceled   *prometheus.Desc
	primaryChanges, splitBrains, unreplicated, withheld     *prometheus.Desc
	groupBatches, groupBatched, groupFallbacks, groupQueued *prometheus.Desc
}

func newPoolCollector(db *store.DB) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ledgerd_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{
		db:              db,
		total:           d("connections", "Connections open in the pool."),
		idle:            d("idle_connections", "Idle connections in the pool."),
		acquired:        d("acquired_connections", "Connections in use."),
		constructing:    d("constructing_connections", "Connections being opened."),
		maxConns:        d("max_connections", "Largest number of connections the pool opens."),
		acquireCount:    d("acquires_total", "Connections acquired from the pool."),
		acquireDuration: d("acquire_seconds_total", "Time spent waiting to acquire connections."),
		emptyAcquire:    d("empty_acquires_total", "Acquires that had to wait for a connection."),
		canceled:        d("canceled_acquires_total", "Acquires canceled by their context."),
		primaryChanges: prometheus.NewDesc("ledgerd_db_primary_changes_total",
			"Changes of the database primary seen (a promotion: a higher timeline; or another cluster).", nil, nil),
		splitBrains: prometheus.NewDesc("ledgerd_db_split_brains_total",
			"Episodes of a second database answering read-write beside the primary (refused; /readyz fails meanwhile).", nil, nil),
		withheld: prometheus.NewDesc("ledgerd_unreplicated_answers_withheld_total",
			"Successes answered 503 instead because their commit was not confirmed by the synchronous standby.", nil, nil),
		unreplicated: prometheus.NewDesc("ledgerd_db_unreplicated_commits_total",
			"Commits whose wait for the synchronous standby was cancelled: committed locally, not known replicated, not acknowledged.", nil, nil),
		groupBatches: prometheus.NewDesc("ledgerd_group_commit_batches_total",
			"Transactions of two or more callbacks committed under group commit (LEDGER_GROUP_COMMIT).", nil, nil),
		groupBatched: prometheus.NewDesc("ledgerd_group_commit_callbacks_total",
			"Callbacks committed in those transactions.", nil, nil),
		groupFallbacks: prometheus.NewDesc("ledgerd_group_commit_fallbacks_total",
			"Batches that failed as a whole, whose callbacks were then run one by one.", nil, nil),
		groupQueued: prometheus.NewDesc("ledgerd_group_commit_queued",
			"Callbacks waiting for a group commit lane.", nil, nil),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.total, c.idle, c.acquired, c.constructing, c.maxConns, c.acquireCount, c.acquireDuration, c.emptyAcquire, c.canceled, c.primaryChanges, c.splitBrains, c.unreplicated, c.withheld,
		c.groupBatches, c.groupBatched, c.groupFallbacks, c.groupQueued} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.db.Stats()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	k := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	g(c.total, float64(s.Total))
	g(c.idle, float64(s.Idle))
	g(c.acquired, float64(s.Acquired))
	g(c.constructing, float64(s.Constructing))
	g(c.maxConns, float64(s.Max))
	k(c.acquireCount, float64(s.AcquireCount))
	k(c.acquireDuration, s.AcquireDuration.Seconds())
	k(c.emptyAcquire, float64(s.EmptyAcquireCount))
	k(c.canceled, float64(s.CanceledAcquireCount))
	t := c.db.Topology()
	k(c.primaryChanges, float64(t.PrimaryChanges))
	k(c.splitBrains, float64(t.SplitBrains))
	k(c.unreplicated, float64(t.Unreplicated))
	k(c.withheld, float64(t.Withheld))
	var batches, batched, fallbacks, queued int64
	if gc := c.db.GroupCommit(); gc != nil {
		batches, batched, fallbacks, queued = gc.Batches.Load(), gc.Batched.Load(), gc.Fallbacks.Load(), gc.Queued.Load()
	}
	k(c.groupBatches, float64(batches))
	k(c.groupBatched, float64(batched))
	k(c.groupFallbacks, float64(fallbacks))
	g(c.groupQueued, float64(queued))
}

// newBuildInfo is ledgerd_build_info{version,revision,goversion} 1.
func newBuildInfo() prometheus.Collector {
	in := buildinfo.Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ledgerd_build_info", Help: "The running build: always 1.",
		ConstLabels: prometheus.Labels{"version": in.Version, "revision": in.Revision, "goversion": in.GoVersion}})
	g.Set(1)
	return g
}
