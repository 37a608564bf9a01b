package admin

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

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

// statement streams an account's statement as it reads it. Until the
// first byte, an error is a problem answer; after it, the connection is
// cut (http.ErrAbortHandler), so that the client sees a broken transfer and
// never takes a partial statement for a whole one.
func (s *Handler) statement(w http.ResponseWriter, r *http.Request, ps httprouter.Params) error {
	accountID := ps.ByName("accountID") // valid text: stream checked
	q, err := readQuery(r, "from", "to", "format")
	if err != nil {
		return err
	}
	o := ledger.StatementOptions{AccountID: accountID}
	if o.From, err = q.time("from"); err != nil {
		return err
	}
	if o.To, err = q.time("to"); err != nil {
		return err
	}
	if err := notTheZeroTime(q, "from", o.From); err != nil {
		return err
	}
	if err := notTheZeroTime(q, "to", o.To); err != nil {
		return err
	}
	format := q["format"]
	if format == "" {
		format = adminapi.StatementCSV
	}
	if format != adminapi.StatementCSV && format != adminapi.StatementCamt053 {
		return ledger.Invalid("/format", "format must be csv or camt053")
	}
	var sw statementWriter
	started := false
	now := s.cfg.Now() // before the snapshot: nothing in it is booked after now
	err = s.cfg.DB.Statement(r.Context(), o, func(sum ledger.StatementSummary) error {
		var err error
		if sw, err = newStatementWriter(format, w, sum, now); err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", sw.contentType())
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Disposition", `attachment; filename="`+statementFilename(sum, sw.extension())+`"`)
		w.WriteHeader(http.StatusOK)
		started = true
		return sw.begin()
	}, func(e ledger.Entry) error { return sw.entry(e) })
	if err == nil && started {
		err = sw.end()
	}
	if err != nil && started {
		if r.Context().Err() != nil {
			s.log.Info("statement abandoned: the client went away", "path", r.URL.Path)
		} else {
			s.log.Error("statement abandoned after its first byte: connection closed", "path", r.URL.Path, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	return err
}

// notTheZeroTime refuses 0001-01-01T00:00:00Z for a statement's bound:
// the database's reader takes that time for "not given", so the refusal
// says what it is instead of "from is required".
func notTheZeroTime(q query, name string, t time.Time) error {
	if _, given := q[name]; given && t.IsZero() {
		return ledger.Invalid("/"+name, "%s must be after 0001-01-01T00:00:00Z (the earliest is 0001-01-01T00:00:00.000001Z)", name)
	}
	return nil
}

// statementFilename is statement-<account>-<from>-<to>.<ext>, with only
// characters that need no quoting in a header.
func statementFilename(s ledger.StatementSummary, ext string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return r
		}
		return '_'
	}, s.Account.AccountID)
	stamp := func(t time.Time) string { return t.UTC().Format("20060102T150405Z") }
	return "statement-" + safe + "-" + stamp(s.From) + "-" + stamp(s.To) + "." + ext
}
