package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/internal/problem"
)

// ReadyReason is one reason /readyz answers 503: a stable name to branch
// on (ledgerd's are in docs/contract.md) and a sentence for a person.
type ReadyReason struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// NotReadyError is the error Config.Ready returns to name every reason the
// server is not ready; /readyz lists them in its problem's reasons. Any
// other error is listed as one reason, not-ready.
type NotReadyError struct {
	Reasons []ReadyReason
}

// Error joins the reasons' details.
func (e *NotReadyError) Error() string {
	parts := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		parts[i] = r.Detail
	}
	return strings.Join(parts, "; ")
}

// notReady is the 503 body of /readyz: the problem, with the reasons.
type notReady struct {
	*problem.Problem
	Reasons []ReadyReason `json:"reasons"`
}

func (s *Handler) readyz(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if s.cfg.Ready == nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return
	}
	err := s.cfg.Ready(r.Context())
	if err == nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return
	}
	var nr *NotReadyError
	reasons := []ReadyReason{{Reason: "not-ready", Detail: err.Error()}}
	if errors.As(err, &nr) && len(nr.Reasons) > 0 {
		reasons = nr.Reasons
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(notReady{problem.New(slugNotReady, http.StatusServiceUnavailable, err.Error()), reasons})
}
