package deploy

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/tooltest"
)

// promtoolModule is the Go module version of the Prometheus release
// compose.yaml runs (v3.X.Y is module v0.30X.Y): .ci/run builds its
// promtool from it when the one installed is not of that release.
const promtoolModule = "github.com/prometheus/prometheus@v0.305.0"

// composePrometheus returns the version of the Prometheus image
// compose.yaml runs: "3.5.0" for prom/prometheus:v3.5.0@sha256:….
func composePrometheus(t *testing.T, b *testBundle) string {
	t.Helper()
	image := b.compose.Services["prometheus"].Image
	m := regexp.MustCompile(`^prom/prometheus:v(\d+\.\d+\.\d+)@`).FindStringSubmatch(image)
	if m == nil {
		t.Fatalf("compose.yaml's prometheus image %q is not prom/prometheus:vX.Y.Z@sha256:…", image)
	}
	return m[1]
}

// promtoolVersion is the release a promtool says it is.
func promtoolVersion(path string) string {
	out, _ := exec.Command(path, "--version").CombinedOutput()
	if m := regexp.MustCompile(`version (\S+)`).FindSubmatch(out); m != nil {
		return strings.TrimPrefix(string(m[1]), "v")
	}
	return "unknown"
}

// promtool returns a promtool of the release compose.yaml runs: the rules
// and their tests are checked by the Prometheus that will evaluate them.
// .ci/run installs it into GOPATH/bin; where none is installed the test is
// skipped with one line, or fails when CI is set.
func promtool(t *testing.T, b *testBundle) string {
	t.Helper()
	want := composePrometheus(t, b)
	gopathOne := filepath.Join(build.Default.GOPATH, "bin", "promtool")
	found := tooltest.Require(t, "promtool", gopathOne)
	for _, p := range []string{found, gopathOne} {
		if promtoolVersion(p) == want {
			return p
		}
	}
	msg := "promtool " + want + " (the Prometheus compose.yaml runs), found " + promtoolVersion(found) + " at " + found +
		"; .ci/run builds it from " + promtoolModule
	if os.Getenv("CI") != "" {
		t.Fatal("needs " + msg)
	}
	t.Skip("skipped: needs " + msg)
	return ""
}

// TestAlertRulesUnderComposePrometheus: the alert rules load, their unit
// tests pass and prometheus.yml parses under the promtool of the Prometheus
// compose.yaml runs.
func TestAlertRulesUnderComposePrometheus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := promtool(t, b)
	for _, args := range [][]string{
		{"check", "rules", "prometheus/alerts.yml"},
		{"test", "rules", "prometheus/alerts_test.yml"},
		{"check", "config", "--syntax-only", "prometheus/prometheus.yml"},
	} {
		if out, err := exec.Command(p, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestCIBuildsComposePromtool: .ci/run builds the promtool of the release
// compose.yaml runs, from the module version of that release.
func TestCIBuildsComposePromtool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := composePrometheus(t, b)
	var x, y, z int
	if _, err := fmt.Sscanf(release, "%d.%d.%d", &x, &y, &z); err != nil || x != 3 {
		t.Fatalf("Prometheus %s: the module version mapping below is that of 3.x", release)
	}
	if want := fmt.Sprintf("github.com/prometheus/prometheus@v0.%d.%d", 300+y, z); promtoolModule != want {
		t.Errorf("promtoolModule %s, want %s for Prometheus %s", promtoolModule, want, release)
	}
	ci := read(t, "../.ci/run")
	for _, line := range []string{"prom_release=" + release, "prom_module=" + promtoolModule} {
		if !strings.Contains(ci, "\n"+line+"\n") {
			t.Errorf(".ci/run has no line %q", line)
		}
	}
}
