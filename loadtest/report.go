package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
)

// Report is the JSON report of a run (--report), the source of the table
// printed at the end and of the HTML report (--html).
type Report struct {
	Command           string        `json:"command"`
	OK                bool          `json:"ok"`
	Prefix            string        `json:"prefix"`
	Seed              int64         `json:"seed"`
	ProviderID        string        `json:"providerID"`
	Callbacks         string        `json:"callbacks"`
	Admin             string        `json:"admin"`
	SecretFingerprint string        `json:"secretFingerprint"`
	StartedAt         time.Time     `json:"startedAt"`
	FinishedAt        time.Time     `json:"finishedAt"`
	Settings          settings      `json:"settings"`
	Phases            []phaseReport `json:"phases"`
	Rounds            int           `json:"rounds"`
	// WindowSeconds is the time requests were started in: with --duration
	// at most that; DrainSeconds the time after it that the requests in
	// flight took to finish (retries, and resending what was given up);
	// Unsent the requests of the last round withdrawn, not started by the
	// deadline (the checks leave them out).
	WindowSeconds  float64          `json:"windowSeconds"`
	DrainSeconds   float64          `json:"drainSeconds"`
	Unsent         int              `json:"unsent"`
	Endpoints      []EndpointReport `json:"endpoints"`
	Overall        overall          `json:"overall"`
	Checks         []Check          `json:"checks"`
	Reconciliation reconciliation   `json:"reconciliation"`
	// Notes are things a reader must know to read the figures (a replay
	// of stored answers, a setting overridden).
	Notes []string `json:"notes,omitempty"`
	// Series is the run over time; Histograms each endpoint's latency
	// distribution.
	Series     series      `json:"series"`
	Histograms []histogram `json:"histograms"`
	// Resources is ledgerd's memory, goroutines and pool over the run
	// (from its /metrics).
	Resources *resources `json:"resources,omitempty"`
	// Outages are the chaos of a spawned run: each kill or restart and how
	// long ledgerd was unavailable.
	Outages     []outage    `json:"outages,omitempty"`
	Environment environment `json:"environment"`
	// Ceiling is the bench measure of a spawned run (--ceiling): the
	// adapter's authorize+capture cycles against the pgbench ceiling.
	Ceiling *benchResult `json:"ceiling,omitempty"`
	// Failures lists the first failures of the storm itself (terminal
	// statuses, unexpected outcomes, gave up after retries).
	Failures     []string `json:"failures,omitempty"`
	FailureCount int      `json:"failureCount"`
	Interrupted  bool     `json:"interrupted,omitempty"`
}

// deadlinesMs are the service's callback deadline (2 to 3 s), drawn on the
// latency charts.
var deadlinesMs = []float64{2000, 3000}

// settings are the knobs of the run.
type settings struct {
	Accounts        int     `json:"accounts"`
	Payouts         int     `json:"payouts"`
	Credits         int     `json:"credits"`
	Concurrency     int     `json:"concurrency"`
	Duplicates      float64 `json:"duplicates"`
	ConcurrentDupes float64 `json:"concurrentDupes"`
	Drop            float64 `json:"drop"`
	CaptureRatio    float64 `json:"captureRatio"`
	LeaveHeld       float64 `json:"leaveHeld"`
	SecondAttempts  float64 `json:"secondAttempts"`
	// Loop is "closed" (Concurrency workers) or "open" (Rate requests
	// started per second, at most MaxInflight in flight).
	Loop        string  `json:"loop"`
	Rate        float64 `json:"rate"`
	MaxInflight int     `json:"maxInflight,omitempty"`
	// DurationSeconds is --duration (0: one storm of the counts).
	DurationSeconds  float64 `json:"durationSeconds,omitempty"`
	ReconcileTimeout string  `json:"reconcileTimeout"`
	Chaos            bool    `json:"chaos,omitempty"`
}

