package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Reading the ledger back: customer accounts a page at a time, the journal
// as transactions and as double-entry entries, and one account's statement
// for a period (tables accounts and journal, and their indexes: schema/schema.sql).
//
// Pages are keyset pages: a cursor is the position of the last row of the
// previous page, so a page costs the same at any depth and a row written
// between two pages never shifts another into or out of them.

const (
	// Accounts by account_id (byte order): the primary key. $1 the last
	// accountID of the previous page ('' from the start).
	listAccountsSQL = `SELECT ` + accountColumns + ` FROM accounts
WHERE kind = 'customer' AND account_id > $1 AND ($2 = '' OR currency = $2) AND ($3 = '' OR status = $3)
ORDER BY account_id
LIMIT $4`

	// The same within one owner: accounts_owner_idx.
	listAccountsByOwnerSQL = `SELECT ` + accountColumns + ` FROM accounts
WHERE kind = 'customer' AND owner_external_id = $5 AND account_id > $1 AND ($2 = '' OR currency = $2) AND ($3 = '' OR status = $3)
ORDER BY account_id
LIMIT $4`

	journalColumns = `transaction_id::text, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at`

	// Journal rows (one per transfer) in time order after the position
	// ($1, $2) and before $3; $4 the limit. Three filters, three
	// statements, so that each plan uses its index: none
	// (journal_time_idx), a customer account (journal_account_idx), a
	// system account (the other side of the row; journal_time_idx).
	journalSQL = `SELECT ` + journalColumns + ` FROM journal
WHERE (created_at, transaction_id) > ($1, $2::uuid) AND created_at < $3
ORDER BY created_at, transaction_id
LIMIT $4`
	journalByAccountSQL = `SELECT ` + journalColumns + ` FROM journal
WHERE account_id = $5 AND (created_at, transaction_id) > ($1, $2::uuid) AND created_at < $3
ORDER BY created_at, transaction_id
LIMIT $4`
	journalByContraSQL = `SELECT ` + journalColumns + ` FROM journal
WHERE contra_account_id = $5 AND (created_at, transaction_id) > ($1, $2::uuid) AND created_at < $3
ORDER BY created_at, transaction_id
LIMIT $4`

	// Every entry: each row twice, side 0 (the customer account, amount)
	// then side 1 (the system account, -amount), after the position ($1,
	// $2, $3) and before $4; $5 the limit.
	entriesSQL = `SELECT s.side, j.transaction_id::text, j.kind, j.reference, j.memo,
       CASE s.side WHEN 0 THEN j.account_id ELSE j.contra_account_id END,
       CASE s.side WHEN 0 THEN j.contra_account_id ELSE j.account_id END,
       j.currency, CASE s.side WHEN 0 THEN j.amount ELSE -j.amount END, j.created_at
FROM journal j CROSS JOIN (VALUES (0), (1)) AS s (side)
WHERE (j.created_at, j.transaction_id) >= ($1, $2::uuid) AND j.created_at < $4
  AND ((j.created_at, j.transaction_id) > ($1, $2::uuid) OR s.side > $3)
ORDER BY j.created_at, j.transaction_id, s.side
LIMIT $5`

	// A statement, in one snapshot: the balance before the period, the
	// period's totals, then its entries (journal_account_idx).
	statementOpeningSQL = `SELECT coalesce(sum(amount), 0) FROM journal WHERE account_id = $1 AND created_at < $2`
	statementTotalsSQL  = `SELECT coalesce(sum(amount) FILTER (WHERE amount > 0), 0), count(*) FILTER (WHERE amount > 0),
       coalesce(sum(amount) FILTER (WHERE amount < 0), 0), count(*) FILTER (WHERE amount < 0)
FROM journal WHERE account_id = $1 AND created_at >= $2 AND created_at < $3`
	statementEntriesSQL = `SELECT ` + journalColumns + ` FROM journal
WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
ORDER BY created_at, transaction_id`
)

// validate checks the options, fills the default limit and returns the
// accountID the page starts after.
func validateAccountList(o *ledger.AccountListOptions) (string, error) {
	if err := validLimit(&o.Limit); err != nil {
		return "", err
	}
	switch {
	case o.Currency != "" && !ledger.ValidCurrency(o.Currency):
		return "", ledger.Invalid("/currency", "currency must be an active ISO 4217 code")
	case o.Status != "" && !ledger.ValidStatus(o.Status):
		return "", ledger.Invalid("/status", "status must be open, frozen or closed")
	case !ledger.ValidText(o.OwnerExternalID):
		return "", ledger.Invalid("/ownerExternalID", "ownerExternalID must be valid UTF-8 without NUL")
	}
	if o.Cursor == "" {
		return "", nil
	}
	after, ok := decodeCursor(o.Cursor, cursorAccounts)
	if !ok || after == "" || !ledger.ValidText(after) {
		return "", errBadCursor
	}
	return after, nil
}

