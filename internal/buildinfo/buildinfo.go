// Package buildinfo describes the running binary from what the Go
// toolchain recorded in it: the module version, the VCS revision and the
// Go version. ledgerd's --version and its ledgerd_build_info metric read it.
package buildinfo

import (
	"runtime/debug"
)

// Info is what the build recorded. Fields the build did not record are
// "unknown" (Version is "(devel)" for a build from a work tree).
type Info struct {
	Version   string // module version, e.g. v1.2.3 or (devel)
	Revision  string // VCS revision, 12 hex digits, "+dirty" when the tree was modified
	GoVersion string // e.g. go1.26.8
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "unknown", Revision: "unknown", GoVersion: "unknown"}
	}
	return of(bi)
}

func of(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, Revision: "unknown", GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(devel)"
	}
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

// String is the one line --version prints: "ledgerd v1.2.3, revision
// 0123456789ab, go1.26.8" without the program name.
func (in Info) String() string {
	rev := "revision " + in.Revision
	if in.Revision == "unknown" {
		rev = "revision unknown (built without VCS information)"
	}
	return in.Version + ", " + rev + ", " + in.GoVersion
}
