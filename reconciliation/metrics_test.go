package reconciliation_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/reconciliation"
)

// gather reads the reconciliation metrics of reg: "last" and the findings
// by severity; a series that is absent is missing from the map.
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
			}
		}
	}
	return out
}

// TestMetrics: what the alerts read (deploy/prometheus/alerts.yml) is there
// before the first run, then follows the last run and the
// acknowledgements made since.
func TestMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	reg := prometheus.NewRegistry()
	if err := reconciliation.RegisterMetrics(reg, b.db, nil); err != nil {
		t.Fatal(err)
	}
	expect := func(t *testing.T, last time.Time, warning, critical float64) {
		t.Helper()
		want := map[string]float64{"last": 0, "warning": warning, "critical": critical}
		if !last.IsZero() {
			want["last"] = float64(last.UnixMicro()) / 1e6
		}
		got := gather(t, reg)
		if len(got) != len(want) {
			t.Fatalf("series %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s = %v, want %v (all: %v)", k, got[k], v, got)
			}
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
