//go:build unix

package embedpg

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/provider-ledger/adapter/internal/datadir"
)

func (s *Instance) logPath() string      { return filepath.Join(s.dataDir, "postgres.log") }
func (s *Instance) passwordPath() string { return filepath.Join(s.dataDir, "pg-password") }
func (s *Instance) passfilePath() string { return filepath.Join(s.dataDir, "pgpass") }

func (s *Instance) unlock() {
	if s.lock != nil {
		s.lock.Close() // releases the flock
		s.lock = nil
	}
}

func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "embedpg.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedpg: opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s is locked)", errInUse, path)
		}
		return nil, fmt.Errorf("embedpg: locking %s: %w", path, err)
	}
	return f, nil
}

// prepareCluster returns the superuser password of the cluster in s.pgDir,
// creating the cluster when there is none.
func (s *Instance) prepareCluster(ctx context.Context, binDir string, su *osUser, logf *os.File) (string, error) {
	_, err := os.Stat(filepath.Join(s.pgDir, "PG_VERSION"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Lstat(s.pgDir); err == nil {
			// Never ours: initdb runs in pg.init and is renamed when complete.
			return "", fmt.Errorf("embedpg: %s exists but is not a PostgreSQL cluster (no PG_VERSION); move it away", s.pgDir)
		}
		return s.initCluster(ctx, binDir, su, logf)
	case err != nil:
		return "", fmt.Errorf("embedpg: inspecting cluster: %w", err)
	}
	b, err := os.ReadFile(s.passwordPath())
	password := strings.TrimSpace(string(b))
	if err == nil && password == "" {
		err = errors.New("file is empty")
	}
	if err != nil {
		return "", fmt.Errorf("embedpg: cluster %s exists but its password file %s is unusable (%w); "+
			"restore the file, or remove %s to start over with an empty database", s.pgDir, s.passwordPath(), err, s.pgDir)
	}
	if su != nil {
		if owned, err := ownedBy(s.pgDir, su); err != nil {
			return "", err
		} else if !owned {
			s.log.Warn("embedpg: giving the cluster to the postgres OS user", "dir", s.pgDir, "user", su.name)
			if err := chownTree(s.pgDir, su); err != nil {
				return "", fmt.Errorf("embedpg: chown %s: %w", s.pgDir, err)
			}
		}
	}
	return password, nil
}

func (s *Instance) initCluster(ctx context.Context, binDir string, su *osUser, logf *os.File) (string, error) {
	tmp := s.pgDir + ".init"
	if err := os.RemoveAll(tmp); err != nil { // an initdb that did not finish
		return "", fmt.Errorf("embedpg: removing unfinished cluster: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("embedpg: creating cluster directory: %w", err)
	}
	password := rand.Text()
	// The password file is written before the cluster exists, so a complete
	// cluster always has one; a crash before the rename below redoes both.
	if err := datadir.WriteFileAtomic(s.passwordPath(), []byte(password+"\n")); err != nil {
		return "", fmt.Errorf("embedpg: writing password file: %w", err)
	}
	// initdb reads the password from a file, which the postgres user must be
	// able to open; it is removed as soon as initdb is done.
	pwFile := filepath.Join(s.dataDir, "pg.init-pwfile")
	_ = os.Remove(pwFile)
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("embedpg: writing initdb password file: %w", err)
	}
	defer os.Remove(pwFile)
	if su != nil {
		for _, p := range []string{tmp, pwFile} {
			if err := os.Chown(p, int(su.uid), int(su.gid)); err != nil {
				return "", fmt.Errorf("embedpg: chown %s: %w", p, err)
			}
		}
	}

	off := logSize(logf)
	fmt.Fprintf(logf, "---- embedpg %s: initdb %s\n", time.Now().Format(time.RFC3339), tmp)
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"),
		"-D", tmp,
		"-U", superuser,
		"-E", "UTF8", "--locale=C",
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256",
		"--pwfile="+pwFile,
	)
	cmd.Dir = tmp
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(su, syscall.SIGKILL)
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(tmp) // redone by the next start anyway
		if ctx.Err() != nil {
			_ = os.Remove(s.passwordPath()) // the cluster's, and there is none
			return "", fmt.Errorf("embedpg: interrupted while creating the cluster (initdb); removed the unfinished cluster: %w", ctx.Err())
		}
		return "", fmt.Errorf("embedpg: initdb failed: %w; last lines of %s:\n%s", err, s.logPath(), logTail(s.logPath(), off))
	}
	if err := os.Rename(tmp, s.pgDir); err != nil {
		return "", fmt.Errorf("embedpg: installing cluster: %w", err)
	}
	if err := datadir.SyncDir(s.dataDir); err != nil {
		return "", fmt.Errorf("embedpg: %w", err)
	}
	s.log.Info("embedpg: created cluster", "dir", s.pgDir, "password_file", s.passwordPath())
	return password, nil
}

func logSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logTail returns the last lines written to path at or after offset from.
func logTail(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	from = max(from, fi.Size()-logTailBytes)
	b, _ := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// makeDataDir creates dir and its missing parents, 0700; when the server
// runs as another OS user (su, we are root) 0701, so that it can reach its
// cluster inside: directories made for it need no warning, which
// ensureTraversable gives for a directory it had to change. It returns the
// topmost directory it created ("" when dir existed), which an
// interrupted first start removes again.
func makeDataDir(dir string, su *osUser, log *slog.Logger) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("embedpg: resolving data directory: %w", err)
	}
	var missing []string
	for d := abs; !exists(d); d = filepath.Dir(d) {
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("embedpg: creating data directory: %w", err)
	}
	if len(missing) == 0 {
		return "", nil
	}
	if su != nil {
		for _, d := range missing {
			if err := os.Chmod(d, 0o701); err != nil {
				return "", fmt.Errorf("embedpg: creating data directory: %w", err)
			}
		}
		log.Debug("embedpg: created the data directory searchable by the postgres user (0701)", "dir", abs, "user", su.name)
	}
	return missing[len(missing)-1], nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
