package admin

import (
	"fmt"
	"io"
	"time"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
)

// A statement is written as it is read (store.Statement calls begin, then
// entry for each entry, then the handler calls end), so that its size is
// not bounded by memory. Everything a format can refuse is checked in
// newStatementWriter, before the first byte.
type statementWriter interface {
	contentType() string
	extension() string
	begin() error
	entry(ledger.Entry) error
	end() error
}

// errStatementFormat refuses a statement the format cannot express.
func errStatementFormat(format string, args ...any) error {
	return &ledger.Error{Code: ledger.CodeUnprocessable, Slug: slugStatementFormat, Pointer: "/format",
		Message: fmt.Sprintf(format, args...)}
}

func newStatementWriter(format string, w io.Writer, s ledger.StatementSummary, now time.Time) (statementWriter, error) {
	switch format {
	case adminapi.StatementCSV:
		return newCSVStatement(w, s, now), nil
	case adminapi.StatementCamt053:
		return newCamtStatement(w, s, now)
	}
	return nil, ledger.Invalid("/format", "format must be csv or camt053")
}

// statementTime is how statements write times: UTC, microseconds.
func statementTime(t time.Time) string { return t.UTC().Format(adminapi.TimestampFormat) }
