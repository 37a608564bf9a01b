package reconciliation

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/internal/dbgauge"
	"github.com/provider-ledger/adapter/ledger"
)

// The reconciliation metrics, read from the database at scrape time: every
// replica reports the last run of any replica (scheduled runs go to one
// replica at a time), and an acknowledgement shows at the next scrape.
var (
	lastRunDesc = prometheus.NewDesc("ledgerd_reconciliation_last_run_timestamp_seconds",
		"When the last reconciliation run (of any replica) finished, in Unix seconds; absent before the first.", nil, nil)
	findingsDesc = prometheus.NewDesc("ledgerd_reconciliation_findings",
		"Findings of the last reconciliation run that are neither fixed nor acknowledged, by severity.", []string{"severity"}, nil)
)

// LastRunReader reads the last finished run's time and open findings
// (*store.DB implements it).
type LastRunReader interface {
	LastRun(ctx context.Context) (ledger.LastRun, error)
}

// RegisterMetrics registers the reconciliation metrics of db with reg:
// ledgerd_reconciliation_findings{severity} for both severities, present
// (at zero) before the first run, and
// ledgerd_reconciliation_last_run_timestamp_seconds, absent until a run
// has finished (a 0 would read as a run in 1970). A scrape waits for the
// database at most dbgauge.Budget: while it is slow or unreachable a
// scrape reports the last values read, so that an alert on them neither
// fires nor clears because of the outage, with
// ledgerd_collector_up{collector="reconciliation"} 0. log gets a failed
// read at debug level (nil: discard).
func RegisterMetrics(reg prometheus.Registerer, db LastRunReader, log *slog.Logger) error {
	read := func(ctx context.Context) (ledger.LastRun, error) { return db.LastRun(ctx) }
	return reg.Register(&collector{reader: dbgauge.New("reconciliation", read, dbgauge.Options{Logger: log})})
}

type collector struct {
	reader *dbgauge.Reader[ledger.LastRun]
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lastRunDesc
	ch <- findingsDesc
	c.reader.Describe(ch)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.reader.Read()
	c.reader.CollectStatus(ch, snap)
	if !snap.Value.FinishedOn.IsZero() {
		at := float64(snap.Value.FinishedOn.UnixMicro()) / 1e6
		ch <- prometheus.MustNewConstMetric(lastRunDesc, prometheus.GaugeValue, at)
	}
	// Before the first read, and before the first run, no finding is open.
	for _, sev := range []string{SeverityWarning, SeverityCritical} {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, float64(snap.Value.Open[sev]), sev)
	}
}
