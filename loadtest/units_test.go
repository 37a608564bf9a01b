package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

// slowLedger approves every callback after a pause.
type slowLedger struct {
	fakeLedger
	pause time.Duration
}

func (s *slowLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.pause)
	s.fakeLedger.ServeHTTP(w, r)
}

func authorizes(n int) []request {
	var out []request
	for i := range n {
		r := authorizeRequest()
		r.Seq = i + 1
		r.Service = clone(r.Service)
		r.Service["idempotencyKey"] = "k-" + string(rune('a'+i))
		out = append(out, r)
	}
	return out
}

// TestOpenLoop: in the open loop a request's latency counts from its
// intended send time, so a ledgerd that cannot keep up shows its queue
// (no coordinated omission). Here one request may be in flight, each takes
// at least 30 ms and they are due every 10 ms: the k-th is answered no
// sooner than 30(k+1) ms after the first was due, 20k ms after it was
// due itself, so the last of 20 waited at least 410 ms. Measured from the
// actual send (what a closed loop does) every one would be about 30 ms.
func TestOpenLoop(t *testing.T) {
	t.Parallel()
	f := &slowLedger{pause: 30 * time.Millisecond}
	f.key = envelope.Key{ID: "k", Secret: bytes.Repeat([]byte{7}, 32)}
	f.ref = func(int) string { return "hold-1" }
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	x := newRunner(&caller.Client{BaseURL: srv.URL + "/ledger", Key: f.key, HTTP: srv.Client()}, loop{rate: 100, maxInflight: 1}, nil, time.Now())
	x.openLoop(context.Background(), newRound(), authorizes(20))
	h := authStats(x).hist
	if h.TotalCount() != 20 {
		t.Fatalf("%d measured attempts, want 20", h.TotalCount())
	}
	if got := time.Duration(h.Max()) * time.Microsecond; got < 410*time.Millisecond {
		t.Fatalf("the slowest request waited %s, want at least 410ms from its intended send time", got)
	}
	if got := time.Duration(h.Min()) * time.Microsecond; got < 30*time.Millisecond {
		t.Fatalf("the fastest request took %s, less than the ledger's pause", got)
	}
}

