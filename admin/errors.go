package admin

// How an error becomes an answer: its HTTP status and its problem.

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/ledger"
)

// StatusOf maps an error code to its HTTP status: the one table of it.
func StatusOf(c ledger.Code) int {
	switch c {
	case ledger.CodeInvalid:
		return http.StatusBadRequest
	case ledger.CodeNotFound:
		return http.StatusNotFound
	case ledger.CodeConflict:
		return http.StatusConflict
	case ledger.CodeUnprocessable:
		return http.StatusUnprocessableEntity
	case ledger.CodeForbidden:
		return http.StatusForbidden
	case ledger.CodeUnavailable, ledger.CodeTimeout, ledger.CodeCanceled:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// statusOf is the status writeError answers err with.
func (s *Handler) statusOf(err error) int {
	var le *ledger.Error
	code := ledger.CodeOf(err)
	switch {
	case errors.As(err, &le) && StatusOf(code) < 500:
		return StatusOf(code)
	case StatusOf(code) == http.StatusServiceUnavailable || errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers err as a problem: a ledger.Error by its code, a
// database outage as 503, anything else as 500 (logged, not shown).
func (s *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var le *ledger.Error
	switch status := s.statusOf(err); {
	case status < 500 && errors.As(err, &le):
		p := problem.New(le.Slug, status, le.Message)
		if le.Pointer != "" || le.Whole {
			p.WithField(le.Pointer, le.Message)
		}
		problem.Write(w, p)
	case status == http.StatusServiceUnavailable:
		s.log.Warn("admin request failed: database unavailable", "path", r.URL.Path, "err", err)
		p := problem.New(slugDatabaseUnavailable, http.StatusServiceUnavailable, "the database is unavailable; retry later")
		p.RetryAfter = time.Second
		problem.Write(w, p)
	default:
		s.log.Error("admin request failed", "path", r.URL.Path, "err", err)
		problem.Write(w, problem.New(slugInternal, http.StatusInternalServerError, "internal error"))
	}
}
