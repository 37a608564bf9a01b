package loadtest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A threshold is a pass/fail criterion on the run's figures, as k6's
// thresholds are (--threshold, repeatable): [endpoint:]metric op value,
// where metric is p50, p90, p95, p99, p99.9 or max (a latency, value with
// a unit: us, ms or s) or errors (the share of HTTP attempts answered
// other than 200 or not answered, value a percentage such as 0.1% or a
// fraction), op is <, <=, > or >=, and endpoint one of the callbacks
// (none: the whole run). The run completes; each threshold is then a check
// of the report, and one that fails makes the exit status 1 and is named.
type threshold struct {
	expr     string
	endpoint string // "" for the whole run
	metric   string
	op       string
	value    float64 // milliseconds for a latency, a fraction for errors
}

var thresholdOps = []string{"<=", ">=", "<", ">"}

var latencyUnits = map[string]float64{"us": 0.001, "µs": 0.001, "ms": 1, "s": 1000}

// parseThreshold reads one --threshold.
func parseThreshold(s string) (threshold, error) {
	t := threshold{expr: strings.TrimSpace(s)}
	i := strings.IndexAny(t.expr, "<>")
	if i < 0 {
		return t, fmt.Errorf("--threshold %q: no comparison: want [endpoint:]metric<value, e.g. p99<250ms or authorize:errors<0.1%%", s)
	}
	left, right := strings.TrimSpace(t.expr[:i]), t.expr[i:]
	for _, op := range thresholdOps {
		if strings.HasPrefix(right, op) {
			t.op, right = op, strings.TrimSpace(right[len(op):])
			break
		}
	}
	if ep, m, ok := strings.Cut(left, ":"); ok {
		t.endpoint, left = strings.TrimSpace(ep), strings.TrimSpace(m)
		if endpointIndex(t.endpoint) < 0 {
			return t, fmt.Errorf("--threshold %q: endpoint %q is not one of %s", s, t.endpoint, strings.Join(endpoints, ", "))
		}
	}
	t.metric = left
	v, err := thresholdValue(t.metric, right)
	if err != nil {
		return t, fmt.Errorf("--threshold %q: %v", s, err)
	}
	t.value = v
	return t, nil
}

// thresholdValue reads the value of a threshold on metric.
func thresholdValue(metric, s string) (float64, error) {
	num := strings.TrimRight(s, "%µsmu")
	unit := s[len(num):]
	num = strings.TrimSpace(num)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || num == "" || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("value %q is not a non-negative number", s)
	}
	switch {
	case metric == "errors" && unit == "%":
		v /= 100
	case metric == "errors" && unit == "":
	case metric == "errors":
		return 0, fmt.Errorf("errors is a share: give a percentage (0.1%%) or a fraction, not %q", unit)
	case latencyMetric(metric) == nil:
		return 0, fmt.Errorf("metric %q is not one of p50, p90, p95, p99, p99.9, max, errors", metric)
	case latencyUnits[unit] == 0:
		return 0, fmt.Errorf("a latency needs a unit (us, ms or s), not %q", unit)
	default:
		v *= latencyUnits[unit]
	}
	if metric == "errors" && v > 1 {
		return 0, fmt.Errorf("errors is a share of at most 100%%")
	}
	return v, nil
}

// latencyMetric returns the percentile a latency metric names, or nil.
func latencyMetric(m string) func(latency) float64 {
	switch m {
	case "p50":
		return func(l latency) float64 { return l.P50 }
	case "p90":
		return func(l latency) float64 { return l.P90 }
	case "p95":
		return func(l latency) float64 { return l.P95 }
	case "p99":
		return func(l latency) float64 { return l.P99 }
	case "p99.9":
		return func(l latency) float64 { return l.P999 }
	case "max":
		return func(l latency) float64 { return l.Max }
	}
	return nil
}

// errorShare is the share of an endpoint's answered-or-failed attempts that
// were not 200, and how many there were.
func errorShare(e EndpointReport) (bad, all int) {
	for code, n := range e.Statuses {
		all += n
		if code != "200" {
			bad += n
		}
	}
	return bad + e.Transport, all + e.Transport
}

// check judges the threshold against the report.
func (t threshold) check(r *Report) Check {
	c := Check{Name: "threshold " + t.expr}
	var lat latency
	bad, all := 0, 0
	for _, e := range r.Endpoints {
		if t.endpoint == "" || e.Endpoint == t.endpoint {
			b, a := errorShare(e)
			bad, all = bad+b, all+a
			lat = e.LatencyMs
		}
	}
	if t.endpoint == "" {
		lat = r.Overall.LatencyMs
	}
	var got float64
	var shown string
	if t.metric == "errors" {
		if all == 0 {
			c.OK, c.NotChecked = true, "no attempts"
			return c
		}
		got = float64(bad) / float64(all)
		shown = fmt.Sprintf("errors %.4g%% (%d of %d attempts)", got*100, bad, all)
	} else {
		got = latencyMetric(t.metric)(lat)
		shown = fmt.Sprintf("%s %.2f ms", t.metric, got)
	}
	c.Checked = 1
	c.OK = map[string]bool{"<": got < t.value, "<=": got <= t.value, ">": got > t.value, ">=": got >= t.value}[t.op]
	if !c.OK {
		c.failf("%s", shown)
	}
	c.Name += ": " + shown
	return c
}

// String is the threshold in a canonical form that parses back to it.
func (t threshold) String() string {
	var b strings.Builder
	if t.endpoint != "" {
		b.WriteString(t.endpoint + ":")
	}
	b.WriteString(t.metric + t.op + strconv.FormatFloat(t.value, 'g', -1, 64))
	if t.metric != "errors" {
		b.WriteString("ms")
	}
	return b.String()
}
