package ledger

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
)

// Account statuses.
const (
	StatusOpen   = "open"
	StatusFrozen = "frozen"
	StatusClosed = "closed"
)

// Account is a customer account as the admin API shows it.
type Account struct {
	AccountID       string          `json:"accountID"`
	OwnerExternalID string          `json:"ownerExternalID"`
	Currency        string          `json:"currency"`
	Balance         decimal.Decimal `json:"balance"`
	Held            decimal.Decimal `json:"held"`
	Available       decimal.Decimal `json:"available"`
	Status          string          `json:"status"`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
}

// NewAccount is the input of CreateAccount.
type NewAccount struct {
	AccountID       string
	OwnerExternalID string
	Currency        string
	Status          string // default open
}

// Store is the ledger's store over a connection pool. Each exported method
// is one transaction.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewStore returns a Store on pool. now is the clock; nil means time.Now.
func NewStore(pool *pgxpool.Pool, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{pool: pool, now: now}
}

const (
	selectAccount = `SELECT account_id, owner_external_id, currency, balance, held, status, created_at, updated_at
FROM accounts WHERE account_id = $1 AND kind = 'customer'`

	// No conflict arbiter: the account conflicts on its primary key and on
	// (account_id, currency) at once, and either means it exists.
	insertAccount = `INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at)
VALUES ($1, $2, $3, 'customer', $4, $5, $5)
ON CONFLICT DO NOTHING
RETURNING account_id, owner_external_id, currency, balance, held, status, created_at, updated_at`

	ensureSystemAccounts = `SELECT ledger_ensure_system_accounts($1, $2)`

	updateAccountStatus = `UPDATE accounts SET status = $2, updated_at = $3
WHERE account_id = $1 AND kind = 'customer'
RETURNING account_id, owner_external_id, currency, balance, held, status, created_at, updated_at`
)

func scanAccount(row pgx.Row) (Account, error) {
	var a Account
	err := row.Scan(&a.AccountID, &a.OwnerExternalID, &a.Currency, &a.Balance, &a.Held, &a.Status, &a.CreatedAt, &a.UpdatedAt)
	a.Available = a.Balance.Sub(a.Held)
	return a, err
}

// ValidateNewAccount checks a NewAccount's fields and fills defaults.
func ValidateNewAccount(n *NewAccount) error {
	switch {
	case n.AccountID == "" || utf8.RuneCountInString(n.AccountID) > 128 || !utf8.ValidString(n.AccountID):
		return Invalid("/accountID", "accountID must be 1 to 128 characters")
	case strings.ContainsFunc(n.AccountID, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return Invalid("/accountID", "accountID must not contain a slash, white space or control characters")
	case hasSystemPrefix(n.AccountID):
		return Invalid("/accountID", "accountID must not start with settlement: or core:")
	case n.OwnerExternalID == "" || utf8.RuneCountInString(n.OwnerExternalID) > 256 || !utf8.ValidString(n.OwnerExternalID):
		return Invalid("/ownerExternalID", "ownerExternalID must be 1 to 256 characters")
	case !ValidCurrency(n.Currency):
		return Invalid("/currency", "currency must be an active ISO 4217 code")
	}
	if n.Status == "" {
		n.Status = StatusOpen
	}
	if !validStatus(n.Status) {
		return Invalid("/status", "status must be open, frozen or closed")
	}
	return nil
}

func hasSystemPrefix(id string) bool {
	for _, p := range []string{"settlement:", "core:"} {
		if len(id) >= len(p) && id[:len(p)] == p {
			return true
		}
	}
	return false
}

func validStatus(s string) bool {
	return s == StatusOpen || s == StatusFrozen || s == StatusClosed
}

// CreateAccount opens a customer account, creating its currency's system
// accounts on first use. An existing accountID is ErrAccountExists.
func (s *Store) CreateAccount(ctx context.Context, n NewAccount) (Account, error) {
	if err := ValidateNewAccount(&n); err != nil {
		return Account{}, err
	}
	var a Account
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		now := s.now()
		if _, err := tx.Exec(ctx, ensureSystemAccounts, n.Currency, now); err != nil {
			return err
		}
		var err error
		a, err = scanAccount(tx.QueryRow(ctx, insertAccount, n.AccountID, n.OwnerExternalID, n.Currency, n.Status, now))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrAccountExists
		}
		return err
	})
	return a, translate(err)
}

// GetAccount reads a customer account.
func (s *Store) GetAccount(ctx context.Context, accountID string) (Account, error) {
	return GetAccount(ctx, s.pool, accountID)
}

// GetAccount reads a customer account through q.
func GetAccount(ctx context.Context, q DBTX, accountID string) (Account, error) {
	a, err := scanAccount(q.QueryRow(ctx, selectAccount, accountID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, ErrAccountNotFound
	}
	return a, translate(err)
}

// SetStatus moves an account between open and frozen, or closes it. Closed
// is final: a closed account cannot be reopened or frozen. Holds placed
// before a freeze or close can still be captured or released.
func (s *Store) SetStatus(ctx context.Context, accountID, status string) (Account, error) {
	if !validStatus(status) {
		return Account{}, Invalid("/status", "status must be open, frozen or closed")
	}
	var a Account
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		cur, err := scanAccount(tx.QueryRow(ctx, selectAccount+" FOR NO KEY UPDATE", accountID))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrAccountNotFound
		}
		if err != nil {
			return err
		}
		if cur.Status == StatusClosed && status != StatusClosed {
			return ErrAccountClosed
		}
		a, err = scanAccount(tx.QueryRow(ctx, updateAccountStatus, accountID, status, s.now()))
		return err
	})
	return a, translate(err)
}