// TestGenerateRound: later rounds reuse the accounts, fund them again
// under fresh keys for their own payouts, and never repeat an ID.
func TestGenerateRound(t *testing.T) {
	t.Parallel()
	shape := Shape{Seed: 5, Prefix: "ltr0x1", ProviderID: "bank", Accounts: 3, Payouts: 30, Credits: 10, CaptureRatio: 0.5, LeaveHeld: 0.3, SecondAttempts: 0.3}
	m := newModel(shape.Prefix)
	r0 := generateRound(shape, 0, nil)
	r1 := generateRound(shape, 1, r0.Header.Accounts)
	for _, p := range []Plan{r0, r1} {
		if err := m.add(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.payouts) != 60 || len(m.accounts) != 3 {
		t.Fatalf("%d payouts over %d accounts, want 60 over 3", len(m.payouts), len(m.accounts))
	}
	keys := map[string]bool{}
	for i, a := range r1.Header.Accounts {
		b := r0.Header.Accounts[i]
		if a.AccountID != b.AccountID || a.SourceToken != b.SourceToken || a.FundingKey == b.FundingKey || a.Funding == "" {
			t.Fatalf("round 1 account %d: %+v, round 0: %+v", i, a, b)
		}
		if a.AccountID != AccountID(shape.Prefix, i) {
			t.Fatalf("account %d is %s, not %s", i, a.AccountID, AccountID(shape.Prefix, i))
		}
	}
	for _, p := range []Plan{r0, r1} {
		for _, r := range p.Requests {
			k := str(r.Service, "idempotencyKey")
			if keys[k] {
				t.Fatalf("key %s twice", k)
			}
			keys[k] = true
		}
	}
	for id, a := range m.accounts {
		if a.balance-a.held < 0 {
			t.Fatalf("account %s not funded: balance %d held %d", id, a.balance, a.held)
		}
	}
}

// TestTimeline: attempts land in the second they ended; the series gives
// rates per second and percentiles, -1 where nothing was measured; the
// histogram keeps every count.
func TestTimeline(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	tl := newTimeline(start)
	for i := range 10 {
		tl.attempt(0, start.Add(100*time.Millisecond), 200, false, true, int64(1000*(i+1))) // 1..10 ms in second 0
	}
	tl.attempt(1, start.Add(2600*time.Millisecond), 503, false, true, 50_000)
	tl.attempt(1, start.Add(2700*time.Millisecond), 0, true, true, 70_000)
	tl.retry(start.Add(2700 * time.Millisecond))
	s := tl.series()
	if len(s.T) != 11 || s.BucketSeconds != 0.25 || s.T[10] != 2.5 {
		t.Fatalf("points %v width %v", s.T, s.BucketSeconds)
	}
	// 10 answers in a quarter of a second: 40 per second.
	if s.OKPerSec["authorize"][0] != 40 || s.SentPerSec[10] != 8 || s.Statuses["503"][10] != 1 || s.Statuses["transport"][10] != 1 || s.Retries[10] != 1 {
		t.Fatalf("series %+v", s)
	}
	if s.P50[1] != -1 || s.P99[0] < 9.8 || s.P99[0] > 10.2 || s.Max[10] < 69 {
		t.Fatalf("percentiles p50 %v p99 %v max %v", s.P50, s.P99, s.Max)
	}
	// A long run keeps at most maxBuckets buckets, merging as it goes.
	long := newTimeline(start)
	for i := range 2000 {
		long.attempt(2, start.Add(time.Duration(i)*time.Second), 200, false, true, 1000)
	}
	ls := long.series()
	var total float64
	for _, v := range ls.OKPerSec["release"] {
		total += v * ls.BucketSeconds
	}
	if len(ls.T) > maxBuckets || ls.BucketSeconds != 4 || total != 2000 {
		t.Fatalf("long run: %d points of %vs, %v answers", len(ls.T), ls.BucketSeconds, total)
	}
	h := logHistogram("authorize", newHist())
	if len(h.Counts) != 0 {
		t.Fatalf("empty histogram %+v", h)
	}
	hist := newHist()
	for _, us := range []int64{150, 900, 12_000, 12_500, 2_500_000} {
		_ = hist.RecordValue(us)
	}
	h = logHistogram("capture", hist)
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	if n != 5 || len(h.EdgesMs) != len(h.Counts)+1 || h.EdgesMs[0] > 0.15 || h.EdgesMs[len(h.EdgesMs)-1] < 2500 {
		t.Fatalf("histogram %+v", h)
	}
}

// TestParseMetrics reads unlabelled samples and go_info's version.
func TestParseMetrics(t *testing.T) {
	t.Parallel()
	text := "# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 42\n" +
		"go_info{version=\"go1.26.8\"} 1\nprocess_resident_memory_bytes 3.3554432e+07\n" +
		"ledgerd_db_pool_acquired_connections 3\nledgerd_callback_requests_total{endpoint=\"authorize\"} 9\n"
	m := parseMetrics(text, metricGoroutes, metricRSS, metricAcquired, "ledgerd_callback_requests_total")
	if m[metricGoroutes] != 42 || m[metricRSS] != 32<<20 || m[metricAcquired] != 3 || m["go_info:go1.26.8"] != 1 {
		t.Fatalf("%v", m)
	}
	if _, ok := m["ledgerd_callback_requests_total"]; ok {
		t.Fatal("a labelled sample read as unlabelled")
	}
}

// TestSoakCheck: RSS over the limit, an upward trend and goroutine growth
// each fail; a flat run passes; too few samples is not checked.
func TestSoakCheck(t *testing.T) {
	t.Parallel()
	run := func(rss func(t float64) float64, before, after int) resources {
		s := &sampler{res: resources{EverySeconds: 1}}
		for i := 0; i <= 100; i++ {
			x := float64(i)
			s.res.Samples = append(s.res.Samples, sample{T: x, RSSMB: rss(x), Goroutines: 30})
		}
		return s.summary(before, after, 100)
	}
	for _, tc := range []struct {
		name string
		r    resources
		ok   bool
		says string
	}{
		{"Flat", run(func(float64) float64 { return 60 }, 20, 22), true, ""},
		{"SawtoothWithoutTrend", run(func(x float64) float64 { return 60 + float64(int(x)%10) }, 20, 20), true, ""},
		{"OverTheLimit", run(func(float64) float64 { return 151 }, 20, 20), false, "RSS peaked"},
		{"Growing", run(func(x float64) float64 { return 40 + x }, 20, 20), false, "trends up"},
		{"GoroutinesGrew", run(func(float64) float64 { return 60 }, 20, 45), false, "goroutines grew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := soakCheck(tc.r, 150)
			if c.OK != tc.ok || !strings.Contains(strings.Join(c.Detail, ";"), tc.says) {
				t.Fatalf("%+v", c)
			}
		})
	}
	if c := soakCheck(resources{Samples: []sample{{T: 1}}}, 150); !c.OK || c.NotChecked == "" {
		t.Fatalf("one sample: %+v", c)
	}
}

