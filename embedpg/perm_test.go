//go:build unix

package embedpg

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/syncbuf"
)

// mkdirMode makes the directory path with exactly mode (not subject to
// the umask).
func mkdirMode(t *testing.T, path string, mode fs.FileMode) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// permOf is path's permission bits, with setgid and sticky.
func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
}

// TestEnsureTraversable: for a user that owns nothing and is in none of
// the tree's groups, each directory on the way gets other-execute and
// nothing else, with a warning naming each one changed; a directory its
// owner or group class cannot search is an error, and changes nothing.
func TestEnsureTraversable(t *testing.T) {
	t.Parallel()

	// A user that owns nothing and is in none of the tree's groups.
	stranger := &osUser{name: "stranger", uid: 4242424, gid: 4242424, groups: []uint32{4242424}}

	t.Run("AddsOnlyOtherExecute", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		a := mkdirMode(t, filepath.Join(root, "a"), 0o700)
		b := mkdirMode(t, filepath.Join(a, "b"), 0o750|fs.ModeSetgid)
		c := mkdirMode(t, filepath.Join(b, "c"), 0o755)
		d := mkdirMode(t, filepath.Join(c, "d"), 0o711)
		logs := &syncbuf.Buffer{}

		if err := ensureTraversable(d, stranger, slog.New(slog.NewTextHandler(logs, nil))); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]fs.FileMode{
			a: 0o701,
			b: 0o751 | fs.ModeSetgid,
			c: 0o755,
			d: 0o711,
		} {
			if got := permOf(t, path); got != want {
				t.Errorf("mode of %s = %v, want %v", path, got, want)
			}
		}
		out := logs.String()
		for _, changed := range []string{a, b} {
			if !strings.Contains(out, "dir="+changed+" ") {
				t.Errorf("no warning naming %s in:\n%s", changed, out)
			}
		}
		for _, unchanged := range []string{c, d} {
			if strings.Contains(out, "dir="+unchanged+" ") {
				t.Errorf("warning names unchanged %s:\n%s", unchanged, out)
			}
		}
		if n := strings.Count(out, "level=WARN"); n < 2 {
			t.Errorf("%d warnings, want one per changed directory:\n%s", n, out)
		}
	})

	t.Run("OwnerClassWithoutSearchIsError", func(t *testing.T) {
		t.Parallel()
		dir := mkdirMode(t, filepath.Join(t.TempDir(), "x"), 0o604)
		owner := &osUser{name: "owner", uid: uint32(os.Getuid()), gid: 4242424}
		if err := ensureTraversable(dir, owner, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err = %v, want an error naming %s", err, dir)
		}
		if got := permOf(t, dir); got != 0o604 {
			t.Errorf("mode changed to %v", got)
		}
	})

	t.Run("GroupClassWithoutSearchIsError", func(t *testing.T) {
		t.Parallel()
		dir := mkdirMode(t, filepath.Join(t.TempDir(), "x"), 0o705)
		member := &osUser{name: "member", uid: 4242424, gid: 4242424, groups: []uint32{uint32(os.Getgid())}}
		if err := ensureTraversable(dir, member, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err = %v, want an error naming %s", err, dir)
		}
		if got := permOf(t, dir); got != 0o705 {
			t.Errorf("mode changed to %v", got)
		}
	})
}
