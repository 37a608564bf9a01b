//go:build linux

package embedpg

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/syncbuf"
)

// slowInitdb is a directory of server binaries whose initdb marks that it
// runs (a file "started" in the cluster directory it is given) and then
// waits to be killed: a first start that is interrupted during initdb.
func slowInitdb(t *testing.T) string {
	t.Helper()
	// Under /tmp, readable by the postgres OS user that runs it when we are
	// root (t.TempDir's parent is 0700).
	dir, err := os.MkdirTemp("", "embedpg-slow-initdb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"initdb":   "#!/bin/sh\ntouch started\nexec sleep 60\n", // initdb runs in the cluster directory
		"postgres": "#!/bin/sh\nexit 1\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// interruptDuringInitdb starts cfg, cancels it once initdb runs, and
// returns Start's error.
func interruptDuringInitdb(t *testing.T, cfg Config) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		s, err := Start(ctx, cfg)
		if err == nil {
			_ = s.Stop(context.Background())
		}
		errc <- err
	}()
	marker := filepath.Join(cfg.DataDir, "pg.init", "started")
	for {
		select {
		case err := <-errc:
			t.Fatalf("Start ended before initdb ran: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if _, err := os.Stat(marker); err == nil {
			break
		}
	}
	cancel() // Ctrl-C
	return <-errc
}

// TestInterruptedFirstStart: Ctrl-C during the first initdb says
// "interrupted" and leaves no half-made cluster behind.
func TestInterruptedFirstStart(t *testing.T) {
	t.Parallel()
	bin := slowInitdb(t)

	t.Run("NewDataDirIsRemoved", func(t *testing.T) {
		t.Parallel()
		top := filepath.Join(t.TempDir(), "var")
		cfg := Config{DataDir: filepath.Join(top, "ledgerd"), BinDir: bin}
		err := interruptDuringInitdb(t, cfg)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted while creating the cluster") ||
			strings.Contains(err.Error(), "signal: killed") {
			t.Fatalf("Start: %v", err)
		}
		if _, err := os.Lstat(top); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the data directories Start created are still there (%v)", err)
		}
	})

	t.Run("ExistingDataDirIsEmptiedOfTheCluster", func(t *testing.T) {
		t.Parallel()
		cfg := Config{DataDir: filepath.Join(t.TempDir(), "ledgerd"), BinDir: bin}
		if err := os.Mkdir(cfg.DataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := interruptDuringInitdb(t, cfg); !errors.Is(err, context.Canceled) {
			t.Fatalf("Start: %v", err)
		}
		for _, name := range []string{"pg.init", "pg", "pg-password", "pg.init-pwfile"} {
			if _, err := os.Lstat(filepath.Join(cfg.DataDir, name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind (%v)", name, err)
			}
		}
	})

	t.Run("NoPermissionWarningForDirectoriesItCreates", func(t *testing.T) {
		t.Parallel()
		// A parent the postgres OS user can already search; everything
		// below it is made by Start.
		parent, err := os.MkdirTemp("", "embedpg-parent-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(parent) })
		if err := os.Chmod(parent, 0o711); err != nil {
			t.Fatal(err)
		}
		var logs syncbuf.Buffer
		cfg := Config{DataDir: filepath.Join(parent, "var", "ledgerd"), BinDir: bin,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))}
		if err := interruptDuringInitdb(t, cfg); !errors.Is(err, context.Canceled) {
			t.Fatalf("Start: %v", err)
		}
		if logs.String() != "" {
			t.Fatalf("warnings on a new data directory:\n%s", logs.String())
		}
	})
}
