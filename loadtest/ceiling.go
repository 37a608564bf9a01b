package loadtest

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The ceiling (docs/benchmarks.md): what the same Postgres server does, in
// the same run, for the naive SQL of one authorize and one capture issued
// statement by statement from pgbench. The scripts are the project's
// reference scripts, embedded so that the measure needs only pgbench and
// psql on the machine.
//
//go:embed pgbench/*.sql
var pgbenchScripts embed.FS

// ceilingReport is the pgbench side of the measure at one client count.
type ceilingReport struct {
	Clients       int     `json:"clients"`
	Seconds       float64 `json:"seconds"`
	AuthorizeTPS  float64 `json:"authorizeTps"`
	CaptureTPS    float64 `json:"captureTps"`
	AuthorizeLat  latency `json:"authorizeLatencyMs"`
	CaptureLat    latency `json:"captureLatencyMs"`
	CyclesPerSec  float64 `json:"cyclesPerSec"`
	PostgresMicro float64 `json:"postgresMicrosPerTx,omitempty"`
}

// ceiling runs the reference scripts with pgbench against the scratch
// database at dbURL (created when missing) at clients for d each, and
// returns the ceiling: 1 / (1/tps_authorize + 1/tps_capture) cycles/s.
func ceiling(ctx context.Context, dbURL string, clients int, d time.Duration, logf func(string, ...any)) (ceilingReport, error) {
	rep := ceilingReport{Clients: clients, Seconds: d.Seconds()}
	dir, err := os.MkdirTemp("", "loadtest-ceiling-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"setup.sql", "authorize.sql", "capture.sql"} {
		b, err := pgbenchScripts.ReadFile("pgbench/" + name)
		if err != nil {
			return rep, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return rep, err
		}
	}
	if err := ensureDatabase(ctx, dbURL); err != nil {
		return rep, err
	}
	if err := refuseLedgerDatabase(ctx, dbURL); err != nil {
		return rep, err
	}
	// Enough fresh holds for the capture run at a generous rate.
	nholds := int(12000*d.Seconds()) + 10000
	logf("ceiling: setting up %d accounts and %d holds in the scratch database", 1000, nholds)
	setup := exec.CommandContext(ctx, "psql", "-q", "-X", "-v", "naccounts=1000", "-v", fmt.Sprintf("nholds=%d", nholds),
		"-v", "hold_acct_max=1000", "-f", filepath.Join(dir, "setup.sql"), dbURL)
	if out, err := setup.CombinedOutput(); err != nil {
		return rep, fmt.Errorf("psql setup.sql: %v: %s", err, strings.TrimSpace(string(out)))
	}
	for _, script := range []string{"authorize.sql", "capture.sql"} {
		logf("ceiling: pgbench %s, %d clients, %s", script, clients, d)
		var cpu procCPU
		cpu.start()
		tps, lat, n, err := pgbench(ctx, dir, dbURL, script, clients, d)
		pgMicros := cpu.stop()
		if err != nil {
			return rep, err
		}
		if script == "authorize.sql" {
			rep.AuthorizeTPS, rep.AuthorizeLat = round(tps), lat
			if n > 0 {
				rep.PostgresMicro = round(pgMicros / float64(n))
			}
		} else {
			rep.CaptureTPS, rep.CaptureLat = round(tps), lat
		}
	}
	if rep.AuthorizeTPS > 0 && rep.CaptureTPS > 0 {
		rep.CyclesPerSec = round(1 / (1/rep.AuthorizeTPS + 1/rep.CaptureTPS))
	}
	return rep, nil
}

// ledgerTables are tables only the adapter's schema has: the migrations'
// bookkeeping and tables setup.sql never creates. Any one of them marks a
// ledger database (the bookkeeping is absent from one restored from the
// snapshot, hence the others).
var ledgerTables = []string{"schema_version", "schema_functions", "journal", "callback_authorize", "audit_log"}

