package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/server"
)

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert,omitempty"`
	Record      string            `yaml:"record,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// ruleTests is a promtool test file.
type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			Alertname string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []templateVar `json:"list"`
	} `json:"templating"`
}

// templateVar is a Grafana template variable.
type templateVar struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

type panel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Datasource  json.RawMessage `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit    string `json:"unit"`
			NoValue string `json:"noValue"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID      string          `json:"refId"`
		Expr       string          `json:"expr"`
		Datasource json.RawMessage `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

// composeFile is the part of a compose file the tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string `yaml:"image"`
		Environment any    `yaml:"environment"` // a map, or a list of K=V
		Secrets     []any  `yaml:"secrets"`     // names, or {source: name}
		Volumes     []any  `yaml:"volumes"`
	} `yaml:"services"`
	Secrets map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

type prometheusConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Authorization struct {
			Type            string `yaml:"type"`
			CredentialsFile string `yaml:"credentials_file"`
		} `yaml:"authorization"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// testBundle is everything a subtest reads, loaded fresh for each.
type testBundle struct {
	metrics     []string // deploy/metrics.txt, in file order
	rules       []rule   // every rule of alerts.yml
	ruleTests   ruleTests
	dash        dashboard
	dsUIDs      []string // uids of the provisioned Grafana datasources
	compose     composeFile
	prom        prometheusConfig
	config      string // docs/configuration.md
	contract    string
	ledgerdEnv  []string          // the env vars ledgerd reads, from ledgerd -h
	ledgerdDefs map[string]string // their defaults
}

// metricNameLine is one line of metrics.txt.
var metricNameLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{}
	b.metrics = strings.Split(strings.TrimSuffix(read(t, "metrics.txt"), "\n"), "\n")
	var rf ruleFile
	decodeYAML(t, "prometheus/alerts.yml", &rf)
	for _, g := range rf.Groups {
		b.rules = append(b.rules, g.Rules...)
	}
	if len(b.rules) == 0 {
		t.Fatal("prometheus/alerts.yml has no rules")
	}
	decodeYAML(t, "prometheus/alerts_test.yml", &b.ruleTests)
	if err := json.Unmarshal([]byte(read(t, "grafana/ledgerd-dashboard.json")), &b.dash); err != nil {
		t.Fatalf("grafana/ledgerd-dashboard.json: %v", err)
	}
	files, _ := filepath.Glob("grafana/provisioning/datasources/*.yml")
	for _, f := range files {
		var ds struct {
			Datasources []struct {
				UID string `yaml:"uid"`
			} `yaml:"datasources"`
		}
		decodeYAML(t, f, &ds)
		for _, d := range ds.Datasources {
			b.dsUIDs = append(b.dsUIDs, d.UID)
		}
	}
	decodeYAML(t, "compose.yaml", &b.compose)
	decodeYAML(t, "prometheus/prometheus.yml", &b.prom)
	b.config = read(t, "../docs/configuration.md")
	b.contract = read(t, "../docs/contract.md")
	b.ledgerdEnv, b.ledgerdDefs = ledgerdSettings(t)
	return b
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func decodeYAML(t *testing.T, path string, v any) {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(read(t, path)))
	dec.KnownFields(false)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var usageEnv = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*), default "([^"]*)"`)

// ledgerdSettings returns the env vars ledgerd reads and their defaults, as
// its usage (ledgerd -h) prints them.
func ledgerdSettings(t *testing.T) ([]string, map[string]string) {
	t.Helper()
	var usage bytes.Buffer
	_, err := server.LoadConfig([]string{"-h"}, func(string) string { return "" }, &usage)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("LoadConfig -h: %v, want flag.ErrHelp", err)
	}
	var names []string
	defs := map[string]string{}
	for _, m := range usageEnv.FindAllStringSubmatch(usage.String(), -1) {
		if _, seen := defs[m[1]]; !seen {
			names = append(names, m[1])
		}
		defs[m[1]] = m[2]
	}
	// Every setting of contract §1 that exists today: fewer means the
	// usage format changed and this parse must follow it.
	if len(names) < 20 {
		t.Fatalf("found %d env vars in ledgerd's usage (want at least 20): did its format change?\n%s", len(names), usage.String())
	}
	return names, defs
}

