package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCtrlCDuringTheFirstStart: SIGINT while initdb creates the embedded
// cluster is a clean exit that says "interrupted", logs no error, and leaves
// no half-made data directory. The machine's initdb is too quick to be
// caught in the act: a slow one comes first in PATH.
func TestCtrlCDuringTheFirstStart(t *testing.T) {
	t.Parallel()
	scratch, err := os.MkdirTemp("", "ledgerd-interrupt-") // searchable by the postgres OS user when root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	if err := os.Chmod(scratch, 0o711); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(scratch, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"initdb":   "#!/bin/sh\ntouch started\nexec sleep 60\n", // it runs in the cluster directory
		"postgres": "#!/bin/sh\nexit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(scratch, "var")
	dataDir := filepath.Join(top, "ledgerd")
	p := startProc(t, "DATABASE_URL=", "LEDGER_DATA_DIR="+dataDir, "LEDGER_LISTEN="+freeAddr(t), "LEDGER_ADMIN_LISTEN="+freeAddr(t),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dataDir, "pg.init", "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("initdb did not start within 90s; log:\n%s", p.log())
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after Ctrl-C", code)
	}
	log := p.log()
	if !strings.Contains(log, "interrupted") || strings.Contains(log, `"level":"ERROR"`) || strings.Contains(log, "signal: killed") {
		t.Fatalf("the log does not just say interrupted:\n%s", log)
	}
	if _, err := os.Lstat(top); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the half-made data directory is still there (%v)", err)
	}
}
