package keyring

import "github.com/prometheus/client_golang/prometheus"

// Metric descriptions of RegisterMetrics.
var (
	undecryptableDesc = prometheus.NewDesc("ledgerd_keyring_undecryptable_secrets",
		"Active signing secrets this replica skipped at its latest keyring load, by reason: other_kek (encrypted under a KEK it was not given: "+
			"a KEK rotation under way or a wrong LEDGER_KEK), damaged, weak. They open no callback here.",
		[]string{"reason"}, nil)
	kekDesc = prometheus.NewDesc("ledgerd_keyring_kek_info",
		"The KEKs this replica holds, by fingerprint: role current (encrypts) and, during a rotation, previous (only decrypts). Always 1.",
		[]string{"role", "fingerprint"}, nil)
)

// RegisterMetrics registers the Vault's gauges with reg, read at each
// scrape:
//
//   - ledgerd_keyring_undecryptable_secrets{reason}: the active rows the
//     latest Active call skipped, for each SkipReason (0 included);
//   - ledgerd_keyring_kek_info{role, fingerprint}: 1 for the current KEK
//     and, during a rotation, the previous one, so that an operator can
//     check that every replica has the new KEK before re-encrypting.
func (s *Vault) RegisterMetrics(reg prometheus.Registerer) error {
	return reg.Register(storeCollector{s})
}

type storeCollector struct{ s *Vault }

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- undecryptableDesc
	ch <- kekDesc
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range skipReasons {
		ch <- prometheus.MustNewConstMetric(undecryptableDesc, prometheus.GaugeValue, float64(c.s.UndecryptableBy(r)), string(r))
	}
	cur, prev := c.s.KEKFingerprints()
	ch <- prometheus.MustNewConstMetric(kekDesc, prometheus.GaugeValue, 1, "current", cur)
	if prev != "" {
		ch <- prometheus.MustNewConstMetric(kekDesc, prometheus.GaugeValue, 1, "previous", prev)
	}
}