// envVar is a backticked env var name in markdown.
var envVar = regexp.MustCompile("`([A-Z][A-Z0-9_]*[A-Z0-9])`")

// envTable returns the env var names in the table that starts with an
// "| env var" header under the heading that starts with heading.
func envTable(t *testing.T, doc, heading string) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n"+heading)
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	names := map[string]bool{}
	in := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if strings.HasPrefix(line, "| env var") {
			in = true
			continue
		}
		if in && !strings.HasPrefix(line, "|") {
			break
		}
		if in {
			for _, m := range envVar.FindAllStringSubmatch(line, -1) {
				names[m[1]] = true
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("no env var table under %q", heading)
	}
	return names
}

// notYetRead returns the env vars that docs/contract.md's last section says
// this build does not read yet.
func notYetRead(t *testing.T, contract string) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(contract, "\n## Where this build falls short")
	if !ok {
		t.Fatal(`docs/contract.md has no "## Where this build falls short" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	names := map[string]bool{}
	for _, m := range envVar.FindAllStringSubmatch(section, -1) {
		names[m[1]] = true
	}
	return names
}

// environment returns the names and values of a compose service's env.
func environment(t *testing.T, env any) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch e := env.(type) {
	case nil:
	case map[string]any:
		for k, v := range e {
			out[k] = fmt.Sprint(v)
		}
	case []any:
		for _, kv := range e {
			k, v, _ := strings.Cut(fmt.Sprint(kv), "=")
			out[k] = v
		}
	default:
		t.Fatalf("environment of type %T", env)
	}
	return out
}

// secretNames returns the secrets a compose service mounts.
func secretNames(t *testing.T, secrets []any) []string {
	t.Helper()
	var out []string
	for _, s := range secrets {
		switch s := s.(type) {
		case string:
			out = append(out, s)
		case map[string]any:
			out = append(out, fmt.Sprint(s["source"]))
		default:
			t.Fatalf("secret entry of type %T", s)
		}
	}
	return out
}

// mountedSecret returns the secret a /run/secrets path names, checking that
// service mounts it.
func mountedSecret(t *testing.T, b *testBundle, service, path string) string {
	t.Helper()
	name, ok := strings.CutPrefix(path, "/run/secrets/")
	if !ok {
		t.Errorf("%s: %q is not under /run/secrets/", service, path)
		return ""
	}
	if !slices.Contains(secretNames(t, b.compose.Services[service].Secrets), name) {
		t.Errorf("%s reads %s but does not mount the secret %s", service, path, name)
	}
	return name
}

func datasourceUID(raw json.RawMessage) (string, error) {
	var ds struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	if err := json.Unmarshal(raw, &ds); err != nil || ds.UID == "" {
		return "", fmt.Errorf("datasource %s is not {type, uid}", raw)
	}
	return ds.UID, nil
}

// allPanels returns the dashboard's panels, those of collapsed rows
// included, rows excluded.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, allPanels(p.Panels)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// prometheusOwn are series Prometheus makes itself: not in ledgerd's
// registry, so not in metrics.txt.
var prometheusOwn = map[string]bool{"up": true}

// TestDashboardAndRulesUseListedMetrics: the dashboard and the alert rules
// query only metrics that deploy/metrics.txt lists (ledgerd's registry), or
// that Prometheus makes itself.
func TestDashboardAndRulesUseListedMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	listed := map[string]bool{}
	for i, name := range b.metrics {
		if !metricNameLine.MatchString(name) {
			t.Errorf("metrics.txt line %d: %q is not a metric name", i+1, name)
		}
		if listed[name] {
			t.Errorf("metrics.txt lists %s twice", name)
		}
		listed[name] = true
	}
	// A histogram's series are its family's name plus a suffix; the
	// registry knows the family.
	family := func(name string) string {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && !listed[name] && listed[base] {
				return base
			}
		}
		return name
	}
	used := map[string]string{} // name → where, first use
	use := func(where, expr string, names []string) {
		if len(names) == 0 {
			t.Errorf("%s names no metric: %q", where, expr)
		}
		for _, n := range names {
			if _, ok := used[family(n)]; !ok {
				used[family(n)] = where
			}
		}
	}
	for _, r := range b.rules {
		use("alert "+r.Alert, r.Expr, metricNames(r.Expr))
	}
	for _, p := range allPanels(b.dash.Panels) {
		for _, tg := range p.Targets {
			use(fmt.Sprintf("panel %q", p.Title), tg.Expr, metricNames(tg.Expr))
		}
	}
	for _, v := range b.dash.Templating.List {
		if v.Type == "query" {
			q := variableQuery(t, v.Query)
			use("variable "+v.Name, q, grafanaQueryMetrics(q))
		}
	}
	for name, where := range used {
		if !listed[name] && !prometheusOwn[name] {
			t.Errorf("%s uses %s, which deploy/metrics.txt does not list", where, name)
		}
	}
	// metrics.txt also lists what the dashboard and the rules do not
	// use: every ledgerd_ metric ledgerd exports, which the server's
	// TestMetricsDocumented holds to its registry.
}

// TestDashboardPanelsHaveQueries: the dashboard has a uid, a title and one
// provisioned data source, and its panels have queries through the
// datasource variable.
func TestDashboardPanelsHaveQueries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if b.dash.UID == "" || b.dash.Title == "" {
		t.Error("the dashboard has no uid or title")
	}
	if len(b.dsUIDs) != 1 {
		t.Fatalf("provisioned datasources %q, want one", b.dsUIDs)
	}
	// Every query goes to the datasource variable, whose default is the
	// provisioned Prometheus: another Grafana picks its own.
	dsVar := slices.IndexFunc(b.dash.Templating.List, func(v templateVar) bool { return v.Name == "datasource" })
	if dsVar < 0 || b.dash.Templating.List[dsVar].Type != "datasource" || string(b.dash.Templating.List[dsVar].Query) != `"prometheus"` {
		t.Fatal(`the dashboard has no variable "datasource" of type datasource and query "prometheus"`)
	} else if cur := b.dash.Templating.List[dsVar].Current.Value; cur != b.dsUIDs[0] {
		t.Errorf("the datasource variable defaults to %v, but the provisioned one is %q", cur, b.dsUIDs[0])
	}
	checkDS := func(where string, raw json.RawMessage) {
		if len(raw) == 0 {
			return // inherits the panel's
		}
		if uid, err := datasourceUID(raw); err != nil {
			t.Errorf("%s: %v", where, err)
		} else if uid != "${datasource}" {
			t.Errorf("%s: datasource uid %q, want the variable ${datasource}", where, uid)
		}
	}
	ids := map[int]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			walk(p.Panels)
		}
	}
	walk(b.dash.Panels)
	panels := allPanels(b.dash.Panels)
	if len(panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	for _, p := range panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if len(p.Datasource) == 0 {
			t.Errorf("%s has no datasource", where)
		}
		checkDS(where, p.Datasource)
		queries := 0
		for _, tg := range p.Targets {
			checkDS(where+" target "+tg.RefID, tg.Datasource)
			if strings.TrimSpace(tg.Expr) != "" {
				queries++
			} else {
				t.Errorf("%s: target %s has no expr", where, tg.RefID)
			}
		}
		if queries == 0 {
			t.Errorf("%s has no query", where)
		}
	}
	for _, v := range b.dash.Templating.List {
		if v.Type == "query" {
			checkDS("variable "+v.Name, v.Datasource)
		}
	}
}

// TestDashboardQueriesParse: every dashboard query parses as PromQL
// (promtool).
func TestDashboardQueriesParse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	promtool := promtool(t, b)
	// Each query as a recording rule, with Grafana's variables replaced
	// by values, for promtool to parse.
	grafanaVar := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	var rules []rule
	for _, p := range allPanels(b.dash.Panels) {
		for _, tg := range p.Targets {
			expr := grafanaVar.ReplaceAllStringFunc(tg.Expr, func(v string) string {
				if strings.HasPrefix(strings.Trim(v, "${}"), "__") {
					return "5m" // $__rate_interval, $__interval, $__range
				}
				return ".*" // a variable inside a label matcher
			})
			rules = append(rules, rule{Record: fmt.Sprintf("panel_%d_%s", p.ID, tg.RefID), Expr: expr})
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, msg)
	}
}

// TestEveryAlertFiresAndStaysQuietInATest: alerts_test.yml loads
// alerts.yml, and every alert fires in one of its tests and stays quiet in
// another.
func TestEveryAlertFiresAndStaysQuietInATest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if !slices.Contains(b.ruleTests.RuleFiles, "alerts.yml") {
		t.Errorf("alerts_test.yml rule_files %q does not load alerts.yml", b.ruleTests.RuleFiles)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range b.ruleTests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				quiet[at.Alertname] = true
			}
		}
	}
	alerts := map[string]bool{}
	for _, r := range b.rules {
		if r.Alert == "" {
			continue
		}
		if alerts[r.Alert] {
			t.Errorf("alert %s is defined twice", r.Alert)
		}
		alerts[r.Alert] = true
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("alert %s: severity %q, want critical or warning", r.Alert, s)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("alert %s needs a summary and a description", r.Alert)
		}
		if !fires[r.Alert] {
			t.Errorf("alert %s has no test where it fires", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("alert %s has no test where it does not fire", r.Alert)
		}
	}
	for name := range fires {
		if !alerts[name] {
			t.Errorf("alerts_test.yml tests %s, which alerts.yml does not define", name)
		}
	}
	for name := range quiet {
		if !alerts[name] {
			t.Errorf("alerts_test.yml tests %s, which alerts.yml does not define", name)
		}
	}
}

// TestPrometheusScrapesLedgerdAdminListener: prometheus.yml loads its rule
// files (alerts.yml among them) and scrapes ledgerd's admin listener.
func TestPrometheusScrapesLedgerdAdminListener(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, f := range b.prom.RuleFiles {
		if _, err := os.Stat(filepath.Join("prometheus", f)); err != nil {
			t.Errorf("prometheus.yml rule_files: %v", err)
		}
	}
	if !slices.Contains(b.prom.RuleFiles, "alerts.yml") {
		t.Errorf("prometheus.yml rule_files %q does not load alerts.yml", b.prom.RuleFiles)
	}
	jobs := map[string]bool{}
	env := environment(t, b.compose.Services["ledgerd"].Environment)
	for _, sc := range b.prom.ScrapeConfigs {
		jobs[sc.JobName] = true
		if sc.JobName != "ledgerd" {
			continue
		}
		if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			t.Errorf("job ledgerd scrapes %s, want /metrics", sc.MetricsPath)
		}
		if sc.Authorization.Type != "Bearer" {
			t.Errorf("job ledgerd: authorization type %q, want Bearer", sc.Authorization.Type)
		}
		// Prometheus's token is the one ledgerd requires.
		if s := mountedSecret(t, b, "prometheus", sc.Authorization.CredentialsFile); s != "" {
			if want := mountedSecret(t, b, "ledgerd", env["LEDGER_ADMIN_TOKEN_FILE"]); s != want {
				t.Errorf("Prometheus sends the secret %s as its token, ledgerd requires %s", s, want)
			}
		}
		_, adminPort, err := net.SplitHostPort(env["LEDGER_ADMIN_LISTEN"])
		if err != nil {
			t.Fatalf("compose ledgerd LEDGER_ADMIN_LISTEN %q: %v", env["LEDGER_ADMIN_LISTEN"], err)
		}
		if host, _, _ := net.SplitHostPort(env["LEDGER_ADMIN_LISTEN"]); host == "" || host == "localhost" || net.ParseIP(host).IsLoopback() {
			t.Errorf("compose ledgerd LEDGER_ADMIN_LISTEN %q is not reachable from the Prometheus container", env["LEDGER_ADMIN_LISTEN"])
		}
		targets := 0
		for _, stc := range sc.StaticConfigs {
			for _, target := range stc.Targets {
				targets++
				host, port, err := net.SplitHostPort(target)
				if err != nil || host != "ledgerd" || port != adminPort {
					t.Errorf("job ledgerd target %q, want ledgerd:%s (the compose service's admin listener)", target, adminPort)
				}
			}
		}
		if targets == 0 {
			t.Error("job ledgerd has no targets")
		}
	}
	if !jobs["ledgerd"] {
		t.Fatal("prometheus.yml has no job ledgerd")
	}
	jobMatcher := regexp.MustCompile(`\bjob\s*=\s*"([^"]*)"`)
	for _, r := range b.rules {
		for _, m := range jobMatcher.FindAllStringSubmatch(r.Expr, -1) {
			if !jobs[m[1]] {
				t.Errorf("alert %s selects job %q, which prometheus.yml does not scrape", r.Alert, m[1])
			}
		}
	}
}

