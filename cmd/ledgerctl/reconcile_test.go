package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// reconcileCLI runs `ledgerctl reconcile args… --admin url`.
func reconcileCLI(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append(append([]string{"reconcile"}, args...), "--admin", url), &out, &errb)
	return code, out.String(), errb.String()
}

func TestReconcileCommandExitsOnTheWorstUnfixedFinding(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	rec, err := reconciliation.New(reconciliation.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admintest.Handler(t, admin.New(admin.Config{DB: db, Reconciler: rec})))
	t.Cleanup(srv.Close)

	// Clean: 0, a header line and no table.
	code, out, errs := reconcileCLI(t, srv.URL)
	if code != 0 || !strings.Contains(out, ": clean, 0 findings, 0 fixed") || strings.Contains(out, "KIND") {
		t.Fatalf("clean: exit %d\n%s%s", code, out, errs)
	}
	checkReconcileWarning(t, srv.URL, db)
	accountID, byKind := checkReconcileCritical(t, srv.URL, db, pool)
	checkReconcileAcknowledged(t, srv.URL, accountID, byKind)
}

// reconcileFinding is a finding as `ledgerctl reconcile --json` prints it.
type reconcileFinding struct {
	FindingID, Kind, Severity, Subject string
	Fixed, New, Acknowledged           bool
}

// checkReconcileWarning checks that an orphan release makes reconcile exit
// 1 with the finding in the table, new, and that seen again it is no longer
// new but still exits 1: an unresolved finding counts until it is
// acknowledged, new or not.
func checkReconcileWarning(t *testing.T, url string, db *store.DB) {
	t.Helper()
	if d := storetest.Settle(t, db, "po-cli", "hold_cli_orphan", false); !d.Approved() {
		t.Fatalf("orphan release: %+v", d)
	}
	code, out, errs := reconcileCLI(t, url)
	if code != 1 || !strings.Contains(out, "FINDING") || !strings.Contains(out, "FIXED") {
		t.Fatalf("warning: exit %d\n%s%s", code, out, errs)
	}
	if !tableRow(out, "orphan_release", "warning", "(new)", "hold_cli_orphan", "no") {
		t.Fatalf("warning table:\n%s", out)
	}
	if code, out, _ = reconcileCLI(t, url); code != 1 || !tableRow(out, "orphan_release", "warning", "hold_cli_orphan", "no") || strings.Contains(out, "(new)") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
}

