package datadir

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomicReplacesPrivately(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pgpass")
	for _, content := range []string{"first\n", "second\n"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("content = %q, want %q", got, content)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("mode = %#o, want 0600", perm)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only pgpass (no temporary file left)", len(entries))
	}
}

func TestWriteFileAtomicMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "f")
	if err := WriteFileAtomic(path, []byte("x")); err == nil {
		t.Fatal("WriteFileAtomic into a missing directory succeeded")
	}
}

func TestSyncDirMissing(t *testing.T) {
	if err := SyncDir(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

func TestFreePortIsBindable(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port = %d", port)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("binding the returned port: %v", err)
	}
	l.Close()
}