// phaseReport is one phase of the storm.
type phaseReport struct {
	Name     string  `json:"name"`
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

// latency is a set of percentiles in milliseconds.
type latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// EndpointReport is one callback endpoint's traffic.
type EndpointReport struct {
	Endpoint string `json:"endpoint"`
	// Requests are logical requests (idempotency keys); Sent HTTP attempts;
	// OK 200 answers; Retried attempts after a lost or retryable answer;
	// Replays deliberate repeats (in sequence or at once); Dropped answers
	// discarded as lost.
	Requests int `json:"requests"`
	Sent     int `json:"sent"`
	OK       int `json:"ok"`
	Retried  int `json:"retried"`
	// GivenUp are requests given up after retries during the storm and
	// resent at the end of their phase; Resolved those answered then.
	GivenUp   int            `json:"givenUp"`
	Resolved  int            `json:"resolved"`
	Replays   int            `json:"replays"`
	Dropped   int            `json:"dropped"`
	Transport int            `json:"transportErrors"`
	Statuses  map[string]int `json:"statuses"`
	LatencyMs latency        `json:"latencyMs"`
	// RatePerSec is 200 answers per second over the span from this
	// endpoint's first send to its last answer.
	RatePerSec float64 `json:"ratePerSec"`
}

// overall is the whole run's traffic.
type overall struct {
	Requests      int     `json:"requests"`
	Sent          int     `json:"sent"`
	OK            int     `json:"ok"`
	Seconds       float64 `json:"seconds"`
	ThroughputOK  float64 `json:"throughputOkPerSec"`
	ThroughputAll float64 `json:"throughputSentPerSec"`
	LatencyMs     latency `json:"latencyMs"`
	// GivenUp are requests given up after retries (then resent), Resolved
	// those answered once resent, Unresolved those never answered: they
	// fail the run. Lost counts the accounts and holds whose ledger state
	// differs from what the answers imply (the money checks' failures):
	// given up is not lost.
	GivenUp    int `json:"givenUp"`
	Resolved   int `json:"resolved"`
	Unresolved int `json:"unresolved"`
	Lost       int `json:"lost"`
	// AuthorizeOKPerSec is 200 answers per second of the authorize phases,
	// which send nothing but first authorizes.
	AuthorizeOKPerSec float64 `json:"authorizeOkPerSec"`
}

func (x *runner) endpointReports() ([]EndpointReport, overall) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []EndpointReport
	var all overall
	var first, last time.Time
	for i, ep := range endpoints {
		s := x.stats[i]
		er := EndpointReport{Endpoint: ep, Requests: s.requests, Sent: s.sent, OK: s.ok, Retried: s.retried, GivenUp: s.givenUp, Resolved: s.resolved, Replays: s.replays,
			Dropped: s.dropped, Transport: s.transport, Statuses: map[string]int{}, LatencyMs: latencyOf(s.hist)}
		for code, n := range s.statuses {
			er.Statuses[strconv.Itoa(code)] = n
		}
		if span := s.last.Sub(s.first); span > 0 {
			er.RatePerSec = round(float64(s.ok) / span.Seconds())
		}
		if !s.first.IsZero() && (first.IsZero() || s.first.Before(first)) {
			first = s.first
		}
		if s.last.After(last) {
			last = s.last
		}
		all.Requests += er.Requests
		all.Sent += er.Sent
		all.OK += er.OK
		all.GivenUp += er.GivenUp
		all.Resolved += er.Resolved
		out = append(out, er)
	}
	if span := last.Sub(first); span > 0 {
		all.Seconds = round(span.Seconds())
		all.ThroughputOK = round(float64(all.OK) / span.Seconds())
		all.ThroughputAll = round(float64(all.Sent) / span.Seconds())
	}
	all.LatencyMs = latencyOf(x.all)
	all.Unresolved = x.unresolved
	if x.authorizeTime > 0 {
		all.AuthorizeOKPerSec = round(float64(x.stats[endpointIndex(claims.Authorize)].ok) / x.authorizeTime.Seconds())
	}
	return out, all
}