// TestFindingScope: a finding is the run's when its subject carries the
// prefix or is a reference the run was answered or given; a
// duplicate_credit_attempt of a requestID the run credited twice on
// purpose is expected.
func TestFindingScope(t *testing.T) {
	t.Parallel()
	m := newModel("ltab1x9")
	m.secondCredits["ltab1x9-req-1"] = true
	m.reference("hold-ref-of-run")
	m.reference("5f2c0f1e-funding-tx")
	for _, tc := range []struct {
		subject  string
		ours     bool
		expected bool
	}{
		{"ltab1x9-1000000000", true, false},
		{"ltab1x9-req-1", true, true},
		{"ltab1x9-req-2", true, false},
		{"hold-ref-of-run", true, false},
		{"ltab1x9-1000000000 ltab1x9-key", true, false},
		{"5f2c0f1e-funding-tx", true, false},
		{"USD", false, false},
		{"ltzz9x1-1000000000", false, false},
		{"another-hold", false, false},
	} {
		if got := m.ours(tc.subject); got != tc.ours {
			t.Errorf("ours(%q) = %v", tc.subject, got)
		}
		if got := m.secondCredit(tc.subject); got != tc.expected {
			t.Errorf("secondCredit(%q) = %v", tc.subject, got)
		}
	}
	r := reconciliation{Available: true, Checked: true, Unexpected: 1, Findings: []runFinding{{Finding: ledger.Finding{Kind: "balance_drift", Severity: "critical", Subject: "x"}}}}
	if c := r.check(); c.OK || c.Failed != 1 || len(c.Detail) != 1 {
		t.Fatalf("%+v", c)
	}
	r = reconciliation{Available: true, Note: "not checked: no report within 1s (--reconcile-timeout)"}
	if c := r.check(); !c.OK || c.NotChecked == "" {
		t.Fatalf("%+v", c)
	}
}

