package adminapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// TypeBase prefixes every problem type of the adapter: the type of slug
// "account-not-found" is TypeBase + "account-not-found".
const TypeBase = "urn:provider-ledger:problem:"

// Sentinels to test an *Error with errors.Is by its HTTP status.
var (
	ErrBadRequest    = errors.New("adminapi: bad request")         // 400
	ErrUnauthorized  = errors.New("adminapi: unauthorized")        // 401: the admin token is missing or wrong
	ErrForbidden     = errors.New("adminapi: forbidden")           // 403: the token lacks the route's scope, or dual control forbids it
	ErrNotFound      = errors.New("adminapi: not found")           // 404
	ErrConflict      = errors.New("adminapi: conflict")            // 409
	ErrUnprocessable = errors.New("adminapi: unprocessable")       // 422
	ErrUnavailable   = errors.New("adminapi: service unavailable") // 503: retry later
	ErrServer        = errors.New("adminapi: server error")        // any 5xx
)

// Sentinels to test an *Error with errors.Is by its problem type.
var (
	ErrAccountNotFound       = problemType("account-not-found", http.StatusNotFound)
	ErrAccountExists         = problemType("account-exists", http.StatusConflict)
	ErrAccountIDConfusable   = problemType("account-id-confusable", http.StatusConflict) // the ID prints like the existing account's the detail names
	ErrAccountClosed         = problemType("account-closed", http.StatusConflict)
	ErrInsufficientAvailable = problemType("insufficient-available", http.StatusUnprocessableEntity)
	ErrIdempotencyMismatch   = problemType("idempotency-key-mismatch", http.StatusUnprocessableEntity)
	ErrInstrumentConflict    = problemType("instrument-conflict", http.StatusConflict)
	ErrHoldNotFound          = problemType("hold-not-found", http.StatusNotFound)
	ErrSecretNotFound        = problemType("secret-not-found", http.StatusNotFound)
	ErrSecretRetired         = problemType("secret-retired", http.StatusConflict)
	ErrKEKMismatch           = problemType("kek-mismatch", http.StatusConflict)
	ErrInvalidRequest        = problemType("invalid-request", http.StatusBadRequest)
	ErrDatabaseUnavailable   = problemType("database-unavailable", http.StatusServiceUnavailable)
	// ErrInsufficientScope: the token lacks the scope the route needs
	// (the problem's scope member names it).
	ErrInsufficientScope  = problemType("insufficient-scope", http.StatusForbidden)
	ErrTokenNotFound      = problemType("token-not-found", http.StatusNotFound)
	ErrTokenNameTaken     = problemType("token-name-taken", http.StatusConflict)
	ErrAdjustmentNotFound = problemType("adjustment-not-found", http.StatusNotFound)
	ErrAdjustmentRejected = problemType("adjustment-rejected", http.StatusConflict)
	ErrAdjustmentExpired  = problemType("adjustment-expired", http.StatusConflict)
	ErrAdjustmentPosted   = problemType("adjustment-posted", http.StatusConflict)
	ErrMakerCannotApprove = problemType("maker-cannot-approve", http.StatusForbidden)
	// ErrNoRoute: the server has no such route; the base URL may point at
	// something other than ledgerd's admin listener, or at a ledgerd
	// without that feature (signing secrets, reconciliation).
	ErrNoRoute = problemType("not-found", http.StatusNotFound)
)

func problemType(slug string, status int) *Error {
	return &Error{Type: TypeBase + slug, Status: status, Title: http.StatusText(status)}
}

// FieldError points at one offending member of the request.
type FieldError struct {
	Pointer string `json:"pointer"` // a JSON Pointer (RFC 6901) into the request body
	Detail  string `json:"detail"`
}

// Error is a non-2xx answer of the admin API: its problem+json body (RFC
// 9457) when it has one, else the status alone.
type Error struct {
	// Response is the HTTP answer (its body read and closed).
	Response *http.Response `json:"-"`
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail,omitempty"`
	Errors   []FieldError   `json:"errors,omitempty"`
	// Scope is the scope the route needs (403 insufficient-scope).
	Scope string `json:"scope,omitempty"`
	// RetryAfter is the answer's Retry-After (503, 429), zero without one.
	RetryAfter time.Duration `json:"-"`
}

// Slug is the last part of Type ("account-not-found"), or "" when the
// answer was no problem of the adapter.
func (e *Error) Slug() string {
	s, ok := strings.CutPrefix(e.Type, TypeBase)
	if !ok {
		return ""
	}
	return s
}

// Error is one line: the request, the status, the slug and the detail, then
// each field error whose detail differs from it.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Response != nil && e.Response.Request != nil {
		fmt.Fprintf(&b, "%s %s: ", e.Response.Request.Method, e.Response.Request.URL.Path)
	}
	fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	if s := e.Slug(); s != "" {
		fmt.Fprintf(&b, " (%s)", s)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	for i, fe := range e.Errors {
		sep := "; "
		if i == 0 {
			sep = " at "
		}
		b.WriteString(sep + fe.Pointer)
		if fe.Detail != e.Detail {
			b.WriteString(": " + fe.Detail)
		}
	}
	return b.String()
}

// Is reports whether target is the status sentinel of e's status or the
// problem-type sentinel of e's type.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.Status == http.StatusBadRequest
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrUnprocessable:
		return e.Status == http.StatusUnprocessableEntity
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable
	case ErrServer:
		return e.Status >= 500
	}
	t, ok := target.(*Error)
	return ok && t.Type != "" && t.Type == e.Type
}

// FieldError returns the field error at pointer, if any.
func (e *Error) FieldError(pointer string) (FieldError, bool) {
	for _, fe := range e.Errors {
		if fe.Pointer == pointer {
			return fe, true
		}
	}
	return FieldError{}, false
}

// maxBody bounds how much of an answer the client reads.
const maxBody = 16 << 20

// CheckResponse returns nil for a 2xx answer and an *Error otherwise,
// decoded from the problem+json body when there is one. For a non-2xx
// answer it reads and closes r.Body.
func CheckResponse(r *http.Response) error {
	if r.StatusCode >= 200 && r.StatusCode <= 299 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	r.Body.Close()
	e := &Error{Response: r}
	// A body that is no problem (a proxy's HTML page) still leaves the
	// status.
	_ = json.Unmarshal(body, e)
	e.Status = r.StatusCode
	if e.Title == "" {
		e.Title = http.StatusText(r.StatusCode)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && s >= 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
