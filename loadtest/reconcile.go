package loadtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/ledger"
)

// defaultReconcileTimeout is how long a run waits for its reconciliation
// (POST /v1/reconciliation/runs answers when the run is done, and a run
// over a large ledger takes minutes).
const defaultReconcileTimeout = 5 * time.Minute

// runFinding is a finding about the run's accounts, holds or requests.
// Expected marks the run's own doing: a duplicate_credit_attempt of a
// requestID the storm credited under a second key on purpose.
type runFinding struct {
	ledger.Finding
	Expected bool `json:"expected,omitempty"`
}

// reconciliation is what the run's reconciliation found, scoped to the run.
type reconciliation struct {
	// Available is false when this ledgerd has no reconciliation route.
	Available bool `json:"available"`
	// Checked is false when no report came back (timeout, another run
	// holding the lock until the timeout): Note says why.
	Checked bool    `json:"checked"`
	Note    string  `json:"note,omitempty"`
	RunID   string  `json:"runID,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	// Findings are the run's (subject tied to the run), expected or not;
	// at most 50 are listed, the counts count all.
	Findings []runFinding `json:"findings,omitempty"`
	// Unexpected counts the run's findings that are not expected, Critical
	// those of them that are critical, Expected the expected ones.
	Unexpected int `json:"unexpected"`
	Critical   int `json:"critical"`
	Expected   int `json:"expected"`
	// Unrelated counts the findings whose subject cannot be tied to the
	// run (other runs, other data, ledger-wide subjects such as a
	// currency): they are not the run's and do not fail it.
	Unrelated         int `json:"unrelated"`
	UnrelatedCritical int `json:"unrelatedCritical"`
}

// reconcile runs one reconciliation (fix false) and waits for it up to
// timeout, with a context of its own: a slow reconciliation is "not
// checked", never a failure of the ledger. A 409 (another run in progress)
// is retried until the timeout.
func reconcile(ctx context.Context, adm *adminClient, m *model, timeout time.Duration) reconciliation {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var run *adminapi.ReconciliationRun
	for {
		var err error
		run, _, err = adm.Reconciliation.Run(rctx, &adminapi.ReconciliationRunRequest{Fix: false})
		switch {
		case err == nil:
		case errors.Is(err, adminapi.ErrNoRoute):
			return reconciliation{Note: "this ledgerd has no reconciliation endpoint"}
		case rctx.Err() != nil && ctx.Err() == nil:
			return reconciliation{Available: true, Note: fmt.Sprintf("not checked: no report within %s (--reconcile-timeout)", timeout)}
		case errors.Is(err, adminapi.ErrConflict):
			select {
			case <-time.After(time.Second):
				continue
			case <-rctx.Done():
				continue
			}
		default:
			return reconciliation{Available: true, Note: "failed: " + cli.AdminAPI.Explain(err).Error(), Unexpected: 1, Critical: 1}
		}
		break
	}
	r := reconciliation{Available: true, Checked: true, RunID: run.RunID, Seconds: round2(time.Since(start).Seconds())}
	for _, f := range run.Findings {
		if f.Fixed {
			continue
		}
		if !m.ours(f.Subject) {
			r.Unrelated++
			if f.Severity == adminapi.SeverityCritical {
				r.UnrelatedCritical++
			}
			continue
		}
		rf := runFinding{Finding: f, Expected: f.Kind == "duplicate_credit_attempt" && m.secondCredit(f.Subject)}
		if rf.Expected {
			r.Expected++
		} else {
			r.Unexpected++
			if f.Severity == adminapi.SeverityCritical {
				r.Critical++
			}
		}
		if len(r.Findings) < maxListed {
			r.Findings = append(r.Findings, rf)
		}
	}
	return r
}

// check is the reconciliation as a check of the run: it fails on any of
// the run's findings that the run did not cause on purpose.
func (r reconciliation) check() Check {
	c := Check{Name: "reconciliation: no finding about the run's accounts, holds or requests but the expected duplicate_credit_attempt of its second credits",
		Checked: r.Unexpected + r.Expected, Failed: r.Unexpected, OK: r.Unexpected == 0}
	if !r.Available || !r.Checked {
		c.NotChecked = r.Note
		if r.Unexpected > 0 {
			c.NotChecked = ""
			c.Detail = []string{r.Note}
		}
	}
	for _, f := range r.Findings {
		if !f.Expected {
			c.Detail = append(c.Detail, fmt.Sprintf("%s %s %s: %s", f.Severity, f.Kind, f.Subject, f.Detail))
		}
	}
	return c
}

// secondCredit reports whether requestID is one the run credited under a
// second key on purpose.
func (m *model) secondCredit(requestID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.secondCredits[requestID]
}
