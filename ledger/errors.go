package ledger

import (
	"errors"
	"fmt"
)

// Code classifies an Error. Each transport maps codes to its statuses in
// one table (admin.StatusOf; the callbacks' statuses of contract §2.7).
type Code string

// The codes an Error carries.
const (
	CodeInvalid       Code = "invalid"       // malformed input: never succeeds as sent
	CodeNotFound      Code = "not_found"     // the named thing does not exist
	CodeConflict      Code = "conflict"      // conflicts with the current state
	CodeUnprocessable Code = "unprocessable" // well formed, refused by a business rule
	// CodeForbidden: the caller may not do this (its token lacks the
	// route's scope, or dual control forbids it).
	CodeForbidden Code = "forbidden"
	// CodeUnavailable: transient (the database unreachable, read-only,
	// shutting down, out of resources, or conflicting transactions kept
	// failing); the same request may succeed later. Whether anything was
	// committed is not known.
	CodeUnavailable Code = "unavailable"
	// CodeTimeout: the database rolled the work back because its deadline
	// passed (statement or lock timeout, or a cancel at the caller's
	// deadline): nothing was committed; the same request may succeed later.
	CodeTimeout Code = "timeout"
	// CodeCanceled: the caller went away before the work was done.
	CodeCanceled Code = "canceled"
)

// Error is an error with a code, a stable slug (the problem type) and a
// message that is safe to show to the caller. Err, when set, is the cause
// and is only logged.
type Error struct {
	Code    Code
	Slug    string
	Message string
	Pointer string // JSON Pointer to the offending input field, if any
	// Whole: the error is about the whole input (a body that is null, not
	// an object, not JSON): its pointer is "", the whole document.
	Whole bool
	Err   error
}

// Error implements error: the message of a Error.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches two Errors by slug, so that errors.Is(err, ErrAccountNotFound)
// holds for any error with that slug.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Slug == e.Slug
}

// Wrap returns a copy of e with cause err.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// Invalid returns a CodeInvalid error pointing at a field.
func Invalid(pointer, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Slug: "invalid-request", Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}

// InvalidBody returns a CodeInvalid error about the whole body (pointer
// "").
func InvalidBody(format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Slug: "invalid-request", Whole: true, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err's *Error, or "" for any other error (a
// bug: answered 500).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// The errors of the ledger; compare with errors.Is.
var (
	ErrAccountNotFound       = &Error{Code: CodeNotFound, Slug: "account-not-found", Message: "account not found"}
	ErrAccountExists         = &Error{Code: CodeConflict, Slug: "account-exists", Message: "an account with this accountID exists"}
	ErrAccountClosed         = &Error{Code: CodeConflict, Slug: "account-closed", Message: "the account is closed"}
	ErrInsufficientAvailable = &Error{Code: CodeUnprocessable, Slug: "insufficient-available", Message: "available balance would go below zero"}
	ErrIdempotencyMismatch   = &Error{Code: CodeUnprocessable, Slug: "idempotency-key-mismatch", Message: "the idempotency key was used with a different request"}
	ErrInstrumentConflict    = &Error{Code: CodeConflict, Slug: "instrument-conflict", Message: "the token is mapped otherwise"}
	ErrHoldNotFound          = &Error{Code: CodeNotFound, Slug: "hold-not-found", Message: "hold not found"}
	ErrFindingNotFound       = &Error{Code: CodeNotFound, Slug: "finding-not-found", Message: "reconciliation finding not found"}
	ErrUnavailable           = &Error{Code: CodeUnavailable, Slug: "database-unavailable", Message: "the database is unavailable"}
	ErrRetriesExhausted      = &Error{Code: CodeUnavailable, Slug: "transaction-retries-exhausted", Message: "the transaction kept conflicting with concurrent ones"}
	ErrTimeout               = &Error{Code: CodeTimeout, Slug: "timeout", Message: "the deadline passed; the transaction was rolled back"}
	ErrCanceled              = &Error{Code: CodeCanceled, Slug: "canceled", Message: "the caller went away"}
	ErrInvalidText           = &Error{Code: CodeInvalid, Slug: "invalid-request", Message: "a value is not valid text (NUL or invalid UTF-8)"}
)
