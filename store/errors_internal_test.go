package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/ledger"
)

// TestInterpret is the table of the one interpreter of driver errors.
func TestInterpret(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	for _, c := range []struct {
		name string
		err  error
		want ledger.Code // "" : passes through as a bug
		is   error
	}{
		{"Nil", nil, "", nil},
		{"ConnectError", fmt.Errorf("pool: %w", &pgconn.ConnectError{}), ledger.CodeUnavailable, ledger.ErrUnavailable},
		{"ConnectionException", pg("08006"), ledger.CodeUnavailable, nil},
		{"TooManyConnections", pg("53300"), ledger.CodeUnavailable, nil},
		{"DiskFull", pg("53100"), ledger.CodeUnavailable, nil},
		{"IOError", pg("58030"), ledger.CodeUnavailable, nil},
		{"AdminShutdown", pg("57P01"), ledger.CodeUnavailable, nil},
		{"Starting", pg("57P03"), ledger.CodeUnavailable, nil},
		{"ReadOnlyStandby", pg("25006"), ledger.CodeUnavailable, nil},
		{"SerializationAfterRetries", pg("40001"), ledger.CodeUnavailable, ledger.ErrRetriesExhausted},
		{"DeadlockAfterRetries", pg("40P01"), ledger.CodeUnavailable, ledger.ErrRetriesExhausted},
		{"CanceledAtTheDeadline", pg("57014"), ledger.CodeTimeout, ledger.ErrTimeout},
		{"LockTimeout", pg("55P03"), ledger.CodeTimeout, ledger.ErrTimeout},
		{"InvalidByteSequence", pg("22021"), ledger.CodeInvalid, nil},
		{"UntranslatableCharacter", pg("22P05"), ledger.CodeInvalid, nil},
		{"AccountNotFound", pg("LA001"), ledger.CodeNotFound, ledger.ErrAccountNotFound},
		{"InsufficientAvailable", pg("LA002"), ledger.CodeUnprocessable, ledger.ErrInsufficientAvailable},
		{"AccountClosed", pg("LA003"), ledger.CodeConflict, ledger.ErrAccountClosed},
		{"KeyMismatch", pg("LA004"), ledger.CodeUnprocessable, ledger.ErrIdempotencyMismatch},
		{"PoolerRefusal", &pgconn.PgError{Code: "0A000", Message: "pgbouncer cannot do that"}, ledger.CodeUnavailable, nil},
		{"FeatureNotSupportedIsABug", pg("0A000"), "", nil},
		{"PooledStatementMissing", &pgconn.PgError{Code: "26000", Message: `prepared statement "stmtcache_1" does not exist`}, ledger.CodeUnavailable, nil},
		{"PooledStatementExists", &pgconn.PgError{Code: "42P05", Message: `prepared statement "stmtcache_1" already exists`}, ledger.CodeUnavailable, nil},
		{"UniqueViolationIsABug", pg("23505"), "", nil},
		{"SyntaxErrorIsABug", pg("42601"), "", nil},
		{"ConnectionReset", fmt.Errorf("read: %w", syscall.ECONNRESET), ledger.CodeUnavailable, nil},
		{"UnexpectedEOF", io.ErrUnexpectedEOF, ledger.CodeUnavailable, nil},
		{"CallerWentAway", context.Canceled, ledger.CodeCanceled, ledger.ErrCanceled},
		{"DeadlineBeforeSending", context.DeadlineExceeded, ledger.CodeTimeout, nil},
		{"DomainErrorsPassThrough", ledger.ErrHoldNotFound, ledger.CodeNotFound, ledger.ErrHoldNotFound},
		{"OtherError", errors.New("boom"), "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := interpret(c.err)
			if (got == nil) != (c.err == nil) {
				t.Fatalf("interpret(%v) = %v", c.err, got)
			}
			if code := ledger.CodeOf(got); code != c.want {
				t.Fatalf("interpret(%v) = %v with code %q, want %q", c.err, got, code, c.want)
			}
			if c.is != nil && !errors.Is(got, c.is) {
				t.Fatalf("interpret(%v) = %v, not %v", c.err, got, c.is)
			}
			if c.want == "" && c.err != nil && !errors.Is(got, c.err) {
				t.Fatalf("an unknown error must pass through: %v", got)
			}
		})
	}
}

// TestRetry: serialization failures and deadlocks run again, up to the
// bound; other errors at once.
func TestRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n int
	err := retry(ctx, &n, func() error {
		if n < 3 {
			return &pgconn.PgError{Code: "40001"}
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("after two conflicts: %v after %d runs", err, n)
	}
	err = retry(ctx, &n, func() error { return &pgconn.PgError{Code: "40P01"} })
	if !errors.Is(err, ledger.ErrRetriesExhausted) || n != maxAttempts {
		t.Fatalf("endless deadlocks: %v after %d runs", err, n)
	}
	err = retry(ctx, &n, func() error { return &pgconn.PgError{Code: "23505"} })
	if n != 1 || err == nil {
		t.Fatalf("a bug ran %d times: %v", n, err)
	}
}
