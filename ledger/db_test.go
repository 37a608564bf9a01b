package ledger_test

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/ledger"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	// A ConnectError wraps whatever the server or the network said; any of
	// them is an outage.
	connect := fmt.Errorf("pool: %w", &pgconn.ConnectError{})
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"ConnectError", connect, true},
		{"ConnectionException", pg("08006"), true},
		{"TooManyConnections", pg("53300"), true},
		{"DiskFull", pg("53100"), true},
		{"AdminShutdown", pg("57P01"), true},
		{"Starting", pg("57P03"), true},
		{"ReadOnlyStandby", pg("25006"), true},
		{"Serialization", pg("40001"), true},
		{"StatementTimeout", pg("57014"), true},
		{"LockTimeout", pg("55P03"), true},
		{"Deadlock", pg("40P01"), true},
		{"ConnectionReset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"UnexpectedEOF", io.ErrUnexpectedEOF, true},
		{"LedgerUnavailable", ledger.ErrUnavailable, true},
		{"UniqueViolationIsABug", pg("23505"), false},
		{"SyntaxErrorIsABug", pg("42601"), false},
		{"NotFoundIsNot", ledger.ErrAccountNotFound, false},
		{"OtherError", errors.New("boom"), false},
	} {
		if got := ledger.Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable = %v, want %v", c.name, got, c.want)
		}
	}
}
