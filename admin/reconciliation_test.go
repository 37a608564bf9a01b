package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// failingReconciler fails every run with err.
type failingReconciler struct{ err error }

func (f failingReconciler) RunWith(context.Context, reconciliation.RunOptions) (reconciliation.Report, error) {
	return reconciliation.Report{}, f.err
}

func (f failingReconciler) Acknowledge(context.Context, string, string) (ledger.Issue, error) {
	return ledger.Issue{}, f.err
}

// recordingReconciler records the options of each run and answers an
// empty report.
type recordingReconciler struct{ fixes, fulls []bool }

func (r *recordingReconciler) Acknowledge(context.Context, string, string) (ledger.Issue, error) {
	return ledger.Issue{}, ledger.ErrFindingNotFound
}

func (r *recordingReconciler) RunWith(_ context.Context, o reconciliation.RunOptions) (reconciliation.Report, error) {
	r.fixes, r.fulls = append(r.fixes, o.Fix), append(r.fulls, o.Full)
	return reconciliation.Report{RunID: "rec_x", Status: reconciliation.StatusClean, Mode: reconciliation.ModeFull}, nil
}

type runReply struct {
	status int
	ctype  string
	body   map[string]any
}

// sendRun sends a request to /v1/reconciliation/runs through h, held to
// the OpenAPI document; hdr are header name/value pairs.
func sendRun(t *testing.T, h http.Handler, method, body string, hdr ...string) runReply {
	t.Helper()
	req := httptest.NewRequest(method, "/v1/reconciliation/runs", strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	admintest.Handler(t, h).ServeHTTP(rec, req)
	rp := runReply{status: rec.Code, ctype: rec.Header().Get("Content-Type")}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &rp.body); err != nil {
			t.Fatalf("body is not a JSON object: %q", rec.Body.String())
		}
	}
	return rp
}

func (rp runReply) problem(t *testing.T, status int, slug, pointer string) {
	t.Helper()
	answer{status: rp.status, header: http.Header{"Content-Type": {rp.ctype}}, body: rp.body}.problem(t, status, slug, pointer)
}