// TestComposeLedgerdEnvIsDocumented: the variables compose.yaml gives
// ledgerd are ones ledgerd reads, documented in docs/configuration.md.
func TestComposeLedgerdEnvIsDocumented(t *testing.T) {
	t.Parallel()
	b := setup(t)
	documented := envTable(t, b.config, "## ledgerd")
	reads := map[string]bool{}
	for _, v := range b.ledgerdEnv {
		reads[v] = true
	}
	pending := notYetRead(t, b.contract)
	env := environment(t, b.compose.Services["ledgerd"].Environment)
	if len(env) == 0 {
		t.Fatal("compose.yaml gives ledgerd no environment")
	}
	for name := range env {
		switch {
		case documented[name]:
		case pending[name] && !reads[name]:
			// Contract, not yet code: the manual documents it when
			// ledgerd reads it (the check below and
			// DocsListEveryEnvVarLedgerdReads then hold it to that).
			t.Logf("compose.yaml sets %s, which docs/contract.md says this build does not read yet", name)
		default:
			t.Errorf("compose.yaml sets %s for ledgerd; docs/configuration.md's ledgerd table does not document it", name)
		}
	}
}

// TestComposeSecretsAreMountedAndGenerated: every secret compose.yaml
// declares comes from a git-ignored file secrets.sh writes, every mounted
// one is declared, and secrets.sh writes each in the form its reader takes.
func TestComposeSecretsAreMountedAndGenerated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	composeSecretsMounted(t, b)
	fileOf, dbURL := composeSecretFiles(t, b)
	secretsShWritesEverySecret(t, b, fileOf, dbURL)
}

