package adminapi

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Reading the ledger back: accounts, holds of an account, the journal, and
// an account's statement.

// AccountListOptions are the query of GET /v1/accounts. Accounts come in
// accountID order (byte order).
type AccountListOptions struct {
	Currency        string // only accounts in this currency
	Status          string // AccountOpen, AccountFrozen or AccountClosed
	OwnerExternalID string // only this owner's accounts
	Cursor          string // NextCursor of the previous page
	Limit           int    // 1 to 100; 0: the server's default (25)
}

// AccountList is one page of GET /v1/accounts.
type AccountList struct {
	Accounts   []Account `json:"accounts"`
	NextCursor string    `json:"nextCursor,omitempty"`
	HasMore    bool      `json:"hasMore"`
}

// Journal transaction kinds.
const (
	EntryAdjustment     = "adjustment"     // from the core banking system, against core:<CUR>
	EntryCapture        = "capture"        // a captured hold, against settlement:<CUR>
	EntryCredit         = "credit"         // a credit-account, against settlement:<CUR>
	EntryReconciliation = "reconciliation" // a capture applied by reconciliation's fix
)

// JournalListOptions are the query of GET /v1/journal/transactions and
// GET /v1/journal/entries: oldest first, created in [From, To).
type JournalListOptions struct {
	// AccountID keeps one account's entries (transactions): a customer
	// account or a system account (settlement:USD, core:USD).
	AccountID string
	// From and To bound the creation time, From included, To excluded;
	// zero leaves that end open. Sent with microseconds, the journal's
	// precision.
	From, To time.Time
	Cursor   string // NextCursor of the previous page
	Limit    int    // 1 to 100; 0: the server's default (25)
}

// JournalEntry is one side of a journal transaction: what it did to one
// account.
type JournalEntry struct {
	TransactionID string `json:"transactionID"`
	AccountID     string `json:"accountID"`
	// ContraAccountID is the transaction's other account.
	ContraAccountID string `json:"contraAccountID"`
	Currency        string `json:"currency"`
	// Amount is signed: the change of AccountID's balance, positive for a
	// credit, negative for a debit.
	Amount Amount `json:"amount"`
	Kind   string `json:"kind"` // EntryAdjustment, EntryCapture, EntryCredit, EntryReconciliation
	// Reference is the captureReference, the creditReference or the
	// adjustment's idempotency key.
	Reference string `json:"reference"`
	// Memo is the payoutID (captures), the requestID (credits) or the
	// adjustment's memo.
	Memo      string    `json:"memo"`
	CreatedAt Timestamp `json:"createdAt"`
}

// TransactionEntry is one of a transaction's two entries.
type TransactionEntry struct {
	AccountID string `json:"accountID"`
	Amount    Amount `json:"amount"` // signed; the two sum to zero
}

// JournalTransaction is a journal transaction: a transfer between a
// customer account and a system account, as its two entries (the
// customer's first).
type JournalTransaction struct {
	TransactionID string             `json:"transactionID"`
	Kind          string             `json:"kind"`
	Reference     string             `json:"reference"`
	Memo          string             `json:"memo"`
	Currency      string             `json:"currency"`
	CreatedAt     Timestamp          `json:"createdAt"`
	Entries       []TransactionEntry `json:"entries"`
}

// JournalTransactionList is one page of GET /v1/journal/transactions.
type JournalTransactionList struct {
	Transactions []JournalTransaction `json:"transactions"`
	NextCursor   string               `json:"nextCursor,omitempty"`
	HasMore      bool                 `json:"hasMore"`
}

// JournalEntryList is one page of GET /v1/journal/entries.
type JournalEntryList struct {
	Entries    []JournalEntry `json:"entries"`
	NextCursor string         `json:"nextCursor,omitempty"`
	HasMore    bool           `json:"hasMore"`
}

// Statement formats.
const (
	StatementCSV     = "csv"     // text/csv, one row per entry between an opening and a closing row
	StatementCamt053 = "camt053" // application/xml, ISO 20022 camt.053.001.08
)

// StatementOptions are the query of GET /v1/accounts/{accountID}/statement.
type StatementOptions struct {
	// From and To are the period, From included, To excluded; both
	// required.
	From, To time.Time
	// Format is StatementCSV (the default when empty) or StatementCamt053.
	Format string
}