// ListAccounts returns customer accounts in accountID order, filtered by
// currency, status and owner, a page at a time.
func (db *DB) ListAccounts(ctx context.Context, o ledger.AccountListOptions) (ledger.AccountPage, error) {
	after, err := validateAccountList(&o)
	if err != nil {
		return ledger.AccountPage{}, err
	}
	sql, args := listAccountsSQL, []any{after, o.Currency, o.Status, o.Limit + 1}
	if o.OwnerExternalID != "" {
		sql, args = listAccountsByOwnerSQL, append(args, o.OwnerExternalID)
	}
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return ledger.AccountPage{}, interpret(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Account, error) { return scanAccount(r) })
	if err != nil {
		return ledger.AccountPage{}, interpret(err)
	}
	p := ledger.AccountPage{Accounts: list}
	if len(list) > o.Limit {
		p.Accounts, p.HasMore = list[:o.Limit], true
		p.NextCursor = encodeCursor(cursorAccounts, p.Accounts[o.Limit-1].AccountID)
	}
	if p.Accounts == nil {
		p.Accounts = []ledger.Account{}
	}
	return p, nil
}

// position is where a journal page resumes: after the entry (At, TxID,
// Side); Side is 0 for the customer side of a row, 1 for the system side.
type position struct {
	At   time.Time
	TxID string
	Side int
}

// Time bounds used when a range is open: inside Postgres's timestamptz
// range and outside any real journal.
var (
	timeFloor   = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	timeCeiling = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	// maxUUID orders after every transaction ID.
	maxUUID = "ffffffff-ffff-ffff-ffff-ffffffffffff"
)

// validate checks the options, fills defaults and returns the position
// the page starts after and the end of the range. kind is the cursor kind
// of the listing.
func validateJournal(o *ledger.JournalOptions, kind string) (position, time.Time, error) {
	if err := validLimit(&o.Limit); err != nil {
		return position{}, time.Time{}, err
	}
	if !ledger.ValidText(o.AccountID) {
		return position{}, time.Time{}, ledger.Invalid("/accountID", "accountID must be valid UTF-8 without NUL")
	}
	from, to, err := period(o.From, o.To, false)
	if err != nil {
		return position{}, time.Time{}, err
	}
	// Timestamps are kept to the microsecond: "at or after From" is
	// "after the last position one microsecond before it".
	start := position{At: from.Add(-time.Microsecond), TxID: maxUUID, Side: 1}
	if o.Cursor != "" {
		c, ok := decodePosition(o.Cursor, kind)
		if !ok {
			return position{}, time.Time{}, errBadCursor
		}
		if c.After(start) {
			start = c
		}
	}
	return start, to, nil
}

// After orders positions.
func (p position) After(q position) bool {
	if !p.At.Equal(q.At) {
		return p.At.After(q.At)
	}
	if p.TxID != q.TxID {
		return p.TxID > q.TxID // canonical lowercase UUIDs order as the uuid type does
	}
	return p.Side > q.Side
}

// period checks a range [from, to) and fills open ends; required: both
// must be given.
func period(from, to time.Time, required bool) (time.Time, time.Time, error) {
	switch {
	case required && from.IsZero():
		return from, to, ledger.Invalid("/from", "from is required")
	case required && to.IsZero():
		return from, to, ledger.Invalid("/to", "to is required")
	case !from.IsZero() && (from.Before(timeFloor) || !from.Before(timeCeiling)):
		return from, to, ledger.Invalid("/from", "from must be between years 1 and 9999")
	case !to.IsZero() && (to.Before(timeFloor) || to.After(timeCeiling)):
		return from, to, ledger.Invalid("/to", "to must be between years 1 and 9999")
	case !from.IsZero() && !to.IsZero() && to.Before(from):
		// from = to is the empty period: nothing in it, opening = closing.
		return from, to, ledger.Invalid("/to", "to must not be before from")
	}
	if from.IsZero() {
		from = timeFloor
	}
	if to.IsZero() {
		to = timeCeiling
	}
	return from.Truncate(time.Microsecond), to.Truncate(time.Microsecond), nil
}

