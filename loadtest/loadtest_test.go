package loadtest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
	"github.com/provider-ledger/adapter/server/servertest"
	"github.com/provider-ledger/adapter/store/storetest"
)

const providerID = "bank-lt"

// ledgerd is an in-process ledgerd on a fresh database.
type ledgerd struct {
	callbacks, admin, dbURL string
}

func startLedgerd(t *testing.T, extra ...string) *ledgerd {
	t.Helper()
	// Tests check outcomes, not durability: no fsync wait at commit.
	dbURL := storetest.URL(t)
	if strings.Contains(dbURL, "?") {
		dbURL += "&synchronous_commit=off"
	} else {
		dbURL += "?synchronous_commit=off"
	}
	env := map[string]string{"DATABASE_URL": dbURL, "LEDGER_PROVIDER_ID": providerID, "LEDGER_RECONCILE_EVERY": "0"}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	cb, admin := servertest.Start(t, env)
	return &ledgerd{callbacks: "http://" + cb + "/ledger", admin: "http://" + admin, dbURL: dbURL}
}

func (l *ledgerd) args(cmd string, more ...string) []string {
	return append([]string{cmd, "--callbacks", l.callbacks, "--admin", l.admin, "--provider-id", providerID}, more...)
}

func run(t *testing.T, args []string, h loadtest.Hooks) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb syncbuf.Buffer
	code := loadtest.RunWith(ctx, args, &out, &errb, h)
	return code, out.String(), errb.String()
}

func readReport(t *testing.T, path string) loadtest.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r loadtest.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func endpoint(r loadtest.Report, name string) loadtest.EndpointReport {
	for _, e := range r.Endpoints {
		if e.Endpoint == name {
			return e
		}
	}
	return loadtest.EndpointReport{}
}

func check(r loadtest.Report, prefix string) *loadtest.Check {
	for i := range r.Checks {
		if strings.HasPrefix(r.Checks[i].Name, prefix) {
			return &r.Checks[i]
		}
	}
	return nil
}

var stormShape = loadtest.Shape{Seed: 7, ProviderID: providerID, Accounts: 4, Payouts: 40, Credits: 10, Duplicates: 0.3,
	ConcurrentDupes: 0.2, Drop: 0.2, CaptureRatio: 0.7, LeaveHeld: 0.15, SecondAttempts: 0.2}

func stormArgs(l *ledgerd, report string, more ...string) []string {
	return l.args("storm", append([]string{"--accounts", "4", "--payouts", "40", "--credits", "10", "--concurrency", "8", "--duplicates", "0.3",
		"--concurrent-dupes", "0.2", "--drop", "0.2", "--capture-ratio", "0.7", "--leave-held", "0.15", "--second-attempts", "0.2",
		"--seed", "7", "--report", report}, more...)...)
}

// metric sums the samples of a metric on the admin listener's /metrics.
func metric(t *testing.T, admin, name string) float64 {
	t.Helper()
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			sum += f
		}
	}
	return sum
}

// TestStorm: a small storm with every kind of repeated delivery against a
// real ledgerd passes every check, and the report counts what the plan sent.
func TestStorm(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "report.json")
	html := filepath.Join(t.TempDir(), "report.html")
	code, out, errs := run(t, stormArgs(l, report, "--html", html, "--progress", "100ms"), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	checkStormOutputs(t, l, r, out, errs, html)
	if !r.OK || r.FailureCount != 0 {
		t.Fatalf("report not ok: %s", out)
	}
	checkStormCounts(t, r)
	checkStormSecretRetired(t, l, r)

	// A second storm against the same ledgerd has its own prefix and passes
	// too.
	report2 := filepath.Join(t.TempDir(), "report2.json")
	code, out, errs = run(t, l.args("storm", "--accounts", "2", "--payouts", "10", "--credits", "4", "--concurrency", "4",
		"--seed", "7", "--report", report2), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("second storm: exit %d\n%s\n%s", code, out, errs)
	}
	r2 := readReport(t, report2)
	if r2.Prefix == r.Prefix {
		t.Errorf("two runs share the prefix %s", r.Prefix)
	}
}

