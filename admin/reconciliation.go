package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// RunWith runs one reconciliation, stores it and returns its report
	// (contract §5): with Fix it applies missed_capture and
	// missed_release; with Full it reads all of history rather than
	// starting from the last checkpoint.
	RunWith(ctx context.Context, o reconciliation.RunOptions) (reconciliation.Report, error)
	// Acknowledge acknowledges a finding's issue with a note.
	Acknowledge(ctx context.Context, findingID, note string) (ledger.Issue, error)
}

var _ Reconciler = (*reconciliation.Reconciler)(nil)

// RunTimeout bounds one reconciliation run started through the admin API.
const RunTimeout = 15 * time.Minute

// registerReconciliation adds POST /v1/reconciliation/runs (contract
// §4): body {"fix": bool, "full": bool} (a missing member is false; any
// other member, or a value that is not a JSON boolean, is 400), 201 with
// the run's report.
// The run happens within the request; a database failure is 503.
func (s *Handler) registerReconciliation() {
	s.handle(http.MethodPost, "/v1/reconciliation/runs", s.runReconciliation)
	s.handle(http.MethodPost, "/v1/reconciliation/findings/:findingID/acknowledgement", s.acknowledgeFinding)
}

// acknowledgeFinding is POST
// /v1/reconciliation/findings/{findingID}/acknowledgement {"note": "..."}:
// 200 with the acknowledged issue; 404 unknown finding; 400 without a
// note.
func (s *Handler) acknowledgeFinding(r *http.Request, ps httprouter.Params) (int, any, error) {
	var body adminapi.AcknowledgementRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	switch {
	case strings.TrimSpace(body.Note) == "":
		return 0, nil, ledger.Invalid("/note", "note is required: say why the finding needs no further action")
	case len([]rune(body.Note)) > 1024:
		return 0, nil, ledger.Invalid("/note", "note must be at most 1024 characters")
	}
	is, err := s.cfg.Reconciler.Acknowledge(r.Context(), ps.ByName("findingID"), body.Note)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.AcknowledgedFinding{FindingID: is.FindingID, Kind: is.Kind, Subject: is.Subject,
		FirstRunID: is.FirstRunID, LastRunID: is.LastRunID, FirstSeenOn: is.FirstSeenOn.UTC(), LastSeenOn: is.LastSeenOn.UTC(), Note: is.AckNote}
	if is.AcknowledgedOn != nil {
		out.AcknowledgedOn = is.AcknowledgedOn.UTC()
	}
	return http.StatusOK, out, nil
}

func (s *Handler) runReconciliation(r *http.Request, _ httprouter.Params) (int, any, error) {
	// The body is an adminapi.ReconciliationRunRequest, read as raw
	// members rather than into the struct: encoding/json would take {"Fix": true}
	// or {"fix": null} silently, and fix moves money.
	var body map[string]json.RawMessage
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	for name := range body {
		if name != "fix" && name != "full" {
			ptr := strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
			return 0, nil, ledger.Invalid("/"+ptr, "unknown field %q", name)
		}
	}
	var o reconciliation.RunOptions
	for name, dst := range map[string]*bool{"fix": &o.Fix, "full": &o.Full} {
		if raw, ok := body[name]; ok {
			if bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, dst) != nil {
				return 0, nil, ledger.Invalid("/"+name, "%s must be a JSON boolean", name)
			}
		}
	}
	// The run is not tied to the caller's connection: a client that stops
	// waiting must not cancel a run halfway through its fixes. It has a
	// deadline of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), RunTimeout)
	defer cancel()
	rep, err := s.cfg.Reconciler.RunWith(ctx, o)
	var running *reconciliation.RunningError
	if errors.As(err, &running) {
		// One run at a time, across replicas: the caller waits for the
		// running one's report, or asks again.
		return 0, nil, &ledger.Error{Code: ledger.CodeConflict, Slug: slugReconciliationRunning,
			Message: "reconciliation run " + running.RunID + " is in progress; one run at a time: retry when it is done"}
	}
	if err != nil {
		return 0, nil, err
	}
	setTarget(r, "runID", rep.RunID)
	return http.StatusCreated, viewRun(rep), nil
}

func viewRun(rep reconciliation.Report) adminapi.ReconciliationRun {
	return adminapi.ReconciliationRun{RunID: rep.RunID, StartedOn: rep.StartedOn, FinishedOn: rep.FinishedOn, Status: rep.Status,
		Findings: append([]ledger.Finding{}, rep.Findings...), Mode: rep.Mode, FromCheckpoint: rep.FromCheckpoint,
		Checkpoint: rep.Checkpoint}
}