// journalQuery picks the statement of the filter: the rows of the
// customer account, or of the system account (on their other side), or
// all. side is the side of the account's entries (0 customer, 1 system).
func journalQuery(accountID string) (sql string, side int) {
	switch {
	case accountID == "":
		return journalSQL, 0
	case ledger.HasSystemPrefix(accountID):
		return journalByContraSQL, 1
	}
	return journalByAccountSQL, 0
}

func (db *DB) journalRows(ctx context.Context, o ledger.JournalOptions, start position, to time.Time) ([]ledger.Transaction, int, error) {
	sql, side := journalQuery(o.AccountID)
	args := []any{start.At, start.TxID, to, o.Limit + 1}
	if o.AccountID != "" {
		args = append(args, o.AccountID)
	}
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, interpret(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Transaction, error) { return scanTransaction(r) })
	return list, side, interpret(err)
}

// ListTransactions returns journal transactions oldest first: all, or
// those of one account, created in the range, a page at a time.
func (db *DB) ListTransactions(ctx context.Context, o ledger.JournalOptions) (ledger.TransactionPage, error) {
	start, to, err := validateJournal(&o, cursorTransactions)
	if err != nil {
		return ledger.TransactionPage{}, err
	}
	// A transaction position is a row's: its side 1 is the row's last.
	start.Side = 1
	list, _, err := db.journalRows(ctx, o, start, to)
	if err != nil {
		return ledger.TransactionPage{}, err
	}
	p := ledger.TransactionPage{Transactions: list}
	if len(list) > o.Limit {
		p.Transactions, p.HasMore = list[:o.Limit], true
		last := p.Transactions[o.Limit-1]
		p.NextCursor = encodePosition(cursorTransactions, position{At: last.CreatedAt, TxID: last.TransactionID, Side: 1})
	}
	if p.Transactions == nil {
		p.Transactions = []ledger.Transaction{}
	}
	return p, nil
}

// ListEntries returns journal entries oldest first, a page at a time:
// those of one account (one per transaction), or all (two per
// transaction, the customer account's first), created in the range.
func (db *DB) ListEntries(ctx context.Context, o ledger.JournalOptions) (ledger.EntryPage, error) {
	start, to, err := validateJournal(&o, cursorEntries)
	if err != nil {
		return ledger.EntryPage{}, err
	}
	var list []ledger.Entry
	if o.AccountID != "" {
		// One entry per row: its position is the row's.
		start.Side = 1
		txs, side, err := db.journalRows(ctx, o, start, to)
		if err != nil {
			return ledger.EntryPage{}, err
		}
		list = make([]ledger.Entry, len(txs))
		for i, t := range txs {
			list[i] = t.Entries[side]
		}
	} else {
		rows, err := db.pool.Query(ctx, entriesSQL, start.At, start.TxID, start.Side, to, o.Limit+1)
		if err != nil {
			return ledger.EntryPage{}, interpret(err)
		}
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Entry, error) {
			var e ledger.Entry
			var side int
			err := r.Scan(&side, &e.TransactionID, &e.Kind, &e.Reference, &e.Memo, &e.AccountID, &e.ContraAccountID,
				&e.Currency, &e.Amount, &e.CreatedAt)
			return e, err
		})
		if err != nil {
			return ledger.EntryPage{}, interpret(err)
		}
	}
	p := ledger.EntryPage{Entries: list}
	if len(list) > o.Limit {
		p.Entries, p.HasMore = list[:o.Limit], true
		last := p.Entries[o.Limit-1]
		side := 0
		if o.AccountID != "" || ledger.HasSystemPrefix(last.AccountID) {
			side = 1 // the row's last entry of this listing
		}
		p.NextCursor = encodePosition(cursorEntries, position{At: last.CreatedAt, TxID: last.TransactionID, Side: side})
	}
	if p.Entries == nil {
		p.Entries = []ledger.Entry{}
	}
	return p, nil
}