// checkStormOutputs checks what a storm leaves besides its verdict: no
// undecryptable callback (the key probe asked the admin API), progress lines
// on stderr, an HTML report holding the run's data, series, histograms,
// resources and environment in the JSON report, and a table on stdout with
// the endpoints, the p99 column and PASS.
func checkStormOutputs(t *testing.T, l *ledgerd, r loadtest.Report, out, errs, html string) {
	t.Helper()
	// The key probe asked the admin API, never the callbacks.
	if n := metric(t, l.admin, "ledgerd_callback_undecryptable_total"); n != 0 {
		t.Errorf("%v undecryptable callbacks: the key probe reached the callbacks", n)
	}
	if !strings.Contains(errs, "answers/s") || !strings.Contains(errs, "p50/p90/p95/p99/p99.9/max ") {
		t.Errorf("no progress lines on stderr:\n%s", errs)
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte(r.Prefix)) || !bytes.Contains(b, []byte(`id="report-data"`)) {
		t.Errorf("HTML report: %v", err)
	}
	if len(r.Series.T) == 0 || len(r.Histograms) != 4 || r.Resources == nil || len(r.Resources.Samples) < 2 || r.Environment.Cores == 0 {
		t.Errorf("report lacks series, histograms, resources or environment: %d points, %d histograms, %+v", len(r.Series.T), len(r.Histograms), r.Resources)
	}
	for _, s := range []string{"authorize", "credit-account", "p99 ms", "PASS"} {
		if !strings.Contains(out, s) {
			t.Errorf("the table lacks %q:\n%s", s, out)
		}
	}
}

// checkStormCounts checks the report against the plan, deterministic for
// the seed: each endpoint's requests, sends, statuses and latencies, the
// replays and drops, the overall counts, the accounts, holds and replay
// checks, and a reconciliation that finds only the second credits' expected
// duplicate_credit_attempt.
func checkStormCounts(t *testing.T, r loadtest.Report) {
	t.Helper()
	// The plan is deterministic for the seed: count what it sends.
	plan := loadtest.Generate(stormShape)
	want := map[string]int{}
	var dup, conc, drop int
	for _, q := range plan.Requests {
		want[q.Endpoint]++
		if q.Delivery.Duplicate {
			dup++
		}
		if q.Delivery.Concurrent {
			conc++
		}
		if q.Delivery.Drop {
			drop++
		}
	}
	var replays, dropped, sent, requests int
	for _, ep := range []string{"authorize", "capture", "release", "credit-account"} {
		e := endpoint(r, ep)
		if e.Requests != want[ep] {
			t.Errorf("%s: %d requests, the plan has %d", ep, e.Requests, want[ep])
		}
		if e.OK < e.Requests || e.Sent < e.OK {
			t.Errorf("%s: sent %d ok %d for %d requests", ep, e.Sent, e.OK, e.Requests)
		}
		if e.Statuses["200"] != e.OK || e.LatencyMs.P50 <= 0 || e.LatencyMs.Max < e.LatencyMs.P99 || e.RatePerSec <= 0 {
			t.Errorf("%s: %+v", ep, e)
		}
		replays += e.Replays
		dropped += e.Dropped
		sent += e.Sent
		requests += e.Requests
	}
	if want[`authorize`] <= 40 || want[`credit-account`] <= 10 {
		t.Fatalf("the plan has no second attempts: %v", want)
	}
	if replays != dup+conc || dropped != drop || dup == 0 || conc == 0 || drop == 0 {
		t.Errorf("replays %d dropped %d; plan: %d duplicates, %d concurrent, %d drops", replays, dropped, dup, conc, drop)
	}
	if r.Overall.Requests != requests || r.Overall.Sent != sent || r.Overall.ThroughputOK <= 0 {
		t.Errorf("overall %+v", r.Overall)
	}
	if c := check(r, "accounts:"); c == nil || !c.OK || c.Checked != 4 {
		t.Errorf("accounts check %+v", c)
	}
	if c := check(r, "holds:"); c == nil || !c.OK || c.Checked != 40 {
		t.Errorf("holds check %+v", c)
	}
	if c := check(r, "replays:"); c == nil || !c.OK || c.Checked < dup {
		t.Errorf("replay check %+v (want at least %d keys answered twice)", c, dup)
	}
	// Every second credit is an expected duplicate_credit_attempt, and
	// nothing else about the run is found.
	secondCredits := 0
	for _, q := range plan.Requests {
		if q.Endpoint == "credit-account" && q.SecondOf != 0 {
			secondCredits++
		}
	}
	if rc := r.Reconciliation; !rc.Checked || rc.Unexpected != 0 || rc.Expected != secondCredits || secondCredits == 0 {
		t.Errorf("reconciliation %+v; the plan has %d second credits", rc, secondCredits)
	}
}