// TestProgress: lines off a terminal, a bar redrawn in place on one.
func TestProgress(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(-4 * time.Second)
	x := newRunner(nil, loop{conc: 1}, nil, start)
	x.total.Store(100)
	x.done.Store(25)
	x.attempt(claims.Authorize, start, start.Add(3*time.Millisecond), 200, false, true)
	x.attempt(claims.Authorize, start, start.Add(5*time.Millisecond), 503, false, true)
	var buf bytes.Buffer
	p := newProgress(&buf, false, time.Second, "loadtest storm", x, start, 0)
	p.print(false)
	line := buf.String()
	for _, want := range []string{"loadtest storm: ", "25/100 requests (25%)", "answers/s", "p50/p90/p95/p99/p99.9/max 3.0/5.0/5.0/5.0/5.0/5.0 ms so far", "non-200 503:1"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	buf.Reset()
	p = newProgress(&buf, true, time.Second, "loadtest storm", x, start, 10*time.Second)
	p.setNote("ledgerd killed")
	p.print(true)
	if bar := buf.String(); !strings.HasPrefix(bar, "\r\033[K[") || !strings.Contains(bar, "round 1") || !strings.Contains(bar, "[ledgerd killed]") || !strings.HasSuffix(bar, "\n") {
		t.Errorf("bar %q", bar)
	}
}

// TestPercentiles: p50, p90, p95, p99, p99.9 and max are computed from the
// histograms and shown in the JSON, the table and the timeline.
func TestPercentiles(t *testing.T) {
	t.Parallel()
	x := newRunner(nil, loop{conc: 1}, nil, time.Now())
	start := time.Now()
	for i := 1; i <= 1000; i++ { // 1 ms … 1000 ms, one each
		x.attempt(claims.Authorize, start, start.Add(time.Duration(i)*time.Millisecond), http.StatusOK, false, true)
	}
	eps, all := x.endpointReports()
	near := func(got, want float64) bool { return got >= want*0.99 && got <= want*1.01 }
	for _, l := range []latency{eps[0].LatencyMs, all.LatencyMs} {
		if !near(l.P50, 500) || !near(l.P90, 900) || !near(l.P95, 950) || !near(l.P99, 990) || !near(l.P999, 999) || !near(l.Max, 1000) {
			t.Fatalf("latency %+v", l)
		}
	}
	b, _ := json.Marshal(all.LatencyMs)
	for _, k := range []string{`"p50"`, `"p90"`, `"p95"`, `"p99"`, `"p999"`, `"max"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
	x.mu.Lock()
	s := x.tl.series()
	x.mu.Unlock()
	if len(s.P95) == 0 || len(s.P999) != len(s.P95) || s.P999[len(s.P999)-1] < s.P95[len(s.P95)-1] {
		t.Fatalf("timeline p95 %v p99.9 %v", s.P95, s.P999)
	}
	var out bytes.Buffer
	(&Report{Endpoints: eps, Overall: all}).print(&out)
	for _, h := range []string{"p50 ms", "p90 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms", "950.", "999."} {
		if !strings.Contains(out.String(), h) {
			t.Errorf("the table lacks %q:\n%s", h, out.String())
		}
	}
}

// TestBenchTable: the bench table and the ceiling line show all six
// percentiles of authorize and capture, each in its place.
func TestBenchTable(t *testing.T) {
	lat := func(base float64) latency {
		return latency{P50: base + 0.1, P90: base + 0.2, P95: base + 0.3, P99: base + 0.4, P999: base + 0.5, Max: base + 0.6}
	}
	var buf bytes.Buffer
	printBench(&buf, BenchReport{Runs: []benchResult{{
		Adapter: cycleReport{Clients: 4, CyclesPerSec: 100, Authorize: lat(1), Capture: lat(2)},
		Ceiling: &ceilingReport{Clients: 4, AuthorizeTPS: 900, CaptureTPS: 800, AuthorizeLat: lat(3), CaptureLat: lat(4)},
		Ratio:   0.5,
	}}})
	out := buf.String()
	for _, want := range []string{"auth p50/p90/p95/p99/p99.9/max ms", "capt p50/p90/p95/p99/p99.9/max ms",
		"1.10/1.20/1.30/1.40/1.50/1.60", "2.10/2.20/2.30/2.40/2.50/2.60",
		"authorize 900 tps (p50/p90/p95/p99/p99.9/max 3.10/3.20/3.30/3.40/3.50/3.60 ms)",
		"capture 800 tps (p50/p90/p95/p99/p99.9/max 4.10/4.20/4.30/4.40/4.50/4.60 ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
}