// composeSecretsMounted: secrets come from ./secrets/ (git-ignored), and
// every secret or file a service mounts exists.
func composeSecretsMounted(t *testing.T, b *testBundle) {
	t.Helper()
	if !strings.Contains(read(t, ".gitignore"), "secrets/") {
		t.Error("deploy/.gitignore does not ignore secrets/")
	}
	for name, s := range b.compose.Secrets {
		if !strings.HasPrefix(s.File, "./secrets/") || strings.Contains(s.File[len("./secrets/"):], "/") {
			t.Errorf("secret %s comes from %q, want ./secrets/<file> (git-ignored, written by secrets.sh)", name, s.File)
		}
	}
	for svc, s := range b.compose.Services {
		for _, name := range secretNames(t, s.Secrets) {
			if _, ok := b.compose.Secrets[name]; !ok {
				t.Errorf("service %s mounts secret %s, which compose.yaml does not declare", svc, name)
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(fmt.Sprint(v), ":")
			if strings.HasPrefix(src, "./") {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("service %s mounts %s: %v", svc, src, err)
				}
			}
		}
	}

}

// composeSecretFiles returns the secret each file-reading env var names
// (ledgerd's *_FILE and DATABASE_URL's passfile, Postgres's and Grafana's
// password files) and ledgerd's DATABASE_URL, which carries no password.
func composeSecretFiles(t *testing.T, b *testBundle) (map[string]string, *url.URL) {
	t.Helper()
	env := environment(t, b.compose.Services["ledgerd"].Environment)
	fileOf := map[string]string{}
	for k, v := range env {
		if strings.HasSuffix(k, "_FILE") {
			fileOf[k] = mountedSecret(t, b, "ledgerd", v)
		}
	}
	dbURL, err := url.Parse(env["DATABASE_URL"])
	if err != nil {
		t.Fatalf("DATABASE_URL: %v", err)
	}
	if _, has := dbURL.User.Password(); has {
		t.Error("DATABASE_URL carries a password: use the passfile")
	}
	fileOf["passfile"] = mountedSecret(t, b, "ledgerd", dbURL.Query().Get("passfile"))
	fileOf["POSTGRES_PASSWORD_FILE"] = mountedSecret(t, b, "postgres",
		environment(t, b.compose.Services["postgres"].Environment)["POSTGRES_PASSWORD_FILE"])
	fileOf["GF_SECURITY_ADMIN_PASSWORD__FILE"] = mountedSecret(t, b, "grafana",
		environment(t, b.compose.Services["grafana"].Environment)["GF_SECURITY_ADMIN_PASSWORD__FILE"])
	for _, k := range []string{"LEDGER_KEK_FILE", "LEDGER_ADMIN_TOKEN_FILE"} {
		if fileOf[k] == "" {
			t.Errorf("compose.yaml does not give ledgerd %s", k)
		}
	}
	return fileOf, dbURL
}