// checkStormSecretRetired checks that the signing secret the run installed
// is the only one and is retired when the run ends.
func checkStormSecretRetired(t *testing.T, l *ledgerd, r loadtest.Report) {
	t.Helper()
	// The secret the run installed is retired when it ends.
	var secrets struct {
		SigningSecrets []struct {
			Fingerprint string  `json:"fingerprint"`
			RetiredOn   *string `json:"retiredOn"`
		} `json:"signingSecrets"`
	}
	resp, err := http.Get(l.admin + "/v1/signing-secrets")
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&secrets)
	resp.Body.Close()
	if len(secrets.SigningSecrets) != 1 || secrets.SigningSecrets[0].Fingerprint != r.SecretFingerprint || secrets.SigningSecrets[0].RetiredOn == nil {
		t.Errorf("signing secrets after the run: %+v", secrets)
	}
}

// TestStormCorruptedLedger: a balance changed behind the ledger's back
// after the storm fails the invariant check with exit 1.
func TestStormCorruptedLedger(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "report.json")
	var victim string
	corrupt := func(ctx context.Context, p loadtest.Plan) error {
		victim = p.Header.Accounts[1].AccountID
		conn, err := pgx.Connect(ctx, l.dbURL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		tag, err := conn.Exec(ctx, `UPDATE accounts SET balance = balance + 0.01 WHERE account_id = $1`, victim)
		if err == nil && tag.RowsAffected() != 1 {
			t.Errorf("corrupted %d rows", tag.RowsAffected())
		}
		return err
	}
	code, out, errs := run(t, stormArgs(l, report), loadtest.Hooks{BeforeCheck: corrupt})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	c := check(r, "accounts:")
	if r.OK || c == nil || c.OK || c.Failed != 1 || len(c.Detail) != 1 || !strings.Contains(c.Detail[0], victim+": balance") {
		t.Fatalf("accounts check %+v", c)
	}
	if other := check(r, "holds:"); other == nil || !other.OK {
		t.Errorf("holds check %+v", other)
	}
	if !strings.Contains(out, "FAIL") {
		t.Errorf("the table does not say FAIL:\n%s", out)
	}
}