func scanTransaction(r pgx.Row) (ledger.Transaction, error) {
	var t ledger.Transaction
	var customer, system string
	var amount decimal.Decimal
	err := r.Scan(&t.TransactionID, &t.Kind, &t.Reference, &t.Memo, &customer, &system, &t.Currency, &amount, &t.CreatedAt)
	e := ledger.Entry{TransactionID: t.TransactionID, Currency: t.Currency, Kind: t.Kind, Reference: t.Reference, Memo: t.Memo, CreatedAt: t.CreatedAt}
	t.Entries[0], t.Entries[1] = e, e
	t.Entries[0].AccountID, t.Entries[0].ContraAccountID, t.Entries[0].Amount = customer, system, amount
	t.Entries[1].AccountID, t.Entries[1].ContraAccountID, t.Entries[1].Amount = system, customer, amount.Neg()
	return t, err
}

// errStatementDrift: the entries read did not add up to the totals read in
// the same snapshot. It cannot happen; if it does, the statement is
// abandoned rather than sent wrong.
var errStatementDrift = errors.New("store: a statement's entries do not add up to its totals")

// Statement reads a customer account's statement for a period in one
// consistent snapshot: summary is called once, with the opening and
// closing balances and the period's totals, then entry for each of the
// period's entries, oldest first. An error from either stops the reading
// and is returned. After the last entry the entries are checked against
// the totals: the same sums computed twice, by the database and here.
func (db *DB) Statement(ctx context.Context, o ledger.StatementOptions, summary func(ledger.StatementSummary) error, entry func(ledger.Entry) error) error {
	from, to, err := period(o.From, o.To, true)
	if err != nil {
		return err
	}
	if !ledger.ValidText(o.AccountID) {
		return ledger.Invalid("/accountID", "accountID must be valid UTF-8 without NUL")
	}
	return db.snapshot(ctx, func(tx pgx.Tx) error {
		s := ledger.StatementSummary{From: from, To: to}
		var err error
		if s.Account, err = getAccount(ctx, tx, o.AccountID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, statementOpeningSQL, o.AccountID, from).Scan(&s.Opening); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, statementTotalsSQL, o.AccountID, from, to).
			Scan(&s.Credits, &s.CreditCount, &s.Debits, &s.DebitCount); err != nil {
			return err
		}
		s.Closing = s.Opening.Add(s.Credits).Add(s.Debits)
		if err := summary(s); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, statementEntriesSQL, o.AccountID, from, to)
		if err != nil {
			return err
		}
		defer rows.Close()
		sum, n := decimal.Zero, int64(0)
		for rows.Next() {
			t, err := scanTransaction(rows)
			if err != nil {
				return err
			}
			sum, n = sum.Add(t.Entries[0].Amount), n+1
			if err := entry(t.Entries[0]); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != s.Count() || !sum.Equal(s.Credits.Add(s.Debits)) {
			return fmt.Errorf("%w: %d entries summing to %s, totals %d and %s", errStatementDrift, n, sum, s.Count(), s.Credits.Add(s.Debits))
		}
		return nil
	})
}

func validLimit(limit *int) error {
	if *limit == 0 {
		*limit = ledger.DefaultLimit
	}
	if *limit < 1 || *limit > ledger.MaxLimit {
		return ledger.Invalid("/limit", "limit must be 1 to %d", ledger.MaxLimit)
	}
	return nil
}

// Cursors are opaque to callers: the base64url of a kind and the position,
// so that a cursor of one listing is refused by another.
const (
	cursorAccounts     = "a1"
	cursorTransactions = "t1"
	cursorEntries      = "e1"
)

var errBadCursor = ledger.Invalid("/cursor", "cursor is malformed, or from another listing")

func encodeCursor(kind, payload string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + payload))
}

func decodeCursor(c, kind string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(b), kind+"|")
}

func encodePosition(kind string, p position) string {
	return encodeCursor(kind, strconv.FormatInt(p.At.UnixMicro(), 10)+"|"+p.TxID+"|"+strconv.Itoa(p.Side))
}

func decodePosition(c, kind string) (position, bool) {
	payload, ok := decodeCursor(c, kind)
	if !ok {
		return position{}, false
	}
	parts := strings.Split(payload, "|")
	if len(parts) != 3 {
		return position{}, false
	}
	us, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return position{}, false
	}
	id, err := uuid.Parse(parts[1])
	if err != nil || id.String() != parts[1] {
		return position{}, false
	}
	side, err := strconv.Atoi(parts[2])
	if err != nil || (side != 0 && side != 1) {
		return position{}, false
	}
	at := time.UnixMicro(us).UTC()
	if at.Before(timeFloor) || at.After(timeCeiling) {
		return position{}, false
	}
	return position{At: at, TxID: parts[1], Side: side}, true
}