// refuseLedgerDatabase returns an error when the database at dbURL holds
// the adapter's schema: setup.sql drops tables named like the ledger's own
// (accounts, holds).
func refuseLedgerDatabase(ctx context.Context, dbURL string) error {
	checks := make([]string, len(ledgerTables))
	for i, name := range ledgerTables {
		checks[i] = "to_regclass('" + name + "') IS NOT NULL"
	}
	out, err := exec.CommandContext(ctx, "psql", "-X", "-A", "-t", "-c", "SELECT "+strings.Join(checks, " OR "), dbURL).CombinedOutput()
	if err != nil {
		return fmt.Errorf("--ceiling-db: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if strings.TrimSpace(string(out)) != "f" {
		return errors.New("--ceiling-db holds the adapter's schema: give a scratch database (its tables are dropped)")
	}
	return nil
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs one script closed loop as the reference measure says and
// returns its tps, latency percentiles (from its per-transaction log) and
// the number of transactions.
func pgbench(ctx context.Context, dir, dbURL, script string, clients int, d time.Duration) (float64, latency, int, error) {
	logDir := filepath.Join(dir, strings.TrimSuffix(script, ".sql"))
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return 0, latency{}, 0, err
	}
	threads := min(clients, runtime.NumCPU())
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(threads),
		"-T", strconv.Itoa(int(d.Seconds())), "-D", "amin=1", "-D", "amax=1000", "-f", filepath.Join(dir, script),
		"--log", "--log-prefix", filepath.Join(logDir, "tx"), dbURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, latency{}, 0, fmt.Errorf("pgbench %s: %v: %s", script, err, strings.TrimSpace(string(out)))
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, latency{}, 0, fmt.Errorf("pgbench %s: no tps in its output: %s", script, strings.TrimSpace(string(out)))
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	lat, n, err := pgbenchLatency(logDir)
	return tps, lat, n, err
}

// pgbenchLatency reads pgbench's per-transaction logs (the third field is
// the latency in microseconds).
func pgbenchLatency(dir string) (latency, int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "tx*"))
	if err != nil || len(files) == 0 {
		return latency{}, 0, errors.New("pgbench wrote no transaction log")
	}
	h := newHist()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return latency{}, 0, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			if us, err := strconv.ParseInt(fields[2], 10, 64); err == nil {
				_ = h.RecordValue(max(us, 1))
			}
		}
		fh.Close()
	}
	return latencyOf(h), int(h.TotalCount()), nil
}

// ensureDatabase creates the database of dbURL when it does not exist,
// through psql connected to the server's postgres database.
func ensureDatabase(ctx context.Context, dbURL string) error {
	if exec.CommandContext(ctx, "psql", "-X", "-q", "-c", "SELECT 1", dbURL).Run() == nil {
		return nil
	}
	name, admin, err := splitDatabase(dbURL)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "psql", "-X", "-q", "-c", "CREATE DATABASE "+quoteIdent(name), admin).CombinedOutput()
	if err != nil {
		return fmt.Errorf("creating the ceiling database %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// quoteIdent quotes an SQL identifier as pgx.Identifier.Sanitize does:
// double quotes doubled, NUL bytes dropped (loadtest stays off the driver).
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(name, `"`, `""`), "\x00", "") + `"`
}

var dbNamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// splitDatabase returns the database name of a postgres:// URL and the
// same URL naming the postgres database instead.
func splitDatabase(dbURL string) (name, admin string, err error) {
	rest, query, _ := strings.Cut(dbURL, "?")
	i := strings.LastIndex(rest, "/")
	if i < 0 || !strings.Contains(rest[:i], "://") {
		return "", "", fmt.Errorf("--ceiling-db %q names no database", dbURL)
	}
	name = rest[i+1:]
	if !dbNamePattern.MatchString(name) || slices.Contains([]string{"postgres", "template0", "template1"}, name) {
		return "", "", fmt.Errorf("--ceiling-db must name a scratch database (lowercase letters, digits, _), not %q", name)
	}
	admin = rest[:i] + "/postgres"
	if query != "" {
		admin += "?" + query
	}
	return name, admin, nil
}
