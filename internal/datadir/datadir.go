// Package datadir resolves ledgerd's default data directory, var/ledgerd,
// against the root of this project's source tree when the working
// directory is inside one: `go run .` in cmd/ledgerd and `go run
// ./cmd/ledgerd` at the root then share one embedded cluster and one
// development signing secret, and `servicesim drive` or `ledgerctl db-url`
// run from any directory of the tree find them. Outside a source tree (an
// installed binary) the default is var/ledgerd in the working directory.
//
// Only the default is resolved so: a data directory given explicitly
// (LEDGER_DATA_DIR, --data-dir) is taken as given.
//
// It also holds the file and port helpers the packages that keep files in a
// data directory share: [WriteFileAtomic], [SyncDir] and [FreePort].
package datadir

import (
	"os"
	"path/filepath"
)

// Rel is the default data directory, relative to the source root or the
// working directory.
const Rel = "var/ledgerd"

// Default is ledgerd's default data directory: Rel under the source root
// that holds the working directory, else Rel.
func Default() string { return Path(Rel) }

// Path is rel under the source root that holds the working directory,
// else rel.
func Path(rel string) string {
	wd, err := os.Getwd()
	if err != nil {
		return rel
	}
	return Under(wd, rel)
}

// Under returns rel under the source root that holds dir, or rel itself
// when dir is in no source tree of this project.
func Under(dir, rel string) string {
	if root := Root(dir); root != "" {
		return filepath.Join(root, rel)
	}
	return rel
}

// Root is the nearest directory at or above dir that holds this project's
// go.mod and cmd/ledgerd, or "" when there is none.
func Root(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isDir(filepath.Join(dir, "cmd", "ledgerd")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
