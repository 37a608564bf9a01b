package loadtest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The HTML report: one self-contained page (no external assets, works
// offline). Tables are rendered here; the charts are drawn on canvases by
// the page's own script from the report's JSON, embedded in the page. Once
// drawn, the script sets data-charts-drawn on <body> to the number of
// charts drawn and data-drawn on each canvas to the points it drew, so a
// headless browser can tell that the charts drew (see html_test.go).

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":  func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"f1":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"pct": func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"dur": func(a, b time.Time) string { return b.Sub(a).Round(100 * time.Millisecond).String() },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"mark": func(c Check) string {
		switch {
		case !c.OK:
			return "fail"
		case c.NotChecked != "":
			return "na"
		}
		return "ok"
	},
	"statuses": func(m map[string]int) string {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	},
}).Parse(reportTemplate))

// htmlData is what the template sees.
type htmlData struct {
	R        *Report
	Title    string
	DataJSON template.JS
}

// renderHTML renders the report as one HTML page.
func renderHTML(r *Report) ([]byte, error) {
	data := struct {
		*Report
		DeadlinesMs []float64 `json:"deadlinesMs"`
	}{r, deadlinesMs}
	// encoding/json escapes <, > and & in strings, so the JSON cannot close
	// the script element it sits in.
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	verdict := "PASS"
	if !r.OK {
		verdict = "FAIL"
	}
	var sb strings.Builder
	err = reportPage.Execute(&sb, htmlData{R: r, Title: fmt.Sprintf("loadtest %s %s — %s", r.Command, r.Prefix, verdict), DataJSON: template.JS(b)})
	return []byte(sb.String()), err
}

// writeHTML writes the report's HTML page to path.
func writeHTML(path string, r *Report) error {
	b, err := renderHTML(r)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b, 0o644)
}