func TestReconciliationAPIRunsAndAnswers201WithTheReport(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	rec, err := reconciliation.New(reconciliation.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	api := admin.New(admin.Config{DB: db, Reconciler: rec, Token: "tok"})
	auth := []string{"Authorization", "Bearer tok"}

	rp := sendRun(t, api, "POST", `{}`, auth...)
	if rp.status != http.StatusCreated || rp.ctype != "application/json" || rp.body["status"] != "clean" {
		t.Fatalf("clean run: %d %s %v", rp.status, rp.ctype, rp.body)
	}
	if fs, ok := rp.body["findings"].([]any); !ok || len(fs) != 0 {
		t.Fatalf("findings of a clean run: %v, want []", rp.body["findings"])
	}
	for _, k := range []string{"runID", "startedOn", "finishedOn"} {
		if s, _ := rp.body[k].(string); s == "" {
			t.Errorf("report has no %s: %v", k, rp.body)
		}
	}

	a := storetest.Account(t, db, storetest.AccountOpts{Funds: "10.00"})
	if _, err := pool.Exec(context.Background(), `UPDATE accounts SET balance = balance + 1 WHERE account_id = $1`, a.AccountID); err != nil {
		t.Fatal(err)
	}
	rp = sendRun(t, api, "POST", `{"fix": true}`, auth...)
	if rp.status != http.StatusCreated || rp.body["status"] != "critical" {
		t.Fatalf("corrupted run: %d %v", rp.status, rp.body)
	}
	var drift bool
	for _, f := range rp.body["findings"].([]any) {
		m := f.(map[string]any)
		drift = drift || (m["kind"] == "balance_drift" && m["subject"] == a.AccountID && m["severity"] == "critical" && m["fixed"] == false)
	}
	if !drift {
		t.Fatalf("findings %v, want balance_drift on %s", rp.body["findings"], a.AccountID)
	}
	var runs int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM reconciliation_runs WHERE finished_on IS NOT NULL`).Scan(&runs); err != nil || runs != 2 {
		t.Fatalf("stored runs %d %v, want 2", runs, err)
	}
	if rp := sendRun(t, api, "POST", `{}`); rp.status != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", rp.status)
	}
}

func TestReconciliationAPIPassesFix(t *testing.T) {
	t.Parallel()
	r := &recordingReconciler{}
	api := admin.New(admin.Config{Reconciler: r})
	for _, body := range []string{`{}`, `{"fix":false}`, `{"fix":true}`, `{"full":true}`, `{"fix":true,"full":false}`} {
		if rp := sendRun(t, api, "POST", body); rp.status != http.StatusCreated {
			t.Fatalf("%s: %d %v", body, rp.status, rp.body)
		}
	}
	if !slices.Equal(r.fixes, []bool{false, false, true, false, true}) || !slices.Equal(r.fulls, []bool{false, false, false, true, false}) {
		t.Fatalf("fix passed as %v, full as %v", r.fixes, r.fulls)
	}
}

// TestReconciliationAPIBadBodiesAre400AndRunNothing: a body that is not
// one object with at most a boolean fix starts no run; null is no {}.
func TestReconciliationAPIBadBodiesAre400AndRunNothing(t *testing.T) {
	t.Parallel()
	r := &recordingReconciler{}
	api := admin.New(admin.Config{Reconciler: r})
	for _, c := range []struct{ name, body, pointer string }{
		{"Empty", ``, ""},
		{"NotJSON", `{"fix":`, ""},
		{"Array", `[]`, ""},
		{"NullBody", `null`, ""},
		{"NullBodySpaced", " null\n", ""},
		{"String", `{"fix":"true"}`, "/fix"},
		{"Null", `{"fix":null}`, "/fix"},
		{"Number", `{"fix":1}`, "/fix"},
		{"FullString", `{"full":"yes"}`, "/full"},
		{"FullNull", `{"fix":true,"full":null}`, "/full"},
		{"OtherCase", `{"Fix":true}`, "/Fix"},
		{"Unknown", `{"fix":true,"dryRun":false}`, "/dryRun"},
		{"TwoObjects", `{}{}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rp := sendRun(t, api, "POST", c.body)
			rp.problem(t, http.StatusBadRequest, "invalid-request", c.pointer)
			if errs, _ := rp.body["errors"].([]any); len(errs) == 0 {
				t.Fatalf("no pointer: %v", rp.body)
			}
		})
	}
	// A browser's request from another site's page is refused, whatever its
	// body; the same body from a client that is no browser runs.
	sendRun(t, api, "POST", `{}`, "Sec-Fetch-Site", "cross-site").problem(t, http.StatusForbidden, "cross-origin-request", "")
	sendRun(t, api, "POST", `{}`, "Origin", "https://elsewhere.example").problem(t, http.StatusForbidden, "cross-origin-request", "")
	if len(r.fixes) != 0 {
		t.Fatalf("bad bodies ran %d reconciliations", len(r.fixes))
	}
	if rp := sendRun(t, api, "GET", ""); rp.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", rp.status)
	}
}

func TestReconciliationAPIFailuresAreProblems(t *testing.T) {
	t.Parallel()
	down := admin.New(admin.Config{Reconciler: failingReconciler{err: ledger.ErrUnavailable}})
	sendRun(t, down, "POST", `{}`).problem(t, http.StatusServiceUnavailable, "database-unavailable", "")
	broken := admin.New(admin.Config{Reconciler: failingReconciler{err: errors.New("secret internal detail")}})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/reconciliation/runs", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	broken.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusInternalServerError || strings.Contains(string(body), "secret internal detail") {
		t.Fatalf("internal error: %d %s", rec.Code, body)
	}
	sendRun(t, admin.New(admin.Config{}), "POST", `{}`).problem(t, http.StatusNotFound, "not-found", "")
}

// ctxRecorder is a Reconciler that reports whether its context was already
// cancelled when the run started.
type ctxRecorder struct{ cancelled chan bool }

