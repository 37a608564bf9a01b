package buildinfo

import (
	"runtime/debug"
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
		{"Release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{"v1.2.3", "0123456789ab", "go1.26.8"}, "v1.2.3, revision 0123456789ab, go1.26.8"},
		{"DirtyWorkTree", debug.BuildInfo{GoVersion: "go1.26.8",
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			Info{"(devel)", "abc+dirty", "go1.26.8"}, "(devel), revision abc+dirty, go1.26.8"},
		{"NoVCS", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{"(devel)", "unknown", "go1.26.8"}, "(devel), revision unknown (built without VCS information), go1.26.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := of(&c.bi)
			if got != c.want {
				t.Fatalf("of = %+v, want %+v", got, c.want)
			}
			if got.String() != c.line {
				t.Fatalf("String = %q, want %q", got.String(), c.line)
			}
		})
	}
	if in := Read(); in.GoVersion == "" || in.Version == "" {
		t.Fatalf("Read of the test binary = %+v", in)
	}
}
