package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinels to test an *Error with errors.Is. Status sentinels match the
// HTTP status; code sentinels match the problem's code member.
var (
	ErrBadRequest   = errors.New("provider: bad request")         // 400
	ErrUnauthorized = errors.New("provider: unauthorized")        // 401
	ErrForbidden    = errors.New("provider: forbidden")           // 403
	ErrNotFound     = errors.New("provider: not found")           // 404
	ErrConflict     = errors.New("provider: conflict")            // 409
	ErrValidation   = errors.New("provider: validation failed")   // 422
	ErrRateLimited  = errors.New("provider: rate limited")        // 429
	ErrServer       = errors.New("provider: service unavailable") // 5xx

	// ErrVersionConflict: 409 code version_conflict; re-read and retry.
	ErrVersionConflict = errors.New("provider: version conflict")
	// ErrIdempotencyKeyReused: 409 code idempotency-key-reused; the key
	// already created a signing secret whose plaintext is not returned again.
	ErrIdempotencyKeyReused = errors.New("provider: idempotency key reused")
	// ErrIdempotencyRequestInProgress: 409 code
	// idempotency-request-in-progress.
	ErrIdempotencyRequestInProgress = errors.New("provider: idempotency request in progress")
	// ErrAlreadyRegistered: participant registration found the externalID
	// registered (see AlreadyRegisteredError).
	ErrAlreadyRegistered = errors.New("provider: participant already registered")

	// ErrInvalidPageSize: ListOptions.Limit outside 1 to 100; nothing was sent.
	ErrInvalidPageSize = errors.New("provider: page size must be 1 to 100")
)

// Problem codes of 409 answers named by the spec.
const (
	CodeVersionConflict              = "version_conflict"
	CodeIdempotencyKeyReused         = "idempotency-key-reused"
	CodeIdempotencyRequestInProgress = "idempotency-request-in-progress"
)

// FieldError is one member of a validation problem's errors.
type FieldError struct {
	Pointer string `json:"pointer"` // JSON Pointer into the request body
	Detail  string `json:"detail"`
}

// Error is a non-2xx answer: an RFC 9457 problem when the service sent one,
// else just the status (401, 403 and 404 of registration and token minting
// carry no body).
type Error struct {
	// Response is the HTTP response (body already read).
	Response *http.Response `json:"-"`
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail"`
	Instance string         `json:"instance,omitempty"`
	// Code is the problem's code member (version_conflict,
	// idempotency-key-reused, idempotency-request-in-progress).
	Code   string       `json:"code,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
	// Body is the raw answer body, for logging.
	Body []byte `json:"-"`
}

// Error implements error: the message of a Error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("provider: ")
	if e.Response != nil && e.Response.Request != nil {
		fmt.Fprintf(&b, "%s %s: ", e.Response.Request.Method, e.Response.Request.URL.Path)
	}
	fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	} else if e.Title != "" {
		b.WriteString(": " + e.Title)
	}
	for _, fe := range e.Errors {
		fmt.Fprintf(&b, "; %s %s", fe.Pointer, fe.Detail)
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's status or code.
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
	case ErrValidation:
		return e.Status == http.StatusUnprocessableEntity
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrServer:
		return e.Status >= 500
	case ErrVersionConflict:
		return e.Status == http.StatusConflict && e.Code == CodeVersionConflict
	case ErrIdempotencyKeyReused:
		return e.Status == http.StatusConflict && e.Code == CodeIdempotencyKeyReused
	case ErrIdempotencyRequestInProgress:
		return e.Status == http.StatusConflict && e.Code == CodeIdempotencyRequestInProgress
	}
	return false
}

// FieldError returns the validation error at pointer, if any.
func (e *Error) FieldError(pointer string) (FieldError, bool) {
	for _, fe := range e.Errors {
		if fe.Pointer == pointer {
			return fe, true
		}
	}
	return FieldError{}, false
}

// AlreadyRegisteredError is participant registration's 409: the externalID
// is already registered with this provider. Treat the participant as
// registered (Participants.Ensure does).
type AlreadyRegisteredError struct {
	ExternalID string
	Err        *Error
}

// Error implements error: the message of a AlreadyRegisteredError.
func (e *AlreadyRegisteredError) Error() string {
	return fmt.Sprintf("provider: participant %q already registered", e.ExternalID)
}

// Unwrap returns the underlying *Error.
func (e *AlreadyRegisteredError) Unwrap() error { return e.Err }

// Is matches ErrAlreadyRegistered.
func (e *AlreadyRegisteredError) Is(target error) bool { return target == ErrAlreadyRegistered }

// CheckResponse returns nil for a 2xx answer and an *Error otherwise. It
// reads and closes r.Body; a body over 10 MiB is an error of its own.
func CheckResponse(r *http.Response) error {
	body, err := readBody(r.Body)
	r.Body.Close()
	if errors.Is(err, ErrAnswerTooLarge) {
		return err
	}
	if err := errorFromResponse(r, body); err != nil {
		return err
	}
	return nil
}

// errorFromResponse decodes a non-2xx answer into *Error; it tolerates a
// missing or non-problem body.
func errorFromResponse(r *http.Response, body []byte) *Error {
	if r.StatusCode >= 200 && r.StatusCode < 300 {
		return nil
	}
	e := &Error{Response: r, Body: body}
	if len(body) > 0 {
		_ = json.Unmarshal(body, e) // a body that is no problem still leaves the status
	}
	e.Status = r.StatusCode
	return e
}
