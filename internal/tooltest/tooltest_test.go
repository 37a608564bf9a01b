package tooltest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a test: it records how Require ended it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// call runs require as a test would, in a goroutine of its own (Skip and
// Fatal end it), and returns the path found and how it ended.
func call(ci string, name string, alternatives ...string) (path string, r *recorder) {
	r = &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		path = require(r, func(k string) string {
			if k == "CI" {
				return ci
			}
			return ""
		}, name, alternatives...)
	}()
	<-done
	return path, r
}

func TestRequire(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tool := filepath.Join(dir, "some-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const absent = "tooltest-no-such-program"

	t.Run("FoundOnPATH", func(t *testing.T) {
		t.Parallel()
		p, r := call("", "sh")
		if p == "" || !filepath.IsAbs(p) || r.skipped != "" || r.failed != "" {
			t.Fatalf("sh: path %q, skipped %q, failed %q", p, r.skipped, r.failed)
		}
	})
	t.Run("FoundAtAnAlternativePath", func(t *testing.T) {
		t.Parallel()
		p, r := call("", absent, notExec, tool)
		if p != tool || r.skipped != "" || r.failed != "" {
			t.Fatalf("path %q, want %q (skipped %q, failed %q)", p, tool, r.skipped, r.failed)
		}
	})
	t.Run("AbsentSkipsWithOneLineNamingIt", func(t *testing.T) {
		t.Parallel()
		p, r := call("", absent, notExec)
		if p != "" || r.failed != "" || !strings.Contains(r.skipped, "needs "+absent) || !strings.Contains(r.skipped, "apt-get install "+absent) || strings.Contains(r.skipped, "\n") {
			t.Fatalf("path %q, skipped %q, failed %q", p, r.skipped, r.failed)
		}
	})
	t.Run("AbsentFailsInCI", func(t *testing.T) {
		t.Parallel()
		_, r := call("1", absent)
		if r.skipped != "" || !strings.Contains(r.failed, absent) || !strings.Contains(r.failed, "CI") {
			t.Fatalf("skipped %q, failed %q", r.skipped, r.failed)
		}
	})
	t.Run("DebianPackageNamed", func(t *testing.T) {
		t.Parallel()
		for name, want := range map[string]string{"promtool": "prometheus", "pgbouncer": "pgbouncer", "chromium": "chromium",
			"psql": "postgresql-client", "pgbench": "postgresql"} {
			if got := packageOf(name); got != want {
				t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
			}
		}
	})
}

// TestSkipShort: under -short it skips with the reason; otherwise the test
// goes on.
func TestSkipShort(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		SkipShort(r, "builds and storms")
	}()
	<-done
	if testing.Short() != (r.skipped != "") || r.failed != "" {
		t.Fatalf("short %v: skipped %q, failed %q", testing.Short(), r.skipped, r.failed)
	}
	if testing.Short() && !strings.Contains(r.skipped, "builds and storms") {
		t.Fatalf("skip message %q does not say why", r.skipped)
	}
}
