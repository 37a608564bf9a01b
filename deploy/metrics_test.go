package deploy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// series is one sample line of a /metrics exposition.
type series struct {
	name   string
	labels map[string]string
}

// served is what a ledgerd serves on /metrics: its series, and each
// family's TYPE.
type served struct {
	series []series
	types  map[string]string
}

var (
	expoLine  = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+`)
	expoLabel = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	expoType  = regexp.MustCompile(`^# TYPE (\S+) (\S+)`)
)

func parseExposition(text string) served {
	s := served{types: map[string]string{}}
	for line := range strings.SplitSeq(text, "\n") {
		if m := expoType.FindStringSubmatch(line); m != nil {
			s.types[m[1]] = m[2]
			continue
		}
		m := expoLine.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(line, "#") {
			continue
		}
		labels := map[string]string{}
		for _, kv := range expoLabel.FindAllStringSubmatch(m[2], -1) {
			labels[kv[1]] = kv[2]
		}
		s.series = append(s.series, series{m[1], labels})
	}
	return s
}

// typeOf is the TYPE of the family of a series name.
func (s served) typeOf(name string) string {
	if t, ok := s.types[name]; ok {
		return t
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			return s.types[base]
		}
	}
	return ""
}

// ledgerdAtStart starts a ledgerd on a fresh database as an operator would
// (signing secret given, no run yet, no hold yet), and returns what its
// /metrics serves once its database-read collectors have read (a scrape
// waits for them a bounded time).
func ledgerdAtStart(t *testing.T) served {
	t.Helper()
	key, kek := make([]byte, 32), make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": storetest.URL(t), "LEDGER_LISTEN": "127.0.0.1:0", "LEDGER_ADMIN_LISTEN": "127.0.0.1:0",
		"LEDGER_DATA_DIR": t.TempDir(), "LEDGER_PROVIDER_ID": "bank-deploy", "LEDGER_RECONCILE_EVERY": "0",
		"LEDGER_SIGNING_SECRETS": base64.StdEncoding.EncodeToString(key), "LEDGER_KEK": base64.StdEncoding.EncodeToString(kek)}
	cfg, err := server.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	admin, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, nil, server.Hooks{Started: func(_, a string) { admin <- a }}) }()
	t.Cleanup(func() { cancel(); <-done })
	var addr string
	select {
	case addr = <-admin:
	case err := <-done:
		t.Fatalf("ledgerd stopped: %v", err)
	}
	var text string
	wait.Until(t, "the holds and reconciliation collectors to read the database", func() bool {
		text = get(t, "http://"+addr+"/metrics")
		return collectorsUp(text)
	})
	return parseExposition(text)
}

// collectorsUp says whether an exposition has every database collector up.
func collectorsUp(text string) bool {
	return strings.Contains(text, `ledgerd_collector_up{collector="holds"} 1`) &&
		strings.Contains(text, `ledgerd_collector_up{collector="reconciliation"} 1`)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// selector is a metric name and its label matchers, as a query writes them.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

var matcherRE = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)

// selectors returns the selectors of a PromQL expression: each metric name
// metricNames finds, at each place it appears, with its {…} matchers.
func selectors(expr string) []selector {
	var out []selector
	for _, name := range metricNames(expr) {
		re := regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:"])` + regexp.QuoteMeta(name) + `\s*(\{[^}]*\})?`)
		for _, m := range re.FindAllStringSubmatch(expr, -1) {
			sel := selector{name: name}
			for _, kv := range matcherRE.FindAllStringSubmatch(m[1], -1) {
				sel.matchers = append(sel.matchers, matcher{kv[1], kv[2], kv[3]})
			}
			out = append(out, sel)
		}
	}
	return out
}

// matchesAtStart says whether a ledgerd at start serves a series sel
// selects. Matchers of job and instance, labels Prometheus adds, are left
// out; Grafana variables match anything.
func (s served) matchesAtStart(sel selector) bool {
	return slices.ContainsFunc(s.series, func(x series) bool {
		if x.name != sel.name {
			return false
		}
		for _, m := range sel.matchers {
			if m.label == "job" || m.label == "instance" || strings.Contains(m.value, "$") {
				continue
			}
			v := x.labels[m.label]
			var ok bool
			switch m.op {
			case "=":
				ok = v == m.value
			case "!=":
				ok = v != m.value
			default:
				ok = regexp.MustCompile("^(?:" + m.value + ")$").MatchString(v)
				if m.op == "!~" {
					ok = !ok
				}
			}
			if !ok {
				return false
			}
		}
		return true
	})
}