func (c ctxRecorder) RunWith(ctx context.Context, _ reconciliation.RunOptions) (reconciliation.Report, error) {
	c.cancelled <- ctx.Err() != nil
	_, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		return reconciliation.Report{}, errors.New("the run has no deadline")
	}
	return reconciliation.Report{RunID: "rec_x", Findings: []ledger.Finding{}, Mode: reconciliation.ModeFull}, nil
}

func (c ctxRecorder) Acknowledge(context.Context, string, string) (ledger.Issue, error) {
	return ledger.Issue{}, ledger.ErrFindingNotFound
}

// TestReconciliationRunOutlivesItsCaller: a caller that stops waiting does
// not cancel the run (it may be halfway through its fixes); the run has a
// deadline of its own.
func TestReconciliationRunOutlivesItsCaller(t *testing.T) {
	t.Parallel()
	rec := ctxRecorder{cancelled: make(chan bool, 1)}
	api := admin.New(admin.Config{Reconciler: rec})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", "/v1/reconciliation/runs", strings.NewReader(`{"fix":true}`)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	rw := httptest.NewRecorder()
	api.ServeHTTP(rw, req)
	if <-rec.cancelled {
		t.Fatal("the run started with the caller's cancelled context")
	}
	if rw.Code != 201 {
		t.Fatalf("status %d: %s", rw.Code, rw.Body.String())
	}
}

// TestReconciliationOneAtATimeAndAcknowledgement: a run while another is
// in progress is 409 naming it; a finding is acknowledged with a note
// (400 without, 404 unknown), and later runs report it acknowledged.
func TestReconciliationOneAtATimeAndAcknowledgement(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	rec, err := reconciliation.New(reconciliation.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	api := admin.New(admin.Config{DB: db, Reconciler: rec})
	a := storetest.Account(t, db, storetest.AccountOpts{Funds: "5"})
	if _, err := pool.Exec(context.Background(), `UPDATE accounts SET held = held + 1 WHERE account_id = $1`, a.AccountID); err != nil {
		t.Fatal(err)
	}
	// Another replica's run holds the lease.
	if ok, _, err := db.AcquireLease(context.Background(), "rec_otherreplicarunxxxxxxxxx", "other", time.Minute); err != nil || !ok {
		t.Fatal(ok, err)
	}
	busy := call(t, api, "POST", "/v1/reconciliation/runs", `{}`)
	busy.problem(t, 409, "reconciliation-running", "")
	if !strings.Contains(busy.raw, "rec_otherreplicarunxxxxxxxxx") {
		t.Fatalf("409 does not name the running run: %s", busy.raw)
	}
	if err := db.ReleaseLease(context.Background(), "rec_otherreplicarunxxxxxxxxx"); err != nil {
		t.Fatal(err)
	}
	run := call(t, api, "POST", "/v1/reconciliation/runs", `{}`)
	fs, _ := run.body["findings"].([]any)
	if run.status != 201 || len(fs) != 1 || run.body["status"] != "critical" {
		t.Fatalf("run %d %s", run.status, run.raw)
	}
	id, _ := fs[0].(map[string]any)["findingID"].(string)
	call(t, api, "POST", "/v1/reconciliation/findings/"+id+"/acknowledgement", `{}`).problem(t, 400, "invalid-request", "/note")
	call(t, api, "POST", "/v1/reconciliation/findings/fnd_nosuchfindingxxxxxxxxxxxxx/acknowledgement", `{"note":"x"}`).problem(t, 404, "finding-not-found", "")
	ack := call(t, api, "POST", "/v1/reconciliation/findings/"+id+"/acknowledgement", `{"note":"known, being fixed in core"}`)
	if ack.status != 200 || ack.body["findingID"] != id || ack.body["note"] != "known, being fixed in core" || ack.body["kind"] != "held_drift" {
		t.Fatalf("ack %d %s", ack.status, ack.raw)
	}
	again := call(t, api, "POST", "/v1/reconciliation/runs", `{}`)
	fs, _ = again.body["findings"].([]any)
	if again.status != 201 || len(fs) != 1 || fs[0].(map[string]any)["acknowledged"] != true || again.body["status"] != "clean" {
		t.Fatalf("run after the acknowledgement %d %s", again.status, again.raw)
	}
}
