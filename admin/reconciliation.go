package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
)

// Reconciler runs reconciliation (*reconciliation.Reconciler implements it).
type Reconciler interface {
	// Run runs one reconciliation, stores it and returns its report
	// (design section 5); with fix it applies missed_capture and
	// missed_release.
	Run(ctx context.Context, fix bool) (reconciliation.Report, error)
}

var _ Reconciler = (*reconciliation.Reconciler)(nil)

// RunTimeout bounds one reconciliation run started through the admin API.
const RunTimeout = 15 * time.Minute

// registerReconciliation adds POST /v1/reconciliation/runs (design section
// 4): body {"fix": bool} ({} means fix false; any other member, or a fix
// that is not a JSON boolean, is 400), 201 with the run's report.
// The run happens within the request; a database failure is 503.
func (s *Server) registerReconciliation() {
	s.Handle(http.MethodPost, "/v1/reconciliation/runs", s.runReconciliation)
}

func (s *Server) runReconciliation(r *http.Request, _ httprouter.Params) (int, any, error) {
	// The body is an adminapi.ReconciliationRunRequest, read as raw
	// members rather than into the struct: encoding/json would take {"Fix": true}
	// or {"fix": null} silently, and fix moves money.
	var body map[string]json.RawMessage
	if err := Decode(r, &body); err != nil {
		return 0, nil, err
	}
	for name := range body {
		if name != "fix" {
			ptr := strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
			return 0, nil, ledger.Invalid("/"+ptr, "unknown field %q", name)
		}
	}
	var fix bool
	if raw, ok := body["fix"]; ok {
		if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &fix) != nil {
			return 0, nil, ledger.Invalid("/fix", "fix must be a JSON boolean")
		}
	}
	// The run is not tied to the caller's connection: a client that stops
	// waiting must not cancel a run halfway through its fixes. It has a
	// deadline of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), RunTimeout)
	defer cancel()
	rep, err := s.cfg.Reconciler.Run(ctx, fix)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, viewRun(rep), nil
}

func viewRun(rep reconciliation.Report) adminapi.ReconciliationRun {
	run := adminapi.ReconciliationRun{RunID: rep.RunID, StartedOn: rep.StartedOn, FinishedOn: rep.FinishedOn, Status: rep.Status,
		Findings: make([]adminapi.Finding, 0, len(rep.Findings))}
	for _, f := range rep.Findings {
		run.Findings = append(run.Findings, adminapi.Finding(f))
	}
	return run
}
