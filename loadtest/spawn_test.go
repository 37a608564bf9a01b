package loadtest_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
	"github.com/provider-ledger/adapter/store/storetest"
)

func runLong(t *testing.T, args []string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errb syncbuf.Buffer
	code := loadtest.RunWith(ctx, args, &out, &errb, loadtest.Hooks{})
	return code, out.String(), errb.String()
}

// postgresOf lists the live processes whose command line names dir.
func postgresOf(dir string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), dir) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// TestSpawnChaos: spawn builds ledgerd from this checkout, starts it on its
// own embedded cluster, and storms it while killing it three times and
// restarting Postgres once; every check holds, the report shows the four
// outages, its HTML draws every chart in a browser, and nothing is left
// running or on disk but the log.
func TestSpawnChaos(t *testing.T) {
	tooltest.SkipShort(t, "builds ledgerd and storms it on a Postgres of its own under chaos")
	t.Parallel()
	work := filepath.Join(t.TempDir(), "work")
	report := filepath.Join(work, "..", "report.json")
	html := filepath.Join(work, "..", "report.html")
	code, out, errs := runLong(t, []string{"spawn", "--database-url=", "--work-dir", work, "--chaos", "--duration", "20s",
		"--accounts", "6", "--payouts", "300", "--credits", "60", "--duplicates", "0.1", "--concurrent-dupes", "0.05", "--drop", "0.05",
		"--sample-every", "500ms", "--report", report, "--html", html})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s\n%s", code, out, errs, tailOf(filepath.Join(work, "ledgerd.log")))
	}
	r := readReport(t, report)
	if !r.OK || len(r.Outages) != 4 {
		t.Fatalf("ok %v, outages %+v", r.OK, r.Outages)
	}
	kills, restarts := 0, 0
	for _, o := range r.Outages {
		if o.Error != "" || o.Ready < o.Start || o.End < o.Ready {
			t.Errorf("outage %+v", o)
		}
		switch {
		case strings.HasPrefix(o.What, "ledgerd SIGKILL"):
			kills++
		case strings.HasPrefix(o.What, "Postgres immediate stop"):
			restarts++
		}
	}
	if kills != 3 || restarts != 1 {
		t.Errorf("%d kills and %d Postgres restarts, want 3 and 1", kills, restarts)
	}
	if c := check(r, "chaos:"); c == nil || !c.OK || c.Checked != 4 {
		t.Errorf("chaos check %+v", c)
	}
	for _, name := range []string{"replays:", "requests:", "accounts:", "holds:", "reconciliation:"} {
		if c := check(r, name); c == nil || !c.OK || c.NotChecked != "" {
			t.Errorf("check %s: %+v", name, c)
		}
	}
	// The outages were felt: answers that the retry policy rode out.
	transport := 0
	for _, e := range r.Endpoints {
		transport += e.Transport
	}
	if transport == 0 {
		t.Error("no transport errors in a storm whose ledgerd was killed three times")
	}
	env := r.Environment
	if !strings.Contains(env.Postgres, "PostgreSQL") || !strings.Contains(env.Ledgerd, "go1") || env.Commit == "" || !strings.Contains(env.Database, "embedded") {
		t.Errorf("environment %+v", env)
	}
	if _, err := os.Stat(filepath.Join(work, "data")); !os.IsNotExist(err) {
		t.Errorf("the data directory is left: %v", err)
	}
	if left := postgresOf(work); len(left) > 0 {
		t.Errorf("processes of the spawn left running: %q", left)
	}
	// Throughput, latency, four latency-over-time charts (one per endpoint),
	// four histograms, statuses, outages and three resource charts.
	loadtest.AssertChartsDrew(t, loadtest.BrowserDOM(t, html), 15)
}

var scratchName = regexp.MustCompile(`scratch database (loadtest_[0-9a-f]+)`)

// TestSpawnDatabaseURL: with DATABASE_URL spawn creates a scratch database
// on that server and drops it at the end; --chaos kills only ledgerd there
// (--chaos-postgres=false: the server is not spawn's); --ceiling measures
// the bench cycles against pgbench on the same server.
func TestSpawnDatabaseURL(t *testing.T) {
	tooltest.SkipShort(t, "builds ledgerd, storms it under chaos and measures the pgbench ceiling")
	tooltest.Require(t, "pgbench") // --ceiling
	tooltest.Require(t, "psql")
	t.Parallel()
	server := os.Getenv("TEST_DATABASE_URL")
	if server == "" {
		server = storetest.DefaultURL
	}
	work := filepath.Join(t.TempDir(), "work")
	report := filepath.Join(work, "..", "report.json")
	code, out, errs := runLong(t, []string{"spawn", "--database-url", server, "--work-dir", work, "--chaos", "--chaos-postgres=false",
		"--duration", "15s", "--accounts", "5", "--payouts", "200", "--credits", "40", "--ceiling", "--ceiling-duration", "2s",
		"--ceiling-clients", "4", "--report", report})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s\n%s", code, out, errs, tailOf(filepath.Join(work, "ledgerd.log")))
	}
	r := readReport(t, report)
	if len(r.Outages) != 3 || !r.OK {
		t.Fatalf("ok %v, outages %+v", r.OK, r.Outages)
	}
	for _, o := range r.Outages {
		if !strings.HasPrefix(o.What, "ledgerd SIGKILL") || o.Error != "" {
			t.Errorf("outage %+v", o)
		}
	}
	if c := r.Ceiling; c == nil || c.CeilingErr != "" || c.Ceiling == nil || c.Ratio <= 0 || c.Adapter.Cycles == 0 {
		t.Errorf("ceiling %+v", c)
	}
	m := scratchName.FindStringSubmatch(r.Environment.Database)
	if m == nil {
		t.Fatalf("no scratch database named in %q", r.Environment.Database)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE $1 || '%'`, m[1]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d scratch databases named %s* left on the server", n, m[1])
	}
}

func tailOf(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(b), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