// List reads one page of accounts, in accountID order: GET /v1/accounts.
func (s *AccountsService) List(ctx context.Context, opts *AccountListOptions) (*AccountList, *Response, error) {
	q := url.Values{}
	if opts != nil {
		setAll(q, "currency", opts.Currency, "status", opts.Status, "ownerExternalID", opts.OwnerExternalID, "cursor", opts.Cursor)
		setLimit(q, opts.Limit)
	}
	page := new(AccountList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/accounts", q), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// ListIter yields every account from opts.Cursor on, following the pages.
// On an error it yields (nil, err) and stops.
func (s *AccountsService) ListIter(ctx context.Context, opts *AccountListOptions) iter.Seq2[*Account, error] {
	o := AccountListOptions{}
	if opts != nil {
		o = *opts
	}
	return pages(func(cursor string) ([]Account, string, bool, error) {
		o.Cursor = cursor
		p, _, err := s.List(ctx, &o)
		if err != nil {
			return nil, "", false, err
		}
		return p.Accounts, p.NextCursor, p.HasMore, nil
	}, o.Cursor, "GET /v1/accounts")
}

// ListHolds reads one page of an account's holds, newest first: GET
// /v1/accounts/{accountID}/holds (ErrAccountNotFound for an unknown
// account, where GET /v1/holds?accountID= answers an empty page).
// opts.AccountID is ignored.
func (s *AccountsService) ListHolds(ctx context.Context, accountID string, opts *HoldListOptions) (*HoldList, *Response, error) {
	q := url.Values{}
	if opts != nil {
		setAll(q, "payoutID", opts.PayoutID, "status", opts.Status, "cursor", opts.Cursor)
		setLimit(q, opts.Limit)
	}
	page := new(HoldList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/accounts/"+url.PathEscape(accountID)+"/holds", q), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// Statement writes an account's statement for a period to w: GET
// /v1/accounts/{accountID}/statement, as CSV or camt.053 XML. Nothing is
// written to w unless the server answered 200. The server streams the
// statement; a statement it could not finish ends the connection, and
// Statement returns an error after writing part of it: w then holds no
// statement.
func (s *AccountsService) Statement(ctx context.Context, accountID string, opts *StatementOptions, w io.Writer) (*Response, error) {
	q := url.Values{}
	accept := "text/csv"
	if opts != nil {
		setTime(q, "from", opts.From)
		setTime(q, "to", opts.To)
		setAll(q, "format", opts.Format)
		if opts.Format == StatementCamt053 {
			accept = "application/xml"
		}
	}
	req, err := s.client.NewRequest(http.MethodGet, withQuery("v1/accounts/"+url.PathEscape(accountID)+"/statement", q), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept+", application/problem+json")
	return s.client.Do(ctx, req, w)
}

// JournalService is /v1/journal: the journal as transactions and entries.
type JournalService service

// ListTransactions reads one page of journal transactions, oldest first:
// GET /v1/journal/transactions.
func (s *JournalService) ListTransactions(ctx context.Context, opts *JournalListOptions) (*JournalTransactionList, *Response, error) {
	page := new(JournalTransactionList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/journal/transactions", journalQuery(opts)), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// ListTransactionsIter yields every transaction from opts.Cursor on,
// following the pages. On an error it yields (nil, err) and stops.
func (s *JournalService) ListTransactionsIter(ctx context.Context, opts *JournalListOptions) iter.Seq2[*JournalTransaction, error] {
	o := JournalListOptions{}
	if opts != nil {
		o = *opts
	}
	return pages(func(cursor string) ([]JournalTransaction, string, bool, error) {
		o.Cursor = cursor
		p, _, err := s.ListTransactions(ctx, &o)
		if err != nil {
			return nil, "", false, err
		}
		return p.Transactions, p.NextCursor, p.HasMore, nil
	}, o.Cursor, "GET /v1/journal/transactions")
}

// ListEntries reads one page of journal entries, oldest first: GET
// /v1/journal/entries. Without an AccountID each transaction is two
// entries, the customer account's first.
func (s *JournalService) ListEntries(ctx context.Context, opts *JournalListOptions) (*JournalEntryList, *Response, error) {
	page := new(JournalEntryList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/journal/entries", journalQuery(opts)), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// ListEntriesIter yields every entry from opts.Cursor on, following the
// pages. On an error it yields (nil, err) and stops.
func (s *JournalService) ListEntriesIter(ctx context.Context, opts *JournalListOptions) iter.Seq2[*JournalEntry, error] {
	o := JournalListOptions{}
	if opts != nil {
		o = *opts
	}
	return pages(func(cursor string) ([]JournalEntry, string, bool, error) {
		o.Cursor = cursor
		p, _, err := s.ListEntries(ctx, &o)
		if err != nil {
			return nil, "", false, err
		}
		return p.Entries, p.NextCursor, p.HasMore, nil
	}, o.Cursor, "GET /v1/journal/entries")
}

func journalQuery(o *JournalListOptions) url.Values {
	q := url.Values{}
	if o != nil {
		setAll(q, "accountID", o.AccountID, "cursor", o.Cursor)
		setTime(q, "from", o.From)
		setTime(q, "to", o.To)
		setLimit(q, o.Limit)
	}
	return q
}

// pages iterates over the items of pages that fetch reads from a cursor
// on, starting at first.
func pages[T any](fetch func(cursor string) ([]T, string, bool, error), first, route string) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := first
		for {
			items, next, more, err := fetch(cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range items {
				if !yield(&items[i], nil) {
					return
				}
			}
			if !more {
				return
			}
			if next == "" {
				yield(nil, fmt.Errorf("adminapi: %s answered hasMore without nextCursor", route))
				return
			}
			cursor = next
		}
	}
}

// setAll sets each name/value pair whose value is not empty.
func setAll(q url.Values, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
}

func setLimit(q url.Values, limit int) {
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
}

// setTime sets a non-zero time in UTC with its microseconds, the
// precision the server keeps.
func setTime(q url.Values, name string, t time.Time) {
	if !t.IsZero() {
		q.Set(name, t.UTC().Format(TimestampFormat))
	}
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
