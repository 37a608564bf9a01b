package deploy

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// metricNames returns the metric names a PromQL expression selects, in order
// of appearance, without duplicates. It is a scanner, not a parser: it skips
// strings, label matchers ({…}), ranges and subqueries ([…]), numbers and
// durations, Grafana variables ($x, ${x}), keywords, function and aggregation
// names (an identifier followed by "("), and the label lists of by, without,
// on, ignoring, group_left and group_right. What is left is metric names.
func metricNames(expr string) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipUntil(expr, i, '}')
		case c == '[':
			i = skipUntil(expr, i, ']')
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				i = skipUntil(expr, i, '}')
			} else {
				for i < len(expr) && isIdent(expr[i]) {
					i++
				}
			}
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			// A number (1, 0.5, 1e-3, 0x1f) or a duration (5m, 1h30m).
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.' ||
				(expr[i] == '+' || expr[i] == '-') && (expr[i-1] == 'e' || expr[i-1] == 'E')) {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			j := i
			for j < len(expr) && (expr[j] == ' ' || expr[j] == '\t' || expr[j] == '\n' || expr[j] == '\r') {
				j++
			}
			lower := strings.ToLower(word)
			switch {
			case labelListKeywords[lower]:
				if j < len(expr) && expr[j] == '(' {
					i = skipUntil(expr, j, ')')
				}
			case j < len(expr) && expr[j] == '(':
				// A function or an aggregation.
			case keywords[lower]:
			default:
				add(word)
			}
		default:
			i++
		}
	}
	return names
}

var labelListKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true}

// keywords are PromQL's keywords and aggregation operators: an aggregation
// may be followed by "by (…)" rather than "(".
var keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true, "atan2": true, "sum": true, "min": true, "max": true, "avg": true,
	"group": true, "stddev": true, "stdvar": true, "count": true, "count_values": true, "bottomk": true,
	"topk": true, "quantile": true, "limitk": true, "limit_ratio": true}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q != '`':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return i
}

// skipUntil returns the index after the close that ends the group opened
// at i, stepping over string literals inside it.
func skipUntil(s string, i int, close byte) int {
	for i++; i < len(s); i++ {
		switch {
		case s[i] == '"' || s[i] == '\'' || s[i] == '`':
			i = skipString(s, i) - 1
		case s[i] == close:
			return i + 1
		}
	}
	return i
}

// grafanaQueryMetrics returns the metric names of a Grafana Prometheus
// query: PromQL, or a template variable query such as
// label_values(metric{…}, label).
func grafanaQueryMetrics(q string) []string {
	q = strings.TrimSpace(q)
	if m := labelValues.FindStringSubmatch(q); m != nil {
		return metricNames(m[1])
	}
	if strings.HasPrefix(q, "label_values(") || strings.HasPrefix(q, "label_names(") {
		return nil // label_values(label), label_names(): no metric
	}
	return metricNames(q)
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$`)

func TestMetricNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want []string
	}{
		{`up{job="ledgerd"} == 0`, []string{"up"}},
		{`sum by (job) (rate(a_total{status=~"5..|408|429"}[5m])) / sum by (job) (rate(a_total[5m])) > 0.05`, []string{"a_total"}},
		{`histogram_quantile(0.99, sum by (job, endpoint, le) (rate(d_seconds_bucket[5m]))) > 1`, []string{"d_seconds_bucket"}},
		{`sum(x) without (instance, le) / on (job) group_left (version) build_info`, []string{"x", "build_info"}},
		{`rate(a[$__rate_interval]) / rate(b{instance=~"$instance"}[${__range}]) and c > bool 1e-3`, []string{"a", "b", "c"}},
		{`time() - max by (job) (last_run_seconds) > 3600`, []string{"last_run_seconds"}},
		{`label_replace(a, "dst", "$1 by (x) {", "src", "(.*)") offset 1h30m`, []string{"a"}},
		{"sum(\n  a # a comment naming not_a_metric\n) or vector(0)", []string{"a"}},
		{`count(a:recorded:rate5m{l='it\'s}'}) BY (l) unless on() absent(b) + Inf - NaN`, []string{"a:recorded:rate5m", "b"}},
		{`min_over_time(a[1h:5m]) / .5 * -0x1F`, []string{"a"}},
		{`sum(rate(a_total[5m])) / sum(rate(a_total[5m]))`, []string{"a_total"}},
	}
	for _, c := range cases {
		if got := metricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
	for q, want := range map[string][]string{
		"label_values(ledgerd_build_info, instance)":       {"ledgerd_build_info"},
		`label_values(up{job="ledgerd"}, instance)`:        {"up"},
		"label_values(instance)":                           nil,
		"sum(rate(ledgerd_callback_requests_total[5m]))":   {"ledgerd_callback_requests_total"},
		"  label_values(a{b=\"c, d\"},   instance)  ":      {"a"},
		"query_result(topk(5, ledgerd_holds_outstanding))": {"ledgerd_holds_outstanding"},
	} {
		if got := grafanaQueryMetrics(q); !slices.Equal(got, want) {
			t.Errorf("grafanaQueryMetrics(%q) = %q, want %q", q, got, want)
		}
	}
}
