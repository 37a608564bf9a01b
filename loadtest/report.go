package loadtest

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the JSON report of a run (--report) and the source of the
// table printed at the end.
type Report struct {
	Command           string           `json:"command"`
	OK                bool             `json:"ok"`
	Prefix            string           `json:"prefix"`
	Seed              int64            `json:"seed"`
	ProviderID        string           `json:"providerID"`
	Callbacks         string           `json:"callbacks"`
	Admin             string           `json:"admin"`
	SecretFingerprint string           `json:"secretFingerprint"`
	StartedAt         time.Time        `json:"startedAt"`
	FinishedAt        time.Time        `json:"finishedAt"`
	Settings          Settings         `json:"settings"`
	Phases            []PhaseReport    `json:"phases"`
	Endpoints         []EndpointReport `json:"endpoints"`
	Overall           Overall          `json:"overall"`
	Checks            []Check          `json:"checks"`
	Reconciliation    Reconciliation   `json:"reconciliation"`
	// Failures lists the first failures of the storm itself (terminal
	// statuses, unexpected outcomes, gave up after retries).
	Failures     []string `json:"failures,omitempty"`
	FailureCount int      `json:"failureCount"`
	Interrupted  bool     `json:"interrupted,omitempty"`
}

// Settings are the knobs of the run.
type Settings struct {
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
	Rate            float64 `json:"rate"`
}

// PhaseReport is one phase of the storm.
type PhaseReport struct {
	Name     string  `json:"name"`
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

// Latency is a set of percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// EndpointReport is one callback endpoint's traffic.
type EndpointReport struct {
	Endpoint string `json:"endpoint"`
	// Requests are logical requests (idempotency keys); Sent HTTP attempts;
	// OK 200 answers; Retried attempts after a lost or retryable answer;
	// Replays deliberate repeats (in sequence or at once); Dropped answers
	// discarded as lost.
	Requests  int            `json:"requests"`
	Sent      int            `json:"sent"`
	OK        int            `json:"ok"`
	Retried   int            `json:"retried"`
	Replays   int            `json:"replays"`
	Dropped   int            `json:"dropped"`
	Transport int            `json:"transportErrors"`
	Statuses  map[string]int `json:"statuses"`
	LatencyMs Latency        `json:"latencyMs"`
	// RatePerSec is 200 answers per second over the span from this
	// endpoint's first send to its last answer.
	RatePerSec float64 `json:"ratePerSec"`
}

// Overall is the whole run's traffic.
type Overall struct {
	Requests      int     `json:"requests"`
	Sent          int     `json:"sent"`
	OK            int     `json:"ok"`
	Seconds       float64 `json:"seconds"`
	ThroughputOK  float64 `json:"throughputOkPerSec"`
	ThroughputAll float64 `json:"throughputSentPerSec"`
}

// Reconciliation is the outcome of POST /v1/reconciliation/runs.
type Reconciliation struct {
	Available bool      `json:"available"`
	Note      string    `json:"note,omitempty"`
	RunID     string    `json:"runID,omitempty"`
	Findings  []Finding `json:"findings,omitempty"`
	Critical  int       `json:"critical"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentiles(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return Latency{P50: ms(at(0.50)), P90: ms(at(0.90)), P99: ms(at(0.99)), Max: ms(s[len(s)-1])}
}

func (x *runner) endpointReports() ([]EndpointReport, Overall) {
	var out []EndpointReport
	var all Overall
	var first, last time.Time
	for _, ep := range endpoints {
		s := x.stats[ep]
		s.mu.Lock()
		er := EndpointReport{Endpoint: ep, Requests: s.requests, Sent: s.sent, OK: s.ok, Retried: s.retried, Replays: s.replays,
			Dropped: s.dropped, Transport: s.transport, Statuses: map[string]int{}, LatencyMs: percentiles(s.latencies)}
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
		s.mu.Unlock()
		all.Requests += er.Requests
		all.Sent += er.Sent
		all.OK += er.OK
		out = append(out, er)
	}
	if span := last.Sub(first); span > 0 {
		all.Seconds = round(span.Seconds())
		all.ThroughputOK = round(float64(all.OK) / span.Seconds())
		all.ThroughputAll = round(float64(all.Sent) / span.Seconds())
	}
	return out, all
}

func round(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 1, 64), 64)
	return v
}

// Print writes the report as readable tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "loadtest %s: prefix %s, seed %d, provider %s, key %s\n", r.Command, r.Prefix, r.Seed, r.ProviderID, r.SecretFingerprint)
	fmt.Fprintf(w, "%d accounts, %d payouts, %d credits, concurrency %d, duplicates %.2f, concurrent %.2f, drop %.2f",
		r.Settings.Accounts, r.Settings.Payouts, r.Settings.Credits, r.Settings.Concurrency, r.Settings.Duplicates, r.Settings.ConcurrentDupes, r.Settings.Drop)
	if r.Settings.Rate > 0 {
		fmt.Fprintf(w, ", rate %.0f/s", r.Settings.Rate)
	}
	fmt.Fprintln(w)
	for _, p := range r.Phases {
		fmt.Fprintf(w, "  phase %-24s %6d requests in %.2fs\n", p.Name, p.Requests, p.Seconds)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\trequests\tsent\tok\tretried\treplays\tdropped\tp50 ms\tp90 ms\tp99 ms\tmax ms\tok/s\tstatuses\t")
	for _, e := range r.Endpoints {
		codes := make([]string, 0, len(e.Statuses))
		for c, n := range e.Statuses {
			codes = append(codes, fmt.Sprintf("%s:%d", c, n))
		}
		if e.Transport > 0 {
			codes = append(codes, fmt.Sprintf("transport:%d", e.Transport))
		}
		slices.Sort(codes)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%s\t\n", e.Endpoint, e.Requests, e.Sent, e.OK, e.Retried,
			e.Replays, e.Dropped, e.LatencyMs.P50, e.LatencyMs.P90, e.LatencyMs.P99, e.LatencyMs.Max, e.RatePerSec, strings.Join(codes, " "))
	}
	fmt.Fprintf(tw, "all\t%d\t%d\t%d\t\t\t\t\t\t\t\t%.1f\t\t\n", r.Overall.Requests, r.Overall.Sent, r.Overall.OK, r.Overall.ThroughputOK)
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%.2fs, %.1f answers/s, %.1f requests sent/s\n\n", r.Overall.Seconds, r.Overall.ThroughputOK, r.Overall.ThroughputAll)
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %s (%d checked, %d failed)\n", mark, c.Name, c.Checked, c.Failed)
		for _, d := range c.Detail {
			fmt.Fprintf(w, "       %s\n", d)
		}
	}
	switch {
	case !r.Reconciliation.Available:
		fmt.Fprintf(w, "note reconciliation: %s\n", r.Reconciliation.Note)
	default:
		fmt.Fprintf(w, "reconciliation run %s: %d findings, %d critical\n", r.Reconciliation.RunID, len(r.Reconciliation.Findings), r.Reconciliation.Critical)
		for _, f := range r.Reconciliation.Findings {
			fmt.Fprintf(w, "       %s %s %s %s\n", f.Severity, f.Kind, f.Subject, f.Detail)
		}
	}
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