// absentAtStart are the series a fresh ledgerd does not serve yet, and
// what their absence means.
var absentAtStart = map[string]string{
	"ledgerd_holds_outstanding":                         "zero: no currency has had a hold yet",
	"ledgerd_holds_outstanding_amount":                  "zero: no currency has had a hold yet",
	"ledgerd_holds_stale":                               "zero: no currency has had a hold yet",
	"ledgerd_reconciliation_last_run_timestamp_seconds": "never: no run has finished yet",
}

// orZero is a query's "or vector(0)" (with on() when the left side keeps
// labels): absence read as zero.
var orZero = regexp.MustCompile(`\bor\s+(on\s*\(\s*\)\s*)?vector\(0\)`)

// TestMetricsServedAtStart: every metric the dashboard and the alert rules
// read is served by a ledgerd from its start, but those absentAtStart
// names; and where a query's series may be absent, the query says what
// absence means: a panel shows 0 (or vector(0)) or says so (noValue), an
// alert on the time of the last run is written for absence.
func TestMetricsServedAtStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := ledgerdAtStart(t)
	check := func(where, expr string, absenceHandled bool) {
		for _, sel := range selectors(expr) {
			if prometheusOwn[sel.name] || start.matchesAtStart(sel) {
				continue
			}
			if _, known := absentAtStart[sel.name]; !known && !slices.ContainsFunc(start.series, func(x series) bool { return x.name == sel.name }) {
				t.Errorf("%s reads %s, which a ledgerd at start does not serve", where, sel.name)
			}
			if !absenceHandled {
				t.Errorf("%s: %s%v selects nothing at start, and the query does not say what absence means: %s", where, sel.name, sel.matchers, expr)
			}
		}
	}
	for _, p := range allPanels(b.dash.Panels) {
		for _, tg := range p.Targets {
			check(fmt.Sprintf("panel %q", p.Title), tg.Expr, orZero.MatchString(tg.Expr) || p.FieldConfig.Defaults.NoValue != "")
		}
	}
	for _, r := range b.rules {
		// An alert on a series absent at start is quiet until it appears,
		// which is right when absence means zero; an alert on the time of
		// the last run must fire when no run ever finishes.
		handled := !strings.Contains(r.Expr, "ledgerd_reconciliation_last_run_timestamp_seconds") || strings.Contains(r.Expr, "unless")
		check("alert "+r.Alert, r.Expr, handled)
	}
}

// overTime is a gauge read through an _over_time function over a range.
var overTime = `[a-z]+_over_time\s*\(\s*`

// TestAlertsSurviveAFailedScrape: every gauge an alert reads is read through
// an _over_time function over a range (a failed scrape marks a target's
// series stale; a bare selector would return nothing and reset the wait of
// `for:`), and counters through rate() or increase().
func TestAlertsSurviveAFailedScrape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	start := ledgerdAtStart(t)
	for _, r := range b.rules {
		for _, name := range metricNames(r.Expr) {
			sel := regexp.QuoteMeta(name) + `\s*(\{[^}]*\})?\s*\[`
			all := len(regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:"])`+regexp.QuoteMeta(name)+`\b`).FindAllString(r.Expr, -1))
			switch typ := start.typeOf(name); {
			case prometheusOwn[name]:
			case typ == "gauge":
				if n := len(regexp.MustCompile(overTime+sel).FindAllString(r.Expr, -1)); n != all {
					t.Errorf("alert %s reads the gauge %s %d times, %d of them through an _over_time function: a failed scrape resets its wait", r.Alert, name, all, n)
				}
			case typ == "counter" || typ == "histogram":
				if n := len(regexp.MustCompile(`(rate|increase)\s*\(\s*`+sel).FindAllString(r.Expr, -1)); n != all {
					t.Errorf("alert %s reads the counter %s outside rate() or increase()", r.Alert, name)
				}
			default:
				if _, absent := absentAtStart[name]; !absent {
					t.Errorf("alert %s reads %s, whose type ledgerd does not say (%q)", r.Alert, name, typ)
				}
			}
		}
	}
}