// secretsShWritesEverySecret: secrets.sh writes every declared secret, in
// a form its reader takes, and keeps them when run again.
func secretsShWritesEverySecret(t *testing.T, b *testBundle, fileOf map[string]string, dbURL *url.URL) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "secrets")
	run := func() {
		if out, err := exec.Command("bash", "secrets.sh", dir).CombinedOutput(); err != nil {
			t.Fatalf("secrets.sh: %v\n%s", err, out)
		}
	}
	run()
	if fi, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o700 {
		t.Errorf("secrets.sh made its directory %v, want 0700", fi.Mode().Perm())
	}
	contents := map[string]string{}
	for name, s := range b.compose.Secrets {
		path := filepath.Join(dir, filepath.Base(s.File))
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("secrets.sh did not write the secret %s: %v", name, err)
			continue
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v: the containers' users cannot read it unless it is 0644", name, fi.Mode().Perm())
		}
		c := read(t, path)
		if strings.TrimSpace(c) == "" || strings.ContainsAny(c, " \t\r\n") {
			t.Errorf("secret %s is empty or has white space: %q", name, c)
		}
		contents[name] = c
	}
	for _, k := range []string{"LEDGER_KEK_FILE", "LEDGER_SIGNING_SECRETS_FILE"} {
		if name := fileOf[k]; name != "" {
			if _, err := envelope.ParseSecret(contents[name]); err != nil {
				t.Errorf("%s (%s) is not the Base64 of 32 bytes: %v", k, name, err)
			}
		}
	}
	// ledgerd's passfile and the migrate service's are pgpass lines for
	// the users of their URLs; the postgres image's first start creates
	// those users (deploy/postgres/init-roles.sh) from the same files.
	migrateURL, err := url.Parse(environment(t, b.compose.Services["migrate"].Environment)["LEDGER_MIGRATION_DATABASE_URL"])
	if err != nil {
		t.Fatalf("LEDGER_MIGRATION_DATABASE_URL: %v", err)
	}
	fileOf["migrate passfile"] = mountedSecret(t, b, "migrate", migrateURL.Query().Get("passfile"))
	for _, c := range []struct {
		file string
		u    *url.URL
	}{{"passfile", dbURL}, {"migrate passfile", migrateURL}} {
		pgpass := strings.Split(contents[fileOf[c.file]], ":")
		if len(pgpass) != 5 || pgpass[3] != c.u.User.Username() || len(pgpass[4]) < 24 {
			t.Errorf("%s %q is not a pgpass line for user %s with a password", c.file, contents[fileOf[c.file]], c.u.User.Username())
		}
		mountedSecret(t, b, "postgres", "/run/secrets/"+fileOf[c.file])
	}
	if dbURL.User.Username() == migrateURL.User.Username() {
		t.Errorf("ledgerd and the migrations both connect as %s", dbURL.User.Username())
	}
	run()
	for name, s := range b.compose.Secrets {
		if got := read(t, filepath.Join(dir, filepath.Base(s.File))); got != contents[name] {
			t.Errorf("a second run of secrets.sh changed %s", name)
		}
	}
}

