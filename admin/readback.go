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
