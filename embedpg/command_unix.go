//go:build unix

package embedpg

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Command returns a command that runs the PostgreSQL program name (initdb,
// postgres, pg_basebackup, pg_ctl, …) from the server binaries
// ([FindBinaries]), or the program at name when it is an absolute path (a
// pooler, which refuses root too), the way Start runs its own: as the postgres OS user when
// the caller is root, in a process group of its own, killed (SIGKILL) when
// the thread that started it dies (Linux), with the PG* and locale
// variables removed from its environment. Test helpers use it for clusters
// of their own (a primary and its standby); the caller sets Dir, output and
// further environment.
func Command(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	su, err := serverUser()
	if err != nil {
		return nil, err
	}
	path := name
	if !filepath.IsAbs(name) {
		binDir, err := FindBinaries("")
		if err != nil {
			return nil, err
		}
		if path = filepath.Join(binDir, name); !isExecutable(path) {
			return nil, fmt.Errorf("embedpg: %s has no %s", binDir, name)
		}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = childEnv()
	cmd.SysProcAttr = sysProcAttr(su, syscall.SIGKILL)
	return cmd, nil
}

// MkdirServer creates dir (mode 0700, parents as needed) for a server's
// files: owned by the postgres OS user when the caller is root, which must
// then be able to reach it (see the package doc on running as root).
func MkdirServer(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	su, err := serverUser()
	if err != nil || su == nil {
		return err
	}
	if err := ensureTraversable(filepath.Dir(dir), su, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	return os.Chown(dir, int(su.uid), int(su.gid))
}