// TestRecordReplay: a recorded storm replays with fresh iat/exp; replayed
// again against the same ledgerd every answer is a stored one and the
// ledger is unchanged; with --reprefix it is a new storm.
func TestRecordReplay(t *testing.T) {
	tooltest.SkipShort(t, "records a storm and replays it against a ledgerd")
	t.Parallel()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(t.TempDir(), "signing-secret")
	if err := os.WriteFile(secretFile, []byte(base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := startLedgerd(t, "LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret))
	storm := filepath.Join(t.TempDir(), "storm.jsonl")
	code, out, errs := run(t, []string{"record", "--accounts", "3", "--payouts", "20", "--credits", "6", "--seed", "11",
		"--drop", "0.2", "--duplicates", "0.2", "--concurrent-dupes", "0.2", "--second-attempts", "0.2",
		"--provider-id", providerID, "--secret-file", secretFile, "--out", storm}, loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errs)
	}
	raw, err := os.ReadFile(storm)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), base64.StdEncoding.EncodeToString(secret)) {
		t.Fatal("the recording contains the secret")
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	var header map[string]any
	lines := 0
	for sc.Scan() {
		lines++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v", lines, err)
		}
		if lines == 1 {
			header = m
		} else if _, ok := m["service"].(map[string]any); !ok || m["endpoint"] == "" {
			t.Fatalf("line %d: %s", lines, sc.Text())
		}
	}
	if header["kind"] != "header" || header["secretFingerprint"] == "" || header["seed"] != float64(11) || lines < 1+20+6 {
		t.Fatalf("header %v, %d lines", header, lines)
	}

	replay := func(extra ...string) loadtest.Report {
		t.Helper()
		report := filepath.Join(t.TempDir(), "report.json")
		code, out, errs := run(t, l.args("replay", append([]string{"--secret-file", secretFile, "--concurrency", "6", "--report", report}, extra...)...), loadtest.Hooks{})
		if code != 0 {
			t.Fatalf("replay %v: exit %d\n%s\n%s", extra, code, out, errs)
		}
		return readReport(t, report)
	}
	first := replay(storm)
	if first.Prefix != header["prefix"] || endpoint(first, "authorize").Requests < 20 || first.Overall.OK < lines-1 {
		t.Fatalf("first replay %+v", first)
	}
	// Sent again, the recording would get stored answers only: by default
	// it goes under a fresh prefix, and says so.
	again := replay("--rate", "500", storm)
	if again.Prefix == first.Prefix || !again.OK || len(again.Notes) != 1 || !strings.Contains(again.Notes[0], "fresh prefix") || again.Settings.Loop != "open" {
		t.Fatalf("second replay: prefix %s (first %s), notes %q, loop %s", again.Prefix, first.Prefix, again.Notes, again.Settings.Loop)
	}
	stored := replay("--keep-prefix", storm)
	if stored.Prefix != first.Prefix || !stored.OK || len(stored.Notes) != 1 || !strings.Contains(stored.Notes[0], "stored answers") {
		t.Fatalf("replay with --keep-prefix: prefix %s, notes %q", stored.Prefix, stored.Notes)
	}
	fresh := replay("--reprefix", storm)
	if fresh.Prefix == first.Prefix || fresh.Prefix == again.Prefix || !fresh.OK || len(fresh.Notes) != 0 {
		t.Fatalf("reprefixed replay %+v", fresh)
	}
}

