package loadtest

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/ledger"
)

// chromium finds a headless-capable Chromium. Without one the test is
// skipped on a developer's machine, and fails in CI (CI is set by
// .ci/run), where the HTML report must be rendered.
func chromium(t testing.TB) string {
	t.Helper()
	return tooltest.Require(t, "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
}

// BrowserDOM loads the page at path in headless Chromium and returns the
// DOM after its scripts ran.
func BrowserDOM(t testing.TB, path string) string {
	t.Helper()
	bin := chromium(t)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--window-size=1400,3000", "--dump-dom", "file://"+abs)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

var (
	chartsDrawn    = regexp.MustCompile(`data-charts-drawn="(\d+)"`)
	chartsExpected = regexp.MustCompile(`data-charts-expected="(\d+)"`)
	canvasDrawn    = regexp.MustCompile(`<canvas[^>]*>`)
)

// AssertChartsDrew checks, in a DOM from BrowserDOM, that the page's script
// drew want charts, that none failed, and that each drew at least one
// point (a bar, a line vertex, an outage).
func AssertChartsDrew(t testing.TB, dom string, want int) {
	t.Helper()
	d, e := chartsDrawn.FindStringSubmatch(dom), chartsExpected.FindStringSubmatch(dom)
	if d == nil || e == nil {
		t.Fatalf("the page's script did not finish: no data-charts-drawn on <body>\n%.2000s", dom)
	}
	if d[1] != e[1] || d[1] != strconv.Itoa(want) {
		t.Errorf("%s charts drawn of %s expected, want %d", d[1], e[1], want)
	}
	canvases := canvasDrawn.FindAllString(dom, -1)
	if len(canvases) != want {
		t.Errorf("%d canvases, want %d", len(canvases), want)
	}
	for _, c := range canvases {
		switch {
		case strings.Contains(c, "data-error="):
			t.Errorf("a chart failed: %s", c)
		case !strings.Contains(c, `data-drawn="`) || strings.Contains(c, `data-drawn="0"`):
			t.Errorf("a chart drew nothing: %s", c)
		}
	}
}

// fullReport is a report with every section: series with an outage and
// errors in it, all four endpoints, soak readings, chaos, a ceiling and
// findings.
func fullReport() *Report {
	tl := newTimeline(time.Unix(0, 0))
	start := time.Unix(0, 0)
	for i := range 400 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		for e := range numEndpoints {
			lat := int64(2000 + 300*e + 50*(i%17))
			status := 200
			if i >= 150 && i < 170 {
				status, lat = 503, 2_600_000 // an outage: slow errors
			}
			tl.attempt(e, at, status, false, true, lat)
		}
		if i%7 == 0 {
			tl.retry(at)
			tl.dropped(at)
		}
	}
	tl.attempt(0, start.Add(16*time.Second), 0, true, false, 0)
	r := &Report{Command: "spawn", OK: true, Prefix: "lt1x2y3", Seed: 42, ProviderID: "local", SecretFingerprint: "0011223344556677",
		StartedAt: time.Unix(1_800_000_000, 0), FinishedAt: time.Unix(1_800_000_055, 0), Rounds: 3,
		Settings: settings{Accounts: 20, Payouts: 1000, Credits: 200, Concurrency: 16, Loop: "closed", DurationSeconds: 40, ReconcileTimeout: "5m0s", Chaos: true},
		Series:   tl.series(), Notes: []string{"a note <b>not bold</b>"},
		Outages: []outage{{What: "ledgerd SIGKILL, restarted", Start: 15, Ready: 16.2, End: 16.4},
			{What: "Postgres immediate stop, restarted", Start: 25, Ready: 26.5, End: 27}},
		Checks: []Check{{Name: "accounts", OK: true, Checked: 20}, {Name: "reconciliation", OK: true, NotChecked: "not checked: no report within 5m0s"},
			{Name: "holds", OK: false, Checked: 1000, Failed: 1, Detail: []string{"payout x: 2 holds, want 1"}}},
		Reconciliation: reconciliation{Available: true, Checked: true, RunID: "rec_1", Expected: 1,
			Findings: []runFinding{{Finding: ledger.Finding{Kind: "duplicate_credit_attempt", Severity: "warning", Subject: "lt1x2y3-r"}, Expected: true}}},
		Environment: localEnvironment(),
		Ceiling: &benchResult{Adapter: cycleReport{Clients: 16, CyclesPerSec: 2100, CPU: &cpuPerCycle{Ledgerd: 200, Postgres: 400, Loadgen: 150}},
			Ceiling: &ceilingReport{CyclesPerSec: 1900}, Ratio: 1.11},
		Resources: &resources{EverySeconds: 2, StormEnd: 40, RSSMaxMB: 61},
	}
	for i, ep := range endpoints {
		h := newHist()
		for k := range 500 {
			_ = h.RecordValue(int64(1000 + 40*k + 900*i))
		}
		_ = h.RecordValue(2_700_000)
		r.Histograms = append(r.Histograms, logHistogram(ep, h))
		r.Endpoints = append(r.Endpoints, EndpointReport{Endpoint: ep, Requests: 100, Sent: 110, OK: 100, Statuses: map[string]int{"200": 100, "503": 10}})
	}
	for i := -1; i <= 45; i += 2 {
		r.Resources.Samples = append(r.Resources.Samples, sample{T: float64(i), RSSMB: 50 + 10*math.Sin(float64(i)/5), Goroutines: 30 + i%9, PoolAcquired: i % 16, PoolOpen: 16, PoolMax: 16})
	}
	return r
}

// TestHTMLReport renders a report with every section in headless Chromium
// and checks that every chart drew: throughput, latency over time, the
// four histograms, statuses, outages and the three resource charts. A
// report without chaos or readings draws no outage or resource chart and
// says so instead.
func TestHTMLReport(t *testing.T) {
	t.Parallel()
	b, err := renderHTML(fullReport())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a note &lt;b&gt;not bold&lt;/b&gt;", "Against the ceiling", "ledgerd SIGKILL, restarted", "payout x: 2 holds, want 1", "not checked: no report within 5m0s",
		"<th class=\"num\">p95 ms</th>", "<th class=\"num\">p99.9 ms</th>", "p99.9", "p95"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, banned := range []string{"http://", "https://", "<link", "src="} {
		if bytes.Contains(b, []byte(banned)) {
			t.Errorf("the page refers to something outside itself: %q", banned)
		}
	}
	path := filepath.Join(t.TempDir(), "full.html")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := BrowserDOM(t, path)
	AssertChartsDrew(t, dom, 15)
	for _, ep := range endpoints {
		if !regexp.MustCompile(`<canvas[^>]*class="chart eplat"[^>]*data-endpoint="` + ep + `"[^>]*data-drawn="[1-9]`).MatchString(dom) {
			t.Errorf("no latency-over-time chart drawn for %s", ep)
		}
	}

	bare := fullReport()
	bare.Outages, bare.Resources, bare.Ceiling = nil, nil, nil
	path = filepath.Join(t.TempDir(), "bare.html")
	if err := writeHTML(path, bare); err != nil {
		t.Fatal(err)
	}
	dom = BrowserDOM(t, path)
	AssertChartsDrew(t, dom, 11)
	if !strings.Contains(dom, "No chaos in this run") || !strings.Contains(dom, "No readings of ledgerd") {
		t.Error("a report without chaos or readings does not say so")
	}
}
