package loadtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
)

// TestReconciliationScope: a reconciliation finding about data that is
// not the run's (another account's drift, the currency's imbalance) is
// counted apart and does not fail the run; the run's own second credits
// are expected findings; a reconciliation that does not answer within
// --reconcile-timeout is "not checked", not a failure.
func TestReconciliationScope(t *testing.T) {
	t.Parallel()
	t.Run("ForeignFindingsDoNotCount", func(t *testing.T) {
		t.Parallel()
		l := startLedgerd(t)
		// Another account, whose balance someone changed behind the
		// ledger's back: a critical balance_drift (and a currency
		// imbalance) that is no storm's doing.
		body := strings.NewReader(`{"accountID":"someone-else","ownerExternalID":"x","currency":"USD"}`)
		resp, err := http.Post(l.admin+"/v1/accounts", "application/json", body)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("creating the foreign account: %v %v", err, resp)
		}
		resp.Body.Close()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, l.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `UPDATE accounts SET balance = balance + 5 WHERE account_id = 'someone-else'`); err != nil {
			t.Fatal(err)
		}
		report := filepath.Join(t.TempDir(), "report.json")
		code, out, errs := run(t, l.args("storm", "--accounts", "3", "--payouts", "20", "--credits", "20", "--second-attempts", "0.5",
			"--seed", "3", "--report", report), loadtest.Hooks{})
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		rc := readReport(t, report).Reconciliation
		if !rc.Checked || rc.Unexpected != 0 || rc.Expected == 0 || rc.Unrelated == 0 || rc.UnrelatedCritical == 0 {
			t.Fatalf("reconciliation %+v", rc)
		}
		for _, f := range rc.Findings {
			if !f.Expected || f.Kind != "duplicate_credit_attempt" || strings.Contains(f.Subject, "someone-else") {
				t.Errorf("a finding listed as the run's: %+v", f)
			}
		}
		if !strings.Contains(out, "not tied to this run") {
			t.Errorf("the table does not say findings were left out:\n%s", out)
		}
	})
	t.Run("TimeoutIsNotChecked", func(t *testing.T) {
		t.Parallel()
		l := startLedgerd(t)
		report := filepath.Join(t.TempDir(), "report.json")
		code, out, errs := run(t, l.args("storm", "--accounts", "2", "--payouts", "10", "--credits", "2", "--reconcile-timeout", "1ns",
			"--report", report), loadtest.Hooks{})
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		r := readReport(t, report)
		c := check(r, "reconciliation:")
		if r.Reconciliation.Checked || !strings.Contains(r.Reconciliation.Note, "not checked") || c == nil || !c.OK || c.NotChecked == "" {
			t.Fatalf("reconciliation %+v, check %+v", r.Reconciliation, c)
		}
		if !strings.Contains(out, "n/a  reconciliation:") {
			t.Errorf("the table does not mark the reconciliation n/a:\n%s", out)
		}
		b, _ := json.Marshal(r.Checks)
		if strings.Contains(string(b), `"critical"`) {
			t.Errorf("a timeout reported as critical: %s", b)
		}
	})
}

// TestDuration: with --duration the storm runs in rounds of its shape
// until the time has passed; later rounds fund the same accounts again,
// and every check holds over all rounds.
func TestDuration(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd for a duration")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errs := run(t, l.args("storm", "--accounts", "3", "--payouts", "15", "--credits", "5", "--duration", "3s",
		"--sample-every", "500ms", "--second-attempts", "0.2", "--drop", "0.1", "--report", report), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	if r.Rounds < 2 || r.Settings.DurationSeconds != 3 || endpoint(r, "authorize").Requests < 30 {
		t.Fatalf("%d rounds, settings %+v, %d authorizes", r.Rounds, r.Settings, endpoint(r, "authorize").Requests)
	}
	// The last round's requests not started by the deadline are left out.
	if c := check(r, "holds:"); c == nil || !c.OK || c.Checked < 15*(r.Rounds-1) || c.Checked > 15*r.Rounds {
		t.Fatalf("holds check %+v over %d rounds", c, r.Rounds)
	}
	if c := check(r, "accounts:"); c == nil || !c.OK || c.Checked != 3 {
		t.Fatalf("accounts check %+v", c)
	}
	if r.Resources == nil || len(r.Resources.Samples) < 5 || r.Resources.RSSMaxMB <= 0 || r.Resources.GoroutinesBefore <= 0 {
		t.Fatalf("resources %+v", r.Resources)
	}
	if r.WindowSeconds > 3 || r.WindowSeconds <= 0 {
		t.Errorf("window %.2fs for --duration 3s", r.WindowSeconds)
	}
	// Under a minute is no soak: RSS is charted, not judged.
	if c := check(r, "soak:"); c != nil {
		t.Errorf("a 3s storm judged as a soak: %+v", c)
	}
}

// TestDurationBounds: --duration bounds the window requests start in even
// when one round of the shape would take far longer: the rest of the round
// is withdrawn, what was in flight drains, the summary says so, and every
// check holds over what was sent.
func TestDurationBounds(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd for a duration")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errs := run(t, l.args("storm", "--accounts", "3", "--payouts", "20000", "--credits", "200", "--duration", "2s",
		"--concurrency", "4", "--report", report), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	auth := endpoint(r, "authorize").Requests
	if r.Rounds != 1 || r.WindowSeconds != 2 || r.Unsent == 0 || auth == 0 || auth+r.Unsent < 20000 {
		t.Fatalf("%d rounds, window %.2fs, drain %.2fs, %d unsent, %d authorizes", r.Rounds, r.WindowSeconds, r.DrainSeconds, r.Unsent, auth)
	}
	if c := check(r, "holds:"); c == nil || !c.OK || c.Checked != auth {
		t.Fatalf("holds check %+v for %d authorizes sent", c, auth)
	}
	for _, name := range []string{"accounts:", "requests:"} {
		if c := check(r, name); c == nil || !c.OK {
			t.Errorf("%s check %+v", name, c)
		}
	}
	if want := fmt.Sprintf("1 rounds started in 2.00s, %d requests not started by then", r.Unsent); !strings.Contains(out, want) {
		t.Errorf("the summary lacks %q:\n%s", want, out)
	}
}