// histograms returns each endpoint's latency distribution.
func (x *runner) histograms() []histogram {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []histogram
	for i, ep := range endpoints {
		out = append(out, logHistogram(ep, x.stats[i].hist))
	}
	return out
}

func round(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 1, 64), 64)
	return v
}

// print writes the report as readable tables.
func (r *Report) print(w io.Writer) {
	r.printSettings(w)
	fmt.Fprintln(w)
	r.printTraffic(w)
	r.printLedgerd(w)
	fmt.Fprintln(w)
	printChecks(w, r.Checks)
	printReconciliation(w, r.Reconciliation)
	r.printOutcome(w)
}

// printSettings writes the run's knobs, its phases and its notes.
func (r *Report) printSettings(w io.Writer) {
	fmt.Fprintf(w, "loadtest %s: prefix %s, seed %d, provider %s, key %s\n", r.Command, r.Prefix, r.Seed, r.ProviderID, r.SecretFingerprint)
	st := r.Settings
	fmt.Fprintf(w, "%d accounts, %d payouts and %d credits per round, duplicates %.2f, concurrent %.2f, drop %.2f, ",
		st.Accounts, st.Payouts, st.Credits, st.Duplicates, st.ConcurrentDupes, st.Drop)
	if st.Loop == "open" {
		fmt.Fprintf(w, "open loop at %.0f requests/s (at most %d in flight)", st.Rate, st.MaxInflight)
	} else {
		fmt.Fprintf(w, "closed loop, concurrency %d", st.Concurrency)
	}
	if st.DurationSeconds > 0 {
		fmt.Fprintf(w, ", --duration %s: %d rounds started in %.2fs, %d requests not started by then, %.2fs drain of those in flight",
			time.Duration(st.DurationSeconds*float64(time.Second)), r.Rounds, r.WindowSeconds, r.Unsent, r.DrainSeconds)
	}
	fmt.Fprintln(w)
	for _, p := range r.Phases {
		fmt.Fprintf(w, "  phase %-24s %6d requests in %.2fs\n", p.Name, p.Requests, p.Seconds)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// printTraffic writes the table of the endpoints and the whole run, and
// the run's throughput.
func (r *Report) printTraffic(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\trequests\tsent\tok\tretried\treplays\tdropped\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\tok/s\tstatuses\t")
	for _, e := range r.Endpoints {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s%.1f\t%s\t\n", e.Endpoint, e.Requests, e.Sent, e.OK, e.Retried,
			e.Replays, e.Dropped, latencyCells(e.LatencyMs), e.RatePerSec, statusCounts(e))
	}
	o := r.Overall
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t\t\t\t%s%.1f\t\t\n", o.Requests, o.Sent, o.OK, latencyCells(o.LatencyMs), o.ThroughputOK)
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%.2fs, %.1f answers/s, %.1f requests sent/s; authorize alone %.1f answers/s\n", o.Seconds, o.ThroughputOK, o.ThroughputAll, o.AuthorizeOKPerSec)
	fmt.Fprintf(w, "given up after retries %d (resent once ledgerd answered again: %d answered, %d unresolved); lost %d (accounts and holds not as answered)\n",
		o.GivenUp, o.Resolved, o.Unresolved, o.Lost)
	if r.Settings.Loop == "open" {
		fmt.Fprintln(w, "latencies are measured from each request's intended send time (open loop)")
	}
}

// latencyCells are a latency's percentiles as tab-ended table cells.
func latencyCells(l latency) string {
	return fmt.Sprintf("%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t", l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
}

// compact is a latency's six percentiles as one "p50/p90/p95/p99/p99.9/max"
// string of milliseconds, for places too narrow for a column each.
func (l latency) compact() string {
	return fmt.Sprintf("%.2f/%.2f/%.2f/%.2f/%.2f/%.2f", l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
}

// statusCounts returns an endpoint's answers by status, and its transport
// errors, as sorted "status:count" words.
func statusCounts(e EndpointReport) string {
	codes := make([]string, 0, len(e.Statuses))
	for c, n := range e.Statuses {
		codes = append(codes, fmt.Sprintf("%s:%d", c, n))
	}
	if e.Transport > 0 {
		codes = append(codes, fmt.Sprintf("transport:%d", e.Transport))
	}
	slices.Sort(codes)
	return strings.Join(codes, " ")
}

// printLedgerd writes what ledgerd went through: the outages of chaos, its
// resources over the run, and the ceiling measure.
func (r *Report) printLedgerd(w io.Writer) {
	for _, ot := range r.Outages {
		fmt.Fprintf(w, "outage: %s at %.1fs, ledgerd ready again after %.1fs, first approved answer after %.1fs\n", ot.What, ot.Start, ot.ReadyAfter(), ot.AnsweredAfter())
	}
	if res := r.Resources; res != nil && len(res.Samples) > 0 {
		fmt.Fprintf(w, "ledgerd: RSS peak %.1f MB", res.RSSMaxMB)
		if res.RSSEarlyMB > 0 && res.RSSLateMB > 0 {
			fmt.Fprintf(w, " (median %.1f MB early, %.1f MB late in the storm, slope %.2f MB/min)", res.RSSEarlyMB, res.RSSLateMB, res.RSSSlopeMBPerMin)
		}
		fmt.Fprintf(w, "; goroutines %d before the storm, peak %d, %d after; pool peak %d in use of %d\n",
			res.GoroutinesBefore, res.GoroutinesPeak, res.GoroutinesAfter, res.PoolAcquiredPeak, res.Samples[len(res.Samples)-1].PoolMax)
	}
	if c := r.Ceiling; c != nil {
		fmt.Fprintln(w)
		printBench(w, BenchReport{Runs: []benchResult{*c}})
	}
}

// printChecks writes each check with its mark, its counts or why it was
// not made, and its details.
func printChecks(w io.Writer, checks []Check) {
	for _, c := range checks {
		mark := "ok  "
		switch {
		case !c.OK:
			mark = "FAIL"
		case c.NotChecked != "":
			mark = "n/a "
		}
		if c.NotChecked != "" {
			fmt.Fprintf(w, "%s %s (%s)\n", mark, c.Name, c.NotChecked)
		} else {
			fmt.Fprintf(w, "%s %s (%d checked, %d failed", mark, c.Name, c.Checked, c.Failed)
			if c.Unsettled > 0 {
				fmt.Fprintf(w, ", %d left out: an unresolved request touches them", c.Unsettled)
			}
			fmt.Fprintln(w, ")")
		}
		for _, d := range c.Detail {
			fmt.Fprintf(w, "       %s\n", d)
		}
	}
}

// printReconciliation writes the run's reconciliation findings, or why
// there are none (nothing when it was not available and no note says why).
func printReconciliation(w io.Writer, rc reconciliation) {
	switch {
	case rc.Note != "" && (!rc.Available || !rc.Checked):
		fmt.Fprintf(w, "reconciliation: %s\n", rc.Note)
	case !rc.Available || !rc.Checked:
	default:
		fmt.Fprintf(w, "reconciliation run %s (%.1fs): %d findings about this run (%d expected: duplicate_credit_attempt of its second credits, %d unexpected); %d findings not tied to this run (%d critical), not counted\n",
			rc.RunID, rc.Seconds, rc.Expected+rc.Unexpected, rc.Expected, rc.Unexpected, rc.Unrelated, rc.UnrelatedCritical)
	}
}

// printOutcome writes the storm's request failures, whether it was
// interrupted, and PASS or FAIL.
func (r *Report) printOutcome(w io.Writer) {
	if r.FailureCount > 0 {
		fmt.Fprintf(w, "%d request failures:\n", r.FailureCount)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "       %s\n", f)
		}
	}
	if r.Interrupted {
		fmt.Fprintln(w, "interrupted")
	}
	if r.OK {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}
