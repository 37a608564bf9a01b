package embedpg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errNoBinaries is returned by [FindBinaries] and [Start] when no PostgreSQL
// server binaries (initdb and postgres) can be found.
var errNoBinaries = errors.New("embedpg: no PostgreSQL server binaries (initdb and postgres) found " +
	"in PATH, `pg_config --bindir` or /usr/lib/postgresql/*/bin; install PostgreSQL " +
	"(e.g. `apt-get install postgresql`, `dnf install postgresql-server`, `brew install postgresql`) " +
	"or set DATABASE_URL to an existing database")

// FindBinaries returns the directory holding the PostgreSQL server binaries
// initdb and postgres. A non-empty binDir is used as given and must hold them.
// Otherwise it searches, in order: the directories of PATH, the output of
// `pg_config --bindir` (pg_config found in PATH), and /usr/lib/postgresql/*/bin
// with the highest major version first. Nothing found: an error wrapping
// errNoBinaries.
func FindBinaries(binDir string) (string, error) {
	return defaultFinder().find(binDir)
}

// finder is the discovery of FindBinaries with its inputs as fields, so tests
// can point it at a temporary tree.
type finder struct {
	path  string   // a PATH-style list of directories
	globs []string // patterns whose matches are .../<major version>/bin
}

func defaultFinder() finder {
	return finder{
		path:  os.Getenv("PATH"),
		globs: []string{"/usr/lib/postgresql/*/bin"},
	}
}

func (f finder) find(override string) (string, error) {
	if override != "" {
		if !hasServerBinaries(override) {
			return "", fmt.Errorf("%w (BinDir %q has no executable initdb and postgres)", errNoBinaries, override)
		}
		return filepath.Abs(override)
	}
	for _, dir := range filepath.SplitList(f.path) {
		if dir != "" && hasServerBinaries(dir) {
			return resolveBinDir(dir)
		}
	}
	if dir := f.pgConfigBinDir(); dir != "" && hasServerBinaries(dir) {
		return dir, nil
	}
	var candidates []string
	for _, g := range f.globs {
		m, _ := filepath.Glob(g) // only ErrBadPattern, impossible for our patterns
		candidates = append(candidates, m...)
	}
	slices.SortStableFunc(candidates, func(a, b string) int {
		return compareVersions(filepath.Base(filepath.Dir(b)), filepath.Base(filepath.Dir(a))) // descending
	})
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", errNoBinaries
}

// pgConfigBinDir asks the first pg_config in f.path for its bindir; "" when
// there is none or it fails.
func (f finder) pgConfigBinDir() string {
	var pgConfig string
	for _, dir := range filepath.SplitList(f.path) {
		if dir != "" && isExecutable(filepath.Join(dir, "pg_config")) {
			pgConfig = filepath.Join(dir, "pg_config")
			break
		}
	}
	if pgConfig == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgConfig, "--bindir").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// resolveBinDir follows a PATH entry's initdb symlink (e.g. /usr/local/bin/initdb
// -> /usr/lib/postgresql/15/bin/initdb) to the installation's own bin
// directory, so initdb and postgres come from one version.
func resolveBinDir(dir string) (string, error) {
	if real, err := filepath.EvalSymlinks(filepath.Join(dir, "initdb")); err == nil && hasServerBinaries(filepath.Dir(real)) {
		return filepath.Dir(real), nil
	}
	return filepath.Abs(dir)
}

func hasServerBinaries(dir string) bool {
	return isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres"))
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// compareVersions orders "9.6" < "10" < "15"; non-numeric parts compare as 0.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}
