package reconciliation

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/ledger"
)

// The reconciliation metrics, read from the database at scrape time: every
// replica reports the last run of any replica (scheduled runs go to one
// replica at a time), and an acknowledgement shows at the next scrape.
var (
	lastRunDesc = prometheus.NewDesc("ledgerd_reconciliation_last_run_timestamp_seconds",
		"When the last reconciliation run (of any replica) finished, in Unix seconds; 0 before the first.", nil, nil)
	findingsDesc = prometheus.NewDesc("ledgerd_reconciliation_findings",
		"Findings of the last reconciliation run that are neither fixed nor acknowledged, by severity.", []string{"severity"}, nil)
)

// metricsTimeout bounds the query of one scrape.
const metricsTimeout = 2 * time.Second

// LastRunReader reads the last finished run's time and open findings
// (*store.DB implements it).
type LastRunReader interface {
	LastRun(ctx context.Context) (ledger.LastRun, error)
}

// RegisterMetrics registers the reconciliation metrics of db with reg:
// ledgerd_reconciliation_last_run_timestamp_seconds and
// ledgerd_reconciliation_findings{severity} for both severities, present
// (at zero) before the first run. While the database cannot be read a
// scrape reports the last values read, so that an alert on them neither
// fires nor clears because of the outage; log gets the error at debug
// level (nil: discard).
func RegisterMetrics(reg prometheus.Registerer, db LastRunReader, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return reg.Register(&collector{db: db, log: log, last: ledger.LastRun{Open: map[string]int{}}})
}

type collector struct {
	db  LastRunReader
	log *slog.Logger

	mu   sync.Mutex
	last ledger.LastRun
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lastRunDesc
	ch <- findingsDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsTimeout)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, err := c.db.LastRun(ctx); err != nil {
		c.log.Debug("reconciliation metrics: reading the last run", "err", err)
	} else {
		c.last = last
	}
	var at float64
	if !c.last.FinishedOn.IsZero() {
		at = float64(c.last.FinishedOn.UnixMicro()) / 1e6
	}
	ch <- prometheus.MustNewConstMetric(lastRunDesc, prometheus.GaugeValue, at)
	for _, sev := range []string{SeverityWarning, SeverityCritical} {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, float64(c.last.Open[sev]), sev)
	}
}
