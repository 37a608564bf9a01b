//go:build unix

package embedpg

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestEnsureTraversable(t *testing.T) {
	t.Parallel()

	// A user that owns nothing and is in none of the tree's groups.
	stranger := &osUser{name: "stranger", uid: 4242424, gid: 4242424, groups: []uint32{4242424}}

	mkdir := func(t *testing.T, path string, mode fs.FileMode) string {
		t.Helper()
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // not subject to umask
			t.Fatal(err)
		}
		return path
	}
	modeOf := func(t *testing.T, path string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
	}

	t.Run("AddsOnlyOtherExecute", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		a := mkdir(t, filepath.Join(root, "a"), 0o700)
		b := mkdir(t, filepath.Join(a, "b"), 0o750|fs.ModeSetgid)
		c := mkdir(t, filepath.Join(b, "c"), 0o755)
		d := mkdir(t, filepath.Join(c, "d"), 0o711)
		logs := &lockedBuffer{}

		if err := ensureTraversable(d, stranger, slog.New(slog.NewTextHandler(logs, nil))); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]fs.FileMode{
			a: 0o701,
			b: 0o751 | fs.ModeSetgid,
			c: 0o755,
			d: 0o711,
		} {
			if got := modeOf(t, path); got != want {
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
		dir := mkdir(t, filepath.Join(t.TempDir(), "x"), 0o604)
		owner := &osUser{name: "owner", uid: uint32(os.Getuid()), gid: 4242424}
		if err := ensureTraversable(dir, owner, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err = %v, want an error naming %s", err, dir)
		}
		if got := modeOf(t, dir); got != 0o604 {
			t.Errorf("mode changed to %v", got)
		}
	})

	t.Run("GroupClassWithoutSearchIsError", func(t *testing.T) {
		t.Parallel()
		dir := mkdir(t, filepath.Join(t.TempDir(), "x"), 0o705)
		member := &osUser{name: "member", uid: 4242424, gid: 4242424, groups: []uint32{uint32(os.Getgid())}}
		if err := ensureTraversable(dir, member, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("err = %v, want an error naming %s", err, dir)
		}
		if got := modeOf(t, dir); got != 0o705 {
			t.Errorf("mode changed to %v", got)
		}
	})
}