// TestDocsListEveryEnvVarLedgerdReads: docs/configuration.md's ledgerd
// table and docs/contract.md's configuration table document every variable
// ledgerd reads.
func TestDocsListEveryEnvVarLedgerdReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	config := envTable(t, b.config, "## ledgerd")
	contract := envTable(t, b.contract, "## 1.")
	pending := notYetRead(t, b.contract)
	for _, v := range b.ledgerdEnv {
		if !config[v] {
			t.Errorf("ledgerd reads %s; docs/configuration.md's ledgerd table does not document it", v)
		}
		if !contract[v] {
			t.Errorf("ledgerd reads %s; docs/contract.md's configuration table does not document it", v)
		}
		if pending[v] {
			t.Errorf("docs/contract.md says this build does not read %s yet, but ledgerd -h lists it: take it off that list", v)
		}
	}
	for v := range pending {
		if !contract[v] {
			t.Errorf("docs/contract.md lists %s as not read yet, but its configuration table does not have it", v)
		}
	}
}

// TestDockerfileBuildsANonRootLedgerdImage: the Dockerfile builds ledgerd
// with go.mod's Go version into an image that runs as a non-root user.
func TestDockerfileBuildsANonRootLedgerdImage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(read(t, "../go.mod"))
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	// Instructions, continuation lines joined, comments dropped.
	var instr []string
	sc := bufio.NewScanner(strings.NewReader(read(t, "../Dockerfile")))
	cont := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" && cont == "" {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cont += l + " "
			continue
		}
		instr = append(instr, cont+line)
		cont = ""
	}
	var stages [][]string
	for _, in := range instr {
		if strings.HasPrefix(strings.ToUpper(in), "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("instruction before FROM: %q", in)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a builder and a runtime stage", len(stages))
	}
	if want := regexp.MustCompile(`^FROM golang:` + regexp.QuoteMeta(goVersion[1]) + `[.-]`); !want.MatchString(stages[0][0]) {
		t.Errorf("builder %q, want golang:%s… (go.mod's Go)", stages[0][0], goVersion[1])
	}
	if !slices.ContainsFunc(stages[0], func(s string) bool {
		return strings.HasPrefix(s, "RUN ") && strings.Contains(s, "go build") && strings.Contains(s, "./cmd/...")
	}) {
		t.Error("the builder does not go build ./cmd/...")
	}
	final := map[string]string{}
	for _, in := range stages[len(stages)-1] {
		k, v, _ := strings.Cut(in, " ")
		final[strings.ToUpper(k)] = v
	}
	uid, _, _ := strings.Cut(final["USER"], ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("runtime USER %q, want a numeric non-root uid", final["USER"])
	}
	if !strings.Contains(final["ENTRYPOINT"], "ledgerd\"") {
		t.Errorf("ENTRYPOINT %q, want ledgerd", final["ENTRYPOINT"])
	}
	exposed := strings.Fields(final["EXPOSE"])
	for _, v := range []string{"LEDGER_LISTEN", "LEDGER_ADMIN_LISTEN"} {
		_, port, err := net.SplitHostPort(b.ledgerdDefs[v])
		if err != nil {
			t.Fatalf("ledgerd's default %s %q: %v", v, b.ledgerdDefs[v], err)
		}
		if !slices.Contains(exposed, port) {
			t.Errorf("EXPOSE %q lacks %s, the default port of %s", final["EXPOSE"], port, v)
		}
	}
}

// variableQuery returns a Grafana template variable's query: a string, or
// an object with a query field.
func variableQuery(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("variable query %s: %v", raw, err)
	}
	return o.Query
}
