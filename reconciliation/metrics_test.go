package reconciliation_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/reconciliation"
)

// gather reads the reconciliation metrics of reg: "last" and the findings
// by severity, and "up", whether they were read in this scrape; a series
// that is absent is missing from the map.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "ledgerd_reconciliation_last_run_timestamp_seconds":
				out["last"] = m.GetGauge().GetValue()
			case "ledgerd_reconciliation_findings":
				out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			case "ledgerd_collector_up":
				out["up"] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// TestMetrics: what the alerts read (deploy/prometheus/alerts.yml) is there
// before the first run (the findings at zero; the time of the last run
// absent, not 0), then follows the last run and the acknowledgements made
// since.
func TestMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	reg := prometheus.NewRegistry()
	if err := reconciliation.RegisterMetrics(reg, b.db, nil); err != nil {
		t.Fatal(err)
	}
	// A scrape waits for the database at most dbgauge.Budget, then serves
	// the values read before (up 0): wait for a scrape that read them.
	expect := func(t *testing.T, last time.Time, warning, critical float64) {
		t.Helper()
		want := map[string]float64{"warning": warning, "critical": critical, "up": 1}
		if !last.IsZero() {
			want["last"] = float64(last.UnixMicro()) / 1e6
		}
		var got map[string]float64
		for deadline := time.Now().Add(30 * time.Second); !maps.Equal(got, want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("series %v, want %v", got, want)
			}
			got = gather(t, reg)
		}
	}
	expect(t, time.Time{}, 0, 0)

	s := b.sender(t, "met-", "100.00")
	b.hold(t, s, "10.00", b.clock().Add(-reconciliation.DefaultHoldMaxAge-time.Minute))               // stale: a warning
	b.exec(t, `UPDATE accounts SET balance = balance + 1 WHERE account_id = $1`, s.account.AccountID) // drift: critical
	rep := b.run(t, false)
	var criticals []string
	for _, f := range rep.Findings {
		if f.Severity == reconciliation.SeverityCritical {
			criticals = append(criticals, f.FindingID)
		}
	}
	if len(criticals) == 0 {
		t.Fatalf("no critical finding: %+v", rep.Findings)
	}
	expect(t, rep.FinishedOn, 1, float64(len(criticals)))

	for _, id := range criticals {
		if _, err := b.reconciler(t).Acknowledge(context.Background(), id, "known: a test corrupted it"); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, rep.FinishedOn, 1, 0) // before any new run

	// A later run is the last one: the drift undone, the stale hold still
	// there.
	b.exec(t, `UPDATE accounts SET balance = balance - 1 WHERE account_id = $1`, s.account.AccountID)
	b.setNow(b.clock().Add(time.Minute))
	rep = b.run(t, false)
	expect(t, rep.FinishedOn, 1, 0)
}
