package ledger

import (
	"time"

	"github.com/shopspring/decimal"
)

// Reading the ledger back: customer accounts a page at a time, the journal
// as transactions and as double-entry entries, and one account's statement
// for a period. Pages are keyset pages: a cursor (opaque to callers) is the
// position of the last row of the previous page, so a page costs the same at
// any depth and a row written between two pages never shifts another into
// or out of them.

// DefaultLimit and MaxLimit bound the page size of the listings.
const (
	DefaultLimit = 25
	MaxLimit     = 100
)

// AccountListOptions filter and page GET /v1/accounts: customer accounts
// in accountID order (byte order).
type AccountListOptions struct {
	Currency        string // "" any
	Status          string // "" any; open, frozen or closed
	OwnerExternalID string // "" any
	Cursor          string // NextCursor of the previous page
	Limit           int    // 1 to MaxLimit; 0 DefaultLimit
}

// AccountPage is one page of accounts.
type AccountPage struct {
	Accounts   []Account
	NextCursor string
	HasMore    bool
}

// Journal entry kinds (the kind of the transaction).
const (
	JournalAdjustment     = "adjustment"     // from the core banking system, against core:<CUR>
	JournalCapture        = "capture"        // a captured hold, against settlement:<CUR>
	JournalCredit         = "credit"         // a credit-account, against settlement:<CUR>
	JournalReconciliation = "reconciliation" // a capture applied by reconciliation's fix
)

// Entry is one side of a journal transaction: what it did to one account.
type Entry struct {
	TransactionID string
	// AccountID is the account this entry moves; ContraAccountID the
	// other side of the transaction.
	AccountID       string
	ContraAccountID string
	Currency        string
	// Amount is signed: the change of AccountID's balance (positive a
	// credit, negative a debit). The transaction's other entry is its
	// negation.
	Amount    decimal.Decimal
	Kind      string
	Reference string // the holdReference's capture, the creditReference, the adjustment's key
	Memo      string // the payoutID, the requestID, the adjustment's memo
	CreatedAt time.Time
}

// Transaction is a journal transaction: one transfer between a customer
// account and a system account, as its two entries.
type Transaction struct {
	TransactionID string
	Kind          string
	Reference     string
	Memo          string
	Currency      string
	CreatedAt     time.Time
	// Entries are the customer account's entry, then the system
	// account's; their amounts sum to zero.
	Entries [2]Entry
}

// JournalOptions filter and page the journal listings: oldest first,
// created in [From, To).
//
// A transaction is stamped when its request started and becomes visible
// when it commits, up to the request timeout later (more with clocks of
// several replicas apart): a reader that follows the journal as it grows
// sets To a few minutes in the past, and moves it on.
type JournalOptions struct {
	// AccountID keeps the entries (transactions) of one account: a
	// customer account or a system account (settlement:USD, core:USD).
	// "" keeps all.
	AccountID string
	From, To  time.Time // zero: unbounded
	Cursor    string    // NextCursor of the previous page
	Limit     int       // 1 to MaxLimit; 0 DefaultLimit
}

// TransactionPage is one page of transactions.
type TransactionPage struct {
	Transactions []Transaction
	NextCursor   string
	HasMore      bool
}

// EntryPage is one page of entries.
type EntryPage struct {
	Entries    []Entry
	NextCursor string
	HasMore    bool
}

// StatementOptions name an account and a period [From, To), both required.
type StatementOptions struct {
	AccountID string
	From, To  time.Time
}

// StatementSummary is what a statement says before its entries.
type StatementSummary struct {
	// Account is the account as it is now (its balance is today's).
	Account  Account
	From, To time.Time
	// Opening is the balance at From: the sum of the account's entries
	// before it. Closing is the balance at To: Opening + Credits + Debits.
	Opening, Closing decimal.Decimal
	// Credits (≥ 0) and Debits (≤ 0) sum the period's entries by sign.
	Credits, Debits         decimal.Decimal
	CreditCount, DebitCount int64
}

// Count is the number of entries in the period.
func (s StatementSummary) Count() int64 { return s.CreditCount + s.DebitCount }
