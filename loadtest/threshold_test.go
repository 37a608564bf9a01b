package loadtest

import (
	"math"
	"strings"
	"testing"
)

// TestParseThreshold: the thresholds a k6 user writes parse to what they
// say; anything else is refused with what is wrong.
func TestParseThreshold(t *testing.T) {
	t.Parallel()
	good := map[string]threshold{
		"p99<250ms":               {metric: "p99", op: "<", value: 250},
		" p95 <= 1.5s ":           {metric: "p95", op: "<=", value: 1500},
		"authorize:p99<50ms":      {endpoint: "authorize", metric: "p99", op: "<", value: 50},
		"errors<0.1%":             {metric: "errors", op: "<", value: 0.001},
		"capture:errors<=0.02":    {endpoint: "capture", metric: "errors", op: "<=", value: 0.02},
		"p99.9<800us":             {metric: "p99.9", op: "<", value: 0.8},
		"credit-account:max>=0ms": {endpoint: "credit-account", metric: "max", op: ">=", value: 0},
	}
	for in, want := range good {
		got, err := parseThreshold(in)
		want.expr = strings.TrimSpace(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"p99 250ms":      "no comparison",
		"p99<250":        "needs a unit",
		"p98<250ms":      "not one of",
		"errors<0.1ms":   "a share",
		"errors<150%":    "at most 100%",
		"refund:p99<1ms": "endpoint",
		"p99<-1ms":       "non-negative",
		"p99<NaNms":      "non-negative",
		"p99<0x10ms":     "non-negative",
		"p99<<1ms":       "non-negative",
		"":               "no comparison",
	}
	for in, want := range bad {
		if _, err := parseThreshold(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}

// TestThresholdCheck: a threshold judges the whole run or one endpoint,
// latency in milliseconds and errors as a share of attempts.
func TestThresholdCheck(t *testing.T) {
	t.Parallel()
	r := &Report{
		Endpoints: []EndpointReport{
			{Endpoint: "authorize", Statuses: map[string]int{"200": 998, "503": 2}, LatencyMs: latency{P99: 40}},
			{Endpoint: "capture", Statuses: map[string]int{"200": 1000}, Transport: 0, LatencyMs: latency{P99: 90}},
		},
		Overall: overall{LatencyMs: latency{P99: 80}},
	}
	for expr, ok := range map[string]bool{
		"p99<100ms": true, "p99<80ms": false, "p99<=80ms": true, "authorize:p99<50ms": true, "capture:p99<50ms": false,
		"errors<0.2%": true, "errors<0.1%": false, "errors<0.05%": false, "authorize:errors<0.1%": false, "authorize:errors<=0.2%": true,
		"capture:errors<0.0001%": true, "release:errors<0.1%": true,
	} {
		th, err := parseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		c := th.check(r)
		if c.OK != ok || (!ok && (c.Failed != 1 || !strings.HasPrefix(c.Name, "threshold "+expr))) {
			t.Errorf("%s: %+v, want ok %v", expr, c, ok)
		}
	}
}

// FuzzParseThreshold: the parser never panics, and what it accepts is a
// well-formed threshold whose canonical form parses back to it.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<250ms", "errors<0.1%", "authorize:p99<50ms", "p99.9<=1s", "capture:errors>=0.5",
		"max>3us", "p50<1e3ms", "p99<", ":<", "a:b:c<1ms", "p99<1µs", "errors<100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := parseThreshold(s)
		if err != nil {
			return
		}
		if math.IsNaN(th.value) || math.IsInf(th.value, 0) || th.value < 0 || (th.metric == "errors" && th.value > 1) {
			t.Fatalf("%q: value %v", s, th.value)
		}
		if th.metric != "errors" && latencyMetric(th.metric) == nil || th.endpoint != "" && endpointIndex(th.endpoint) < 0 {
			t.Fatalf("%q: %+v", s, th)
		}
		back, err := parseThreshold(th.String())
		if err != nil || back.endpoint != th.endpoint || back.metric != th.metric || back.op != th.op || back.value != th.value {
			t.Fatalf("%q → %q → %+v, %v; want %+v", s, th.String(), back, err, th)
		}
	})
}
