// Package tooltest finds the programs a test needs beyond Go and the
// PostgreSQL server: pgbouncer, chromium, promtool, and the PostgreSQL
// client programs psql and pgbench where a test runs them from PATH. Such
// a test runs where the program is installed, is skipped with one line
// naming it where it is not (a fresh clone passes with Go and Postgres
// alone), and fails when the CI environment variable is set: CI installs
// every such program (.ci/run does, with apt-get), so there a missing one
// is a broken machine, not a choice.
//
// SkipShort marks the heavy tests that go test -short leaves out.
//
// It imports nothing of the project, so that any test can use it.
package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianPackage names the Debian package of a program when it is not the
// program's own name. psql and pgbench come with the PostgreSQL packages
// (apt-get install postgresql installs both), but not with server
// binaries alone.
var debianPackage = map[string]string{"promtool": "prometheus", "psql": "postgresql-client", "pgbench": "postgresql",
	"pg_autoctl": "pg-auto-failover-cli postgresql-15-auto-failover"}

// Require returns the absolute path of the program name, looked up on PATH,
// or else of the first of alternatives found: a bare name is looked up on
// PATH, a path with a slash is taken when it is an executable file (for
// programs Debian installs outside a user's PATH, such as
// /usr/sbin/pgbouncer). When none is found the test is skipped with one
// line naming the program, or fails when CI is set.
func Require(t testing.TB, name string, alternatives ...string) string {
	t.Helper()
	return require(t, os.Getenv, name, alternatives...)
}

func require(t testing.TB, getenv func(string) string, name string, alternatives ...string) string {
	t.Helper()
	if p := find(append([]string{name}, alternatives...)); p != "" {
		return p
	}
	pkg := packageOf(name)
	looked := strings.Join(append([]string{name}, alternatives...), ", ")
	if getenv("CI") != "" {
		t.Fatalf("%s is not installed (looked for %s) and CI is set, where every test must run: apt-get install %s", name, looked, pkg)
	}
	t.Skipf("skipped: needs %s, not installed (apt-get install %s; with CI set this fails)", name, pkg)
	return ""
}

// packageOf is the Debian package that installs the program name.
func packageOf(name string) string {
	if pkg := debianPackage[name]; pkg != "" {
		return pkg
	}
	return name
}

// find returns the absolute path of the first candidate found, or "".
func find(candidates []string) string {
	for _, c := range candidates {
		if !strings.Contains(c, "/") {
			if p, err := exec.LookPath(c); err == nil {
				if abs, err := filepath.Abs(p); err == nil {
					return abs
				}
			}
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// SkipShort skips a heavy test under go test -short (the quick lane of
// docs/development.md) with one line saying what it does that takes long;
// without -short it does nothing. Call it first in the test function, so
// that the test costs nothing in the quick lane. docs/development.md
// lists the tests that call it; a test of package docs holds the list to
// them.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipped by -short: %s (go test ./... runs it)", why)
	}
}
