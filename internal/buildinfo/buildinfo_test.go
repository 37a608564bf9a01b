package buildinfo

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want Info
		line string
	}{
		{"Clean", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{"1.2.3", "0123456789ab", "go1.26.8"}, "1.2.3, revision 0123456789ab, go1.26.8"},
		{"DirtyWorkTree", debug.BuildInfo{GoVersion: "go1.26.8",
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			Info{"1.2.3", "abc+dirty", "go1.26.8"}, "1.2.3, revision abc+dirty, go1.26.8"},
		{"NoVCS", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{"1.2.3", "unknown", "go1.26.8"}, "1.2.3, revision unknown (built without VCS information), go1.26.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := of(&c.bi, "1.2.3")
			if got != c.want {
				t.Fatalf("of = %+v, want %+v", got, c.want)
			}
			if got.String() != c.line {
				t.Fatalf("String = %q, want %q", got.String(), c.line)
			}
		})
	}
	if in := Read(); in.Version != Version || in.GoVersion != runtime.Version() {
		t.Fatalf("Read of the test binary = %+v, want version %s and %s", in, Version, runtime.Version())
	}
}

// released matches a released section's heading of the changelog:
// "## [0.1.0] - 2026-11-26".
var released = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$`)

// TestVersionIsTheChangelogsNewestRelease: what --version prints is the
// release CHANGELOG.md describes last, and the changelog has an
// [Unreleased] section above it for what comes next.
func TestVersionIsTheChangelogsNewestRelease(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var headings []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "## ") {
			headings = append(headings, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(headings) < 2 || headings[0] != "## [Unreleased]" {
		t.Fatalf("CHANGELOG.md's sections begin %q, want [Unreleased] then the newest release", headings)
	}
	m := released.FindStringSubmatch(headings[1])
	if m == nil {
		t.Fatalf("CHANGELOG.md's newest release is %q, want \"## [X.Y.Z] - YYYY-MM-DD\"", headings[1])
	}
	if m[1] != Version {
		t.Fatalf("buildinfo.Version is %s, CHANGELOG.md's newest release %s", Version, m[1])
	}
}

// TestStampedBuild: -ldflags -X sets the version a binary prints.
func TestStampedBuild(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "stamp")
	const stamped, revision = "9.8.7-rc.1", "0123456789abcdef0123456789abcdef01234567"
	// As the Dockerfile builds: no VCS information, version and revision
	// stamped.
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "-ldflags",
		"-X github.com/provider-ledger/adapter/internal/buildinfo.Version="+stamped+
			" -X github.com/provider-ledger/adapter/internal/buildinfo.Revision="+revision, "./testdata/stamp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if line, want := strings.TrimSpace(string(out)), stamped+", revision 0123456789ab, "+runtime.Version(); line != want {
		t.Fatalf("a build stamped %s and %s prints %q, want %q", stamped, revision, line, want)
	}
}