// TestLatencyBucketsResolveTheDeadline: the callback latency histogram has
// bounds a quarter-second apart across the service's 2-3 s deadline, the
// latency alerts' thresholds are bounds, and the alert tests use only
// bounds ledgerd exports.
func TestLatencyBucketsResolveTheDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bk := callbacks.DurationBuckets
	for x := 2.0; x <= 3.0; x += 0.25 {
		if !slices.Contains(bk, x) {
			t.Errorf("callbacks.DurationBuckets %v has no bound at %v s: the 2-3 s window is not resolved to 0.25 s", bk, x)
		}
	}
	threshold := regexp.MustCompile(`\)\s*>\s*([0-9.]+)\s*$`)
	n := 0
	for _, r := range b.rules {
		if !strings.Contains(r.Expr, "ledgerd_callback_duration_seconds_bucket") {
			continue
		}
		n++
		m := threshold.FindStringSubmatch(strings.TrimSpace(r.Expr))
		if m == nil {
			t.Errorf("alert %s: no threshold found in %q", r.Alert, r.Expr)
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || !slices.Contains(bk, v) {
			t.Errorf("alert %s's threshold %s s is not a bucket bound of %v: the quantile there is interpolated across a bucket", r.Alert, m[1], bk)
		}
	}
	if n < 2 {
		t.Errorf("%d latency alerts, want the two (near and over the deadline)", n)
	}
	le := regexp.MustCompile(`ledgerd_callback_duration_seconds_bucket\{[^}]*le="([^"]+)"`)
	for _, m := range le.FindAllStringSubmatch(read(t, "prometheus/alerts_test.yml"), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if m[1] != "+Inf" && (err != nil || !slices.Contains(bk, v)) {
			t.Errorf("alerts_test.yml has a bucket le=%q that ledgerd does not export (%v)", m[1], bk)
		}
	}
}

// TestDashboardPanels: every panel has a unit; a percent panel divides like
// by like (never seconds by a count, which reads "129 %"); every query is
// filtered by the job and replica variables, whose lists come from the
// chosen job.
func TestDashboardPanels(t *testing.T) {
	t.Parallel()
	b := setup(t)
	vars := map[string]templateVar{}
	for _, v := range b.dash.Templating.List {
		vars[v.Name] = v
	}
	for _, name := range []string{"datasource", "job", "instance"} {
		if _, ok := vars[name]; !ok {
			t.Errorf("the dashboard has no variable %q", name)
		}
	}
	if q := variableQuery(t, vars["instance"].Query); !strings.Contains(q, `job=~"$job"`) {
		t.Errorf("the replica variable's query %q does not follow the job variable", q)
	}
	for _, p := range allPanels(b.dash.Panels) {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		unit := p.FieldConfig.Defaults.Unit
		if unit == "" {
			t.Errorf("%s has no unit", where)
		}
		for _, tg := range p.Targets {
			for _, sel := range selectors(tg.Expr) {
				if prometheusOwn[sel.name] {
					continue
				}
				filters := map[string]bool{}
				for _, m := range sel.matchers {
					filters[m.label+m.op+m.value] = true
				}
				if !filters[`job=~$job`] || !filters[`instance=~$instance`] {
					t.Errorf("%s: %s is not filtered by job=~\"$job\" and instance=~\"$instance\"", where, sel.name)
				}
			}
			if unit != "percentunit" {
				continue
			}
			num, den, ratio := strings.Cut(tg.Expr, " / ")
			seconds := func(s string) bool { return strings.Contains(strings.Join(metricNames(s), " "), "_seconds") }
			switch {
			case ratio && seconds(num) != seconds(den):
				t.Errorf("%s is in percent but divides %v by %v", where, metricNames(num), metricNames(den))
			case !ratio && !slices.Equal(metricNames(tg.Expr), []string{"process_cpu_seconds_total"}):
				t.Errorf("%s is in percent but %q is not a ratio", where, tg.Expr)
			}
		}
	}
}
