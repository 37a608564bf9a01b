//go:build unix

package embedpg

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// CrashRestart takes the running cluster of dataDir (ledgerd's
// LEDGER_DATA_DIR, whichever process started it) down at once, as a crash
// would (pg_ctl stop -m immediate: no checkpoint, so the start recovers
// from the WAL), and starts it again on the same port with the settings
// Start gives it, detached from the caller (pg_ctl start; its output in
// DataDir/pg/restart.log), so that the pool of the ledgerd using it finds
// it where it was. The load tester's chaos uses it; StopCluster stops what
// it leaves running.
func CrashRestart(ctx context.Context, dataDir string) error {
	running, err := RunningURL(dataDir, false)
	if err != nil {
		return err
	}
	u, err := url.Parse(running)
	if err != nil {
		return fmt.Errorf("embedpg: the running cluster's URL: %w", err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("embedpg: the running cluster's port: %w", err)
	}
	pgDir, err := clusterDir(dataDir)
	if err != nil {
		return err
	}
	if err := pgctl(ctx, pgDir, "stop", "-m", "immediate", "-w", "-t", "30"); err != nil {
		return err
	}
	return pgctl(ctx, pgDir, "start", "-w", "-t", "60", "-l", filepath.Join(pgDir, "restart.log"),
		"-o", strings.Join(serverSettings(port), " "))
}

// StopCluster stops the running cluster of dataDir with a fast shutdown
// (pg_ctl stop -m fast), waiting for it up to 30 s: for a cluster that
// CrashRestart started, which no Instance tracks. A cluster that is not
// running is not an error.
func StopCluster(ctx context.Context, dataDir string) error {
	if _, err := RunningURL(dataDir, false); err != nil {
		return nil
	}
	pgDir, err := clusterDir(dataDir)
	if err != nil {
		return err
	}
	return pgctl(ctx, pgDir, "stop", "-m", "fast", "-w", "-t", "30")
}

// clusterDir is the cluster directory of dataDir, absolute, symlinks
// resolved.
func clusterDir(dataDir string) (string, error) {
	dir, err := filepath.Abs(dataDir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return "", fmt.Errorf("embedpg: data directory %s: %w", dataDir, err)
	}
	return filepath.Join(dir, "pg"), nil
}

// pgctl runs pg_ctl verb on the cluster in pgDir as Start runs the
// server's programs (Command).
func pgctl(ctx context.Context, pgDir, verb string, args ...string) error {
	cmd, err := Command(ctx, "pg_ctl", append([]string{verb, "-D", pgDir}, args...)...)
	if err != nil {
		return err
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C")
	cmd.Dir = pgDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("embedpg: pg_ctl %s: %v: %s", verb, err, strings.TrimSpace(string(out)))
	}
	return nil
}
