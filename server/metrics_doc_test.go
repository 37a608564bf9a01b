package server_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// sample is one line of the text exposition: a series and its labels.
var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// scrape returns the ledgerd_* series of a ledgerd's /metrics by family,
// each series as its labels, and its value under "__value__".
func scrape(t *testing.T, admin string) map[string][]map[string]string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]string{}
	for line := range strings.SplitSeq(string(body), "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], "ledgerd_") {
			continue
		}
		name := m[1]
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && strings.HasSuffix(base, "_seconds") {
				name = base
			}
		}
		labels := map[string]string{"__value__": m[3]}
		for _, kv := range labelPair.FindAllStringSubmatch(m[2], -1) {
			labels[kv[1]] = kv[2]
		}
		out[name] = append(out[name], labels)
	}
	if len(out) == 0 {
		t.Fatalf("no ledgerd_ series in /metrics:\n%s", body)
	}
	return out
}

// documented returns the metric names of the metrics table of
// docs/operations.md (the section "## Metrics") and the ledgerd_ names of
// deploy/metrics.txt.
func documented(t *testing.T) (readme, metricsTxt []string) {
	t.Helper()
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/operations.md has no ## Metrics section")
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	row := regexp.MustCompile("(?m)^\\| `(ledgerd_[a-z0-9_]+)`")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		readme = append(readme, m[1])
	}
	b, err = os.ReadFile("../deploy/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "ledgerd_") {
			metricsTxt = append(metricsTxt, line)
		}
	}
	return readme, metricsTxt
}

// TestMetricsDocumented: what a started ledgerd exports is what the metrics
// table of docs/operations.md and deploy/metrics.txt list, each way; every
// series is there from the start (at zero), but those per currency, which
// appear with the currency's first hold and stay (at zero once its holds are
// settled), and the time of the last reconciliation, absent (not 0) until a
// run has finished.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	secret := randomKey(t)
	url := storetest.URL(t)
	d := start(t, config(t, "DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-m",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret)))

	atStart := scrape(t, d.admin)
	// The series the alerts read, with the label values they use.
	for name, labels := range map[string]map[string]string{
		"ledgerd_callback_tx_retries_total": {"endpoint": "authorize"},
		"ledgerd_callback_requests_total":   {"endpoint": "capture", "outcome": "approved", "status": "200"},
		"ledgerd_keyring_age_seconds":       {},
		"ledgerd_keyring_active_keys":       {},
		"ledgerd_keyring_opens_total":       {},
		"ledgerd_reconciliation_findings":   {"severity": "critical"},
		"ledgerd_collector_up":              {"collector": "reconciliation"},
	} {
		if !hasSeries(atStart[name], labels) {
			t.Errorf("at start, /metrics has no %s%v: %v", name, labels, atStart[name])
		}
	}
	if s, ok := atStart["ledgerd_reconciliation_last_run_timestamp_seconds"]; ok {
		t.Errorf("before the first reconciliation run, /metrics has its time: %v", s)
	}

	// A hold in USD: the per-currency series appear.
	db, err := store.Open(context.Background(), url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	a := storetest.Account(t, db, storetest.AccountOpts{Owner: "m-alice", Funds: "100.00", Source: "m-card"})
	hold := storetest.Hold(t, db, "m-payout", a.OwnerExternalID, "m-card", "10.00")
	// A run finishes: its time appears.
	if code := post(t, "http://"+d.admin+"/v1/reconciliation/runs", `{}`); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("POST /v1/reconciliation/runs: %d", code)
	}
	later := scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		return hasSeries(m["ledgerd_holds_outstanding"], map[string]string{"currency": "USD", "__value__": "1"}) &&
			len(m["ledgerd_reconciliation_last_run_timestamp_seconds"]) == 1
	})
	// Settled, its currency's series stay, at zero.
	storetest.Settle(t, db, "m-payout", hold.Reference, true)
	names := []string{"ledgerd_holds_outstanding", "ledgerd_holds_outstanding_amount", "ledgerd_holds_stale"}
	scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		for _, name := range names {
			if s := m[name]; len(s) != 1 || s[0]["currency"] != "USD" || s[0]["__value__"] != "0" {
				return false
			}
		}
		return true
	})

	var exported []string
	for name := range later {
		exported = append(exported, name)
		if _, ok := atStart[name]; !ok && !strings.HasPrefix(name, "ledgerd_holds_") && name != "ledgerd_reconciliation_last_run_timestamp_seconds" {
			t.Errorf("%s is not there from the start", name)
		}
	}
	slices.Sort(exported)
	checkDocumented(t, exported)
}

// checkDocumented holds the metrics table of docs/operations.md and
// deploy/metrics.txt to the series ledgerd exports, both ways.
func checkDocumented(t *testing.T, exported []string) {
	t.Helper()
	readme, metricsTxt := documented(t)
	for _, doc := range []struct {
		where string
		names []string
	}{{"the metrics table of docs/operations.md", readme}, {"deploy/metrics.txt", metricsTxt}} {
		for _, name := range exported {
			if !slices.Contains(doc.names, name) {
				t.Errorf("%s does not list %s, which ledgerd exports", doc.where, name)
			}
		}
		for _, name := range doc.names {
			if !slices.Contains(exported, name) {
				t.Errorf("%s lists %s, which ledgerd does not export", doc.where, name)
			}
		}
	}
	if t.Failed() {
		t.Logf("ledgerd exports: %s", strings.Join(exported, " "))
	}
}

// hasSeries says whether one of series has every label (and __value__) of
// labels.
func hasSeries(series []map[string]string, labels map[string]string) bool {
	return slices.ContainsFunc(series, func(m map[string]string) bool {
		for k, v := range labels {
			if m[k] != v {
				return false
			}
		}
		return true
	})
}

// scrapeUntil scrapes admin's /metrics until ok holds of what it serves: a
// scrape waits for the database a bounded time, then serves what was read
// before.
func scrapeUntil(t *testing.T, admin string, ok func(map[string][]map[string]string) bool) map[string][]map[string]string {
	t.Helper()
	var m map[string][]map[string]string
	wait.Until(t, "/metrics to show what the test waits for", func() bool {
		m = scrape(t, admin)
		return ok(m)
	})
	return m
}