// TestUsage: bad flags and unusable targets exit 2 before sending anything.
func TestUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want int
		says string
	}{
		{"NoCommand", nil, 2, "missing command"},
		{"UnknownCommand", []string{"hurricane"}, 2, "unknown command"},
		{"Help", []string{"-h"}, 0, "spawn"},
		{"StormHelp", []string{"storm", "-h"}, 0, "--concurrent-dupes"},
		{"ZeroConcurrency", []string{"storm", "--concurrency", "0"}, 2, "--concurrency"},
		{"DropOverOne", []string{"storm", "--drop", "1.5"}, 2, "--drop"},
		{"NegativeDuplicates", []string{"storm", "--duplicates", "-0.1"}, 2, "--duplicates"},
		{"NoAccounts", []string{"record", "--accounts", "0"}, 2, "--accounts"},
		{"NothingToSend", []string{"storm", "--payouts", "0", "--credits", "0"}, 2, "--payouts"},
		{"BadURL", []string{"storm", "--callbacks", "ftp://x/ledger"}, 2, "--callbacks"},
		{"NegativeRate", []string{"replay", "--rate", "-1", "x.jsonl"}, 2, "--rate"},
		{"MaxInflightWithoutRate", []string{"storm", "--max-inflight", "10"}, 2, "--rate"},
		{"ReplayWithoutFile", []string{"replay"}, 2, "recorded storm"},
		{"ReplayMissingFile", []string{"replay", filepath.Join(t.TempDir(), "none.jsonl")}, 2, "no such file"},
		{"ReplayBothPrefixModes", []string{"replay", "--reprefix", "--keep-prefix", "x.jsonl"}, 2, "contradict"},
		{"StrayArgument", []string{"storm", "extra"}, 2, "unexpected argument"},
		{"UnknownFlag", []string{"storm", "--bogus"}, 2, "bogus"},
		{"AdminUnreachable", []string{"storm", "--admin", "http://127.0.0.1:1", "--callbacks", "http://127.0.0.1:1/ledger"}, 2, "is ledgerd running?"},
		{"SecretFileMissing", []string{"storm", "--secret-file", filepath.Join(t.TempDir(), "none")}, 2, "--secret-file"},
		{"ChaosOnSharedPostgres", []string{"spawn", "--chaos", "--database-url", "postgres://postgres@127.0.0.1:5432/postgres"}, 2, "--chaos-postgres=false"},
		{"ChaosTooShort", []string{"spawn", "--chaos", "--duration", "5s", "--database-url="}, 2, "at least 15s"},
		{"CleanWithoutPrefix", []string{"clean"}, 2, "--prefix"},
		{"BenchBadClients", []string{"bench", "--clients", "0"}, 2, "--clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := run(t, tc.args, loadtest.Hooks{})
			if code != tc.want || !strings.Contains(out+errs, tc.says) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s\n%s", code, tc.want, tc.says, out, errs)
			}
		})
	}
}

// TestBench: the cycle workload against a real ledgerd completes cycles,
// every one approved, and reports their latencies; the JSON report is
// written.
func TestBench(t *testing.T) {
	tooltest.SkipShort(t, "runs the bench cycles against a ledgerd")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "bench.json")
	code, out, errs := run(t, l.args("bench", "--clients", "2", "--duration", "1s", "--warmup", "0s", "--accounts", "5", "--report", report), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep loadtest.BenchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Adapter.Cycles == 0 || rep.Runs[0].Adapter.Failed != 0 || rep.Runs[0].Adapter.Authorize.P50 <= 0 {
		t.Fatalf("bench report %+v", rep)
	}
	if n := metric(t, l.admin, "ledgerd_callback_undecryptable_total"); n != 0 {
		t.Errorf("%v undecryptable callbacks: the key probe reached the callbacks", n)
	}
}

// TestWrongCallbacks: a --callbacks URL that is not ledgerd's callback
// listener fails at once, before seeding, saying what to check, and sends
// no callback.
func TestWrongCallbacks(t *testing.T) {
	t.Parallel()
	l := startLedgerd(t)
	for _, wrong := range []string{l.admin + "/ledger", strings.TrimSuffix(l.callbacks, "/ledger") + "/callbacks"} {
		start := time.Now()
		code, out, errs := run(t, []string{"storm", "--callbacks", wrong, "--admin", l.admin, "--provider-id", providerID}, loadtest.Hooks{})
		if code != 2 || !strings.Contains(errs, "does not look like ledgerd's callback listener") || strings.Contains(errs, "seeding") {
			t.Fatalf("%s: exit %d\n%s\n%s", wrong, code, out, errs)
		}
		if time.Since(start) > 20*time.Second {
			t.Errorf("%s: took %s to fail", wrong, time.Since(start))
		}
	}
	if n := metric(t, l.admin, "ledgerd_callback_requests_total"); n != 0 {
		t.Errorf("%v callbacks reached ledgerd", n)
	}
}
