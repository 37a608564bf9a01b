package ledger

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Code classifies an Error; one function per transport maps codes to its
// statuses (see the admin and callbacks packages).
type Code string

// The codes an Error carries.
const (
	CodeInvalid       Code = "invalid"       // malformed input: never succeeds as sent
	CodeNotFound      Code = "not_found"     // the named thing does not exist
	CodeConflict      Code = "conflict"      // conflicts with the current state
	CodeUnprocessable Code = "unprocessable" // well formed, refused by a business rule
	CodeUnavailable   Code = "unavailable"   // transient; the same request may succeed later
)

// Error is an error with a code, a stable slug (the problem type) and a
// message that is safe to show to the caller. Err, when set, is the cause
// and is only logged.
type Error struct {
	Code    Code
	Slug    string
	Message string
	Pointer string // JSON Pointer to the offending input field, if any
	Err     error
}

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

// Invalid returns a CodeInvalid error pointing at a field.
func Invalid(pointer, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Slug: "invalid-request", Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}

// The errors of the store; compare with errors.Is.
var (
	ErrAccountNotFound       = &Error{Code: CodeNotFound, Slug: "account-not-found", Message: "account not found"}
	ErrAccountExists         = &Error{Code: CodeConflict, Slug: "account-exists", Message: "an account with this accountID exists"}
	ErrAccountClosed         = &Error{Code: CodeConflict, Slug: "account-closed", Message: "the account is closed"}
	ErrInsufficientAvailable = &Error{Code: CodeUnprocessable, Slug: "insufficient-available", Message: "available balance would go below zero"}
	ErrIdempotencyMismatch   = &Error{Code: CodeUnprocessable, Slug: "idempotency-key-mismatch", Message: "the idempotency key was used with a different request"}
	ErrInstrumentConflict    = &Error{Code: CodeConflict, Slug: "instrument-conflict", Message: "the token is mapped otherwise"}
	ErrHoldNotFound          = &Error{Code: CodeNotFound, Slug: "hold-not-found", Message: "hold not found"}
	ErrUnavailable           = &Error{Code: CodeUnavailable, Slug: "database-unavailable", Message: "the database is unavailable"}
)

// translate maps driver errors to the store's errors at the boundary:
// application SQLSTATEs raised by the schema's functions become typed
// errors; other errors pass through unchanged.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "LA001":
			return ErrAccountNotFound
		case "LA002":
			return ErrInsufficientAvailable
		case "LA003":
			return ErrAccountClosed
		case "LA004":
			return ErrIdempotencyMismatch
		}
	}
	return err
}
