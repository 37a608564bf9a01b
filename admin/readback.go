package admin

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// registerReadback adds the routes that read the ledger back:
//
//	GET /v1/accounts                        ?currency=&status=&ownerExternalID=&cursor=&limit=
//	                                        200 {accounts, nextCursor, hasMore}, in accountID order
//	GET /v1/accounts/:accountID/holds       ?payoutID=&status=&cursor=&limit=
//	                                        200 {holds, nextCursor, hasMore}, newest first; 404 unknown account
//	GET /v1/accounts/:accountID/statement   ?from=&to=&format=csv|camt053
//	                                        200 text/csv or application/xml; 404; 422 camt.053 cannot express it
//	GET /v1/journal/transactions            ?accountID=&from=&to=&cursor=&limit=
//	                                        200 {transactions, nextCursor, hasMore}, oldest first
//	GET /v1/journal/entries                 ?accountID=&from=&to=&cursor=&limit=
//	                                        200 {entries, nextCursor, hasMore}, oldest first
//
// Query strings are read strictly: an unknown parameter, one given twice,
// a malformed escape, NUL or invalid UTF-8 is 400 with a pointer to the
// parameter (/from, /cursor, …); an invalid path ID is 400 for every route
// (handle, stream).
func (s *Handler) registerReadback() {
	s.handle(http.MethodGet, "/v1/accounts", s.listAccounts)
	s.handle(http.MethodGet, "/v1/accounts/:accountID/holds", s.listAccountHolds)
	s.stream(http.MethodGet, "/v1/accounts/:accountID/statement", s.statement)
	s.handle(http.MethodGet, "/v1/journal/transactions", s.listTransactions)
	s.handle(http.MethodGet, "/v1/journal/entries", s.listEntries)
}

// limit reads the page size; 0 when not given.
func (q query) limit() (int, error) {
	v := q["limit"]
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > ledger.MaxLimit {
		return 0, ledger.Invalid("/limit", "limit must be an integer from 1 to %d", ledger.MaxLimit)
	}
	return n, nil
}

// time reads an RFC 3339 time, or a date (midnight UTC); zero when not
// given.
func (q query) time(name string) (time.Time, error) {
	v := q[name]
	if v == "" {
		return time.Time{}, nil
	}
	// A "+" of an offset that was not %-escaped arrives as a space.
	for _, s := range []string{v, strings.Replace(v, " ", "+", 1)} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, ledger.Invalid("/"+name, "%s must be an RFC 3339 time (2026-01-31T09:30:00Z) or a date (2026-01-31: midnight UTC)", name)
}

func (s *Handler) listAccounts(r *http.Request, _ httprouter.Params) (int, any, error) {
	q, err := readQuery(r, "currency", "status", "ownerExternalID", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	limit, err := q.limit()
	if err != nil {
		return 0, nil, err
	}
	p, err := s.cfg.DB.ListAccounts(r.Context(), ledger.AccountListOptions{Currency: q["currency"], Status: q["status"],
		OwnerExternalID: q["ownerExternalID"], Cursor: q["cursor"], Limit: limit})
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.AccountList{Accounts: make([]adminapi.Account, 0, len(p.Accounts)), NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, a := range p.Accounts {
		out.Accounts = append(out.Accounts, viewAccount(a))
	}
	return http.StatusOK, out, nil
}

// holdsPage answers one page of holds as o says, filtered by the query's
// payoutID, status, cursor and limit.
func (s *Handler) holdsPage(r *http.Request, q query, o holds.ListOptions) (int, any, error) {
	limit, err := q.limit()
	if err != nil {
		return 0, nil, err
	}
	o.PayoutID, o.Status, o.Cursor, o.Limit = q["payoutID"], q["status"], q["cursor"], limit
	p, err := s.cfg.DB.ListHolds(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.HoldList{Holds: make([]adminapi.Hold, 0, len(p.Holds)), NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, h := range p.Holds {
		out.Holds = append(out.Holds, viewHold(h))
	}
	return http.StatusOK, out, nil
}

func (s *Handler) listAccountHolds(r *http.Request, ps httprouter.Params) (int, any, error) {
	accountID := ps.ByName("accountID") // valid text: Handle checked
	q, err := readQuery(r, "payoutID", "status", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.cfg.DB.GetAccount(r.Context(), accountID); err != nil {
		return 0, nil, err
	}
	return s.holdsPage(r, q, holds.ListOptions{AccountID: accountID})
}

// journalOptions reads the query of the journal listings.
func journalOptions(r *http.Request) (ledger.JournalOptions, error) {
	q, err := readQuery(r, "accountID", "from", "to", "cursor", "limit")
	if err != nil {
		return ledger.JournalOptions{}, err
	}
	o := ledger.JournalOptions{AccountID: q["accountID"], Cursor: q["cursor"]}
	if o.Limit, err = q.limit(); err != nil {
		return o, err
	}
	if o.From, err = q.time("from"); err != nil {
		return o, err
	}
	o.To, err = q.time("to")
	return o, err
}

func viewEntry(e ledger.Entry) adminapi.JournalEntry {
	return adminapi.JournalEntry{TransactionID: e.TransactionID, AccountID: e.AccountID, ContraAccountID: e.ContraAccountID,
		Currency: e.Currency, Amount: wireAmount(e.Currency, e.Amount), Kind: e.Kind, Reference: e.Reference, Memo: e.Memo,
		CreatedAt: adminapi.Timestamp{Time: e.CreatedAt}}
}

func (s *Handler) listTransactions(r *http.Request, _ httprouter.Params) (int, any, error) {
	o, err := journalOptions(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := s.cfg.DB.ListTransactions(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.JournalTransactionList{Transactions: make([]adminapi.JournalTransaction, 0, len(p.Transactions)),
		NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, t := range p.Transactions {
		v := adminapi.JournalTransaction{TransactionID: t.TransactionID, Kind: t.Kind, Reference: t.Reference, Memo: t.Memo,
			Currency: t.Currency, CreatedAt: adminapi.Timestamp{Time: t.CreatedAt}}
		for _, e := range t.Entries {
			v.Entries = append(v.Entries, adminapi.TransactionEntry{AccountID: e.AccountID, Amount: wireAmount(e.Currency, e.Amount)})
		}
		out.Transactions = append(out.Transactions, v)
	}
	return http.StatusOK, out, nil
}

func (s *Handler) listEntries(r *http.Request, _ httprouter.Params) (int, any, error) {
	o, err := journalOptions(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := s.cfg.DB.ListEntries(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.JournalEntryList{Entries: make([]adminapi.JournalEntry, 0, len(p.Entries)), NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, e := range p.Entries {
		out.Entries = append(out.Entries, viewEntry(e))
	}
	return http.StatusOK, out, nil
}

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