// checkReconcileCritical checks that held drift on an account makes
// reconcile exit 2, also with --json --fix, whose output is the report with
// both findings, neither new: a run that finds nothing new still exits 2 on
// the critical finding it saw before. It returns the drifting account and
// the report's findings by kind.
func checkReconcileCritical(t *testing.T, url string, db *store.DB, pool *pgxpool.Pool) (string, map[string]reconcileFinding) {
	t.Helper()
	a := storetest.Account(t, db, storetest.AccountOpts{Funds: "10.00"})
	if _, err := pool.Exec(context.Background(), `UPDATE accounts SET held = held + 1 WHERE account_id = $1`, a.AccountID); err != nil {
		t.Fatal(err)
	}
	code, out, errs := reconcileCLI(t, url)
	if code != 2 || !tableRow(out, "held_drift", "critical", a.AccountID, "no") {
		t.Fatalf("critical: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = reconcileCLI(t, url, "--json", "--fix")
	var rep struct {
		RunID    string             `json:"runID"`
		Status   string             `json:"status"`
		Findings []reconcileFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 2 || rep.Status != "critical" || rep.RunID == "" || len(rep.Findings) != 2 {
		t.Fatalf("--json: exit %d %v\n%s%s", code, err, out, errs)
	}
	byKind := map[string]reconcileFinding{}
	for _, f := range rep.Findings {
		if f.New {
			t.Fatalf("repeat run: %s is new\n%s", f.Kind, out)
		}
		byKind[f.Kind] = f
	}
	return a.AccountID, byKind
}

// checkReconcileAcknowledged checks that, acknowledged with a note, a
// finding no longer counts: the critical one first (back to 1), then the
// warning (0), while --all still shows them; and that ack refuses an
// unknown finding and a missing --note.
func checkReconcileAcknowledged(t *testing.T, url, accountID string, byKind map[string]reconcileFinding) {
	t.Helper()
	ack := func(id string) {
		t.Helper()
		var o, e bytes.Buffer
		if code := run(context.Background(), []string{"reconcile", "ack", id, "--note", "checked with the bank's ledger team", "--admin", url}, &o, &e); code != 0 || !strings.Contains(o.String(), id) {
			t.Fatalf("ack %s: exit %d\n%s%s", id, code, o.String(), e.String())
		}
	}
	ack(byKind["held_drift"].FindingID)
	if code, out, _ := reconcileCLI(t, url); code != 1 || strings.Contains(out, "held_drift") || !strings.Contains(out, "1 acknowledged") {
		t.Fatalf("after acknowledging the critical finding: exit %d\n%s", code, out)
	}
	ack(byKind["orphan_release"].FindingID)
	if code, out, _ := reconcileCLI(t, url); code != 0 || strings.Contains(out, "FINDING") {
		t.Fatalf("all acknowledged: exit %d\n%s", code, out)
	}
	if code, out, _ := reconcileCLI(t, url, "--all"); code != 0 || !tableRow(out, "held_drift", "critical", "(acknowledged)", accountID, "no") {
		t.Fatalf("--all: exit %d\n%s", code, out)
	}
	var o, e bytes.Buffer
	if code := run(context.Background(), []string{"reconcile", "ack", "fnd_nosuchfindingxxxxxxxxxxxxx", "--note", "x", "--admin", url}, &o, &e); code == 0 {
		t.Fatalf("ack of an unknown finding: exit 0")
	}
	if code := run(context.Background(), []string{"reconcile", "ack", byKind["held_drift"].FindingID, "--admin", url}, &o, &e); code == 0 {
		t.Fatalf("ack without --note: exit 0")
	}
}

func TestReconcileCommandFixedFindingsDoNotCountAndFixIsSent(t *testing.T) {
	t.Parallel()
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/reconciliation/runs" {
			http.NotFound(w, r)
			return
		}
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"runID":"rec_a","startedOn":"2026-01-01T00:00:00Z","finishedOn":"2026-01-01T00:00:01Z","status":"clean",
"findings":[{"kind":"missed_release","severity":"warning","subject":"hold_1","detail":"payout p is cancelled;\tfixed: released","fixed":true}]}`)
	}))
	t.Cleanup(srv.Close)
	code, out, errs := reconcileCLI(t, srv.URL, "--fix")
	if code != 0 || !tableRow(out, "missed_release", "warning", "hold_1", "yes") || !strings.Contains(out, "1 fixed") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if string(gotBody) != `{"fix":true}` {
		t.Fatalf("body sent %s", gotBody)
	}
	if code, _, _ := reconcileCLI(t, srv.URL); code != 0 || string(gotBody) != `{"fix":false}` {
		t.Fatalf("without --fix: exit %d, body %s", code, gotBody)
	}
	if code, _, _ := reconcileCLI(t, srv.URL, "--full"); code != 0 || string(gotBody) != `{"fix":false,"full":true}` {
		t.Fatalf("with --full: exit %d, body %s", code, gotBody)
	}
}

// TestReconcileCommandSaysWhichRun: the header names the kind of run, the
// checkpoint it started from and the one it wrote.
func TestReconcileCommandSaysWhichRun(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"runID":"rec_a","startedOn":"2026-01-01T00:00:00Z","finishedOn":"2026-01-01T00:00:01Z","status":"clean",
"findings":[],"mode":"incremental","fromCheckpoint":"chk_a","checkpoint":"chk_b"}`)
	}))
	t.Cleanup(srv.Close)
	code, out, errs := reconcileCLI(t, srv.URL)
	if code != 0 || !strings.Contains(out, "incremental run from checkpoint chk_a; wrote checkpoint chk_b\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func TestReconcileCommandErrorsExit3(t *testing.T) {
	t.Parallel()
	problem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"type":"urn:provider-ledger:problem:database-unavailable","title":"Service Unavailable","status":503,"detail":"the database is unavailable; retry later"}`)
	}))
	t.Cleanup(problem.Close)
	if code, _, errs := reconcileCLI(t, problem.URL); code != 3 || !strings.Contains(errs, "database is unavailable") {
		t.Fatalf("problem answer: exit %d %s", code, errs)
	}
	notReport := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(notReport.Close)
	if code, _, _ := reconcileCLI(t, notReport.URL); code != 3 {
		t.Fatalf("an answer that is no report: exit %d", code)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if code, _, errs := reconcileCLI(t, gone.URL); code != 3 || errs == "" {
		t.Fatalf("unreachable: exit %d %q", code, errs)
	}
	if code, _, _ := reconcileCLI(t, gone.URL, "--no-such-flag"); code != 3 {
		t.Fatalf("bad flag: exit %d", code)
	}
	if code, _, _ := reconcileCLI(t, gone.URL, "extra"); code != 3 {
		t.Fatalf("extra argument: exit %d", code)
	}
	var outb bytes.Buffer
	if code := run(context.Background(), []string{"reconcile", "-h"}, &outb, io.Discard); code != 0 || !strings.Contains(outb.String(), "3  error") {
		t.Fatalf("-h: exit %d %s", code, outb.String())
	}
}

// tableRow reports whether out has a table row holding these cells in
// order, the last one last.
func tableRow(out string, cells ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[len(f)-1] != cells[len(cells)-1] {
			continue
		}
		i := 0
		for _, w := range f {
			if i < len(cells)-1 && w == cells[i] {
				i++
			}
		}
		if i == len(cells)-1 {
			return true
		}
	}
	return false
}
