// Package buildinfo describes the running binary: its release (Version, the
// newest released section of CHANGELOG.md), the VCS revision and the Go
// version the toolchain recorded. The --version of every binary (ledgerd,
// ledgerctl, loadtest, servicesim) and ledgerd's ledgerd_build_info metric
// read it.
package buildinfo

import (
	"cmp"
	"runtime/debug"
)

// Version is the release this source tree is: the newest released section
// of CHANGELOG.md (a test holds them equal). A build that stamps another
// sets it at link time:
//
//	go build -ldflags "-X github.com/provider-ledger/adapter/internal/buildinfo.Version=0.1.1" ./cmd/...
//
// A variable, not a constant, so that -X can set it.
var Version = "0.1.0"

// Revision is the VCS revision a build without VCS information stamps at
// link time (the container build, whose context has no .git):
//
//	go build -ldflags "-X github.com/provider-ledger/adapter/internal/buildinfo.Revision=$(git rev-parse HEAD)" ./cmd/...
//
// Empty: the revision go build recorded, if any.
var Revision = ""

// Info is what --version prints. Fields the build did not record are
// "unknown".
type Info struct {
	Version   string // the release, Version
	Revision  string // VCS revision, 12 hex digits, "+dirty" when the tree was modified
	GoVersion string // e.g. go1.26.8
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: Version, Revision: cmp.Or(Revision, "unknown"), GoVersion: "unknown"}
	}
	in := of(bi, Version)
	if Revision != "" {
		in.Revision = Revision[:min(12, len(Revision))]
	}
	return in
}

func of(bi *debug.BuildInfo, version string) Info {
	in := Info{Version: version, Revision: "unknown", GoVersion: bi.GoVersion}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && in.Revision != "unknown" {
		in.Revision += "+dirty"
	}
	return in
}

// String is the line --version prints after the program's name:
// "0.1.0, revision 0123456789ab, go1.26.8".
func (in Info) String() string {
	rev := "revision " + in.Revision
	if in.Revision == "unknown" {
		rev = "revision unknown (built without VCS information)"
	}
	return in.Version + ", " + rev + ", " + in.GoVersion
}
