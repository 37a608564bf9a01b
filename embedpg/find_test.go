package embedpg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeBin creates dir with a shell script for each name (mode 0755).
func makeBin(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// findTree is a temporary tree for the finder: root, and other, a
// complete bin directory outside any search location.
type findTree struct {
	root  string
	other string
}

func newFindTree(t *testing.T) *findTree {
	t.Helper()
	root := t.TempDir()
	return &findTree{root: root, other: makeBin(t, filepath.Join(root, "other"), "initdb", "postgres")}
}

// TestFindBinaries: a directory given explicitly is used, and only it:
// without both binaries it is errNoBinaries, never a fallback elsewhere.
func TestFindBinaries(t *testing.T) {
	t.Parallel()
	t.Run("OverrideHonoured", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		inPath := makeBin(t, filepath.Join(b.root, "path"), "initdb", "postgres")
		got, err := finder{path: inPath}.find(b.other)
		if err != nil || got != b.other {
			t.Fatalf("find(%q) = %q, %v; want the override", b.other, got, err)
		}
	})

	t.Run("OverrideWithoutBinariesIsErrNoBinaries", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		empty := t.TempDir()
		// Binaries elsewhere must not be used instead of a wrong override.
		got, err := finder{path: b.other}.find(empty)
		if !errors.Is(err, errNoBinaries) {
			t.Fatalf("find(empty override) = %q, %v; want errNoBinaries", got, err)
		}
	})
}

// TestFindBinariesNone: with no directory holding both binaries, executable,
// the error says how to install them or to use DATABASE_URL.
func TestFindBinariesNone(t *testing.T) {
	t.Parallel()
	t.Run("NothingFoundIsErrNoBinaries", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		onlyInitdb := makeBin(t, filepath.Join(b.root, "half"), "initdb")
		got, err := finder{path: "" + string(os.PathListSeparator) + onlyInitdb, globs: []string{filepath.Join(b.root, "none", "*", "bin")}}.find("")
		if !errors.Is(err, errNoBinaries) {
			t.Fatalf("find = %q, %v; want errNoBinaries", got, err)
		}
		for _, hint := range []string{"apt-get install postgresql", "DATABASE_URL"} {
			if !strings.Contains(err.Error(), hint) {
				t.Errorf("error %q does not mention %q", err, hint)
			}
		}
	})

	t.Run("NonExecutableIgnored", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		dir := makeBin(t, filepath.Join(b.root, "noexec"), "initdb", "postgres")
		if err := os.Chmod(filepath.Join(dir, "postgres"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := (finder{path: dir}).find(""); !errors.Is(err, errNoBinaries) {
			t.Fatalf("find = %q, %v; want errNoBinaries", got, err)
		}
	})
}

// TestFindBinariesSearchOrder: PATH comes first (symlinks resolved), then
// pg_config --bindir, then the distributions' directories, highest major
// version first.
func TestFindBinariesSearchOrder(t *testing.T) {
	t.Parallel()
	t.Run("PATHBeforePgConfigAndGlobs", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		half := makeBin(t, filepath.Join(b.root, "half"), "initdb")
		full := makeBin(t, filepath.Join(b.root, "full"), "initdb", "postgres")
		makeBin(t, filepath.Join(b.root, "lib", "postgresql", "17", "bin"), "initdb", "postgres")
		f := finder{
			path:  strings.Join([]string{half, full}, string(os.PathListSeparator)),
			globs: []string{filepath.Join(b.root, "lib", "postgresql", "*", "bin")},
		}
		if got, err := f.find(""); err != nil || got != full {
			t.Fatalf("find = %q, %v; want %q", got, err, full)
		}
	})

	t.Run("PATHSymlinksResolved", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		links := filepath.Join(b.root, "links")
		if err := os.MkdirAll(links, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"initdb", "postgres"} {
			if err := os.Symlink(filepath.Join(b.other, n), filepath.Join(links, n)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := (finder{path: links}).find(""); err != nil || got != b.other {
			t.Fatalf("find = %q, %v; want the symlinks' target %q", got, err, b.other)
		}
	})

	t.Run("PgConfigBinDir", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		tools := filepath.Join(b.root, "tools")
		if err := os.MkdirAll(tools, 0o755); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\n[ \"$1\" = --bindir ] && echo '" + b.other + "'\n"
		if err := os.WriteFile(filepath.Join(tools, "pg_config"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		makeBin(t, filepath.Join(b.root, "lib", "postgresql", "17", "bin"), "initdb", "postgres")
		f := finder{path: tools, globs: []string{filepath.Join(b.root, "lib", "postgresql", "*", "bin")}}
		if got, err := f.find(""); err != nil || got != b.other {
			t.Fatalf("find = %q, %v; want pg_config's %q", got, err, b.other)
		}
	})

	t.Run("HighestMajorVersionFirst", func(t *testing.T) {
		t.Parallel()
		b := newFindTree(t)
		lib := filepath.Join(b.root, "lib", "postgresql")
		for _, v := range []string{"9.6", "10", "13", "9"} {
			makeBin(t, filepath.Join(lib, v, "bin"), "initdb", "postgres")
		}
		makeBin(t, filepath.Join(lib, "16", "bin"), "initdb") // incomplete: skipped
		f := finder{globs: []string{filepath.Join(lib, "*", "bin")}}
		want := filepath.Join(lib, "13", "bin")
		if got, err := f.find(""); err != nil || got != want {
			t.Fatalf("find = %q, %v; want %q", got, err, want)
		}
	})
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		sign int
	}{
		{"9.6", "10", -1},
		{"15", "9.6", 1},
		{"15", "15", 0},
		{"9", "9.6", -1},
		{"16", "15.4", 1},
	} {
		got := compareVersions(tc.a, tc.b)
		if (got > 0) != (tc.sign > 0) || (got < 0) != (tc.sign < 0) {
			t.Errorf("compareVersions(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.sign)
		}
	}
}
