package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Accounts, instruments and adjustments (tables accounts, instruments,
// adjustments; function ledger_adjust).
const (
	accountColumns = `account_id, owner_external_id, currency, balance, held, status, created_at, updated_at`

	selectAccountSQL = `SELECT ` + accountColumns + ` FROM accounts WHERE account_id = $1 AND kind = 'customer'`

	// No conflict arbiter: an existing primary key means the account
	// exists, an existing skeleton (accounts_skeleton_key) that another
	// account's ID prints like this one.
	insertAccountSQL = `INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at, skeleton)
VALUES ($1, $2, $3, 'customer', $4, $5, $5, $6)
ON CONFLICT DO NOTHING
RETURNING ` + accountColumns

	ensureSystemAccountsSQL = `SELECT ledger_ensure_system_accounts($1, $2)`

	updateAccountStatusSQL = `UPDATE accounts SET status = $2, updated_at = $3
WHERE account_id = $1 AND kind = 'customer'
RETURNING ` + accountColumns

	insertInstrumentSQL = `INSERT INTO instruments (token, kind, account_id, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (token) DO NOTHING
RETURNING token, kind, account_id, created_at`

	selectInstrumentSQL = `SELECT token, kind, account_id, created_at FROM instruments WHERE token = $1`

	adjustSQL = `SELECT transaction_id::text, replayed FROM ledger_adjust(p_account_id => $1, p_amount => $2, p_key => $3,
p_memo => $4, p_transaction_id => $5, p_now => $6)`
)

func scanAccount(row pgx.Row) (ledger.Account, error) {
	var a ledger.Account
	err := row.Scan(&a.AccountID, &a.OwnerExternalID, &a.Currency, &a.Balance, &a.Held, &a.Status, &a.CreatedAt, &a.UpdatedAt)
	a.Available = a.Balance.Sub(a.Held)
	return a, err
}

// CreateAccount opens a customer account, creating its currency's system
// accounts on first use. An existing accountID is ledger.ErrAccountExists;
// an ID that prints like an existing account's (the same confusable
// skeleton, ledger.Skeleton) is ledger.ErrAccountIDConfusable, naming that
// account.
func (db *DB) CreateAccount(ctx context.Context, n ledger.NewAccount) (ledger.Account, error) {
	if err := ledger.ValidateNewAccount(&n); err != nil {
		return ledger.Account{}, err
	}
	var a ledger.Account
	err := db.tx(ctx, func(tx pgx.Tx) error {
		now := db.now()
		if _, err := tx.Exec(ctx, ensureSystemAccountsSQL, n.Currency, now); err != nil {
			return err
		}
		sk := ledger.Skeleton(n.AccountID)
		if err := checkUnfilledSkeletons(ctx, tx, n.AccountID, sk); err != nil {
			return err
		}
		var err error
		a, err = scanAccount(tx.QueryRow(ctx, insertAccountSQL, n.AccountID, n.OwnerExternalID, n.Currency, n.Status, now, sk))
		if errors.Is(err, pgx.ErrNoRows) {
			return existingAccount(ctx, tx, n.AccountID, sk)
		}
		return err
	})
	return a, err
}

// GetAccount reads a customer account.
func (db *DB) GetAccount(ctx context.Context, accountID string) (ledger.Account, error) {
	if !ledger.ValidText(accountID) {
		return ledger.Account{}, ledger.ErrAccountNotFound
	}
	return getAccount(ctx, db.querier(ctx), accountID)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func getAccount(ctx context.Context, q querier, accountID string) (ledger.Account, error) {
	a, err := scanAccount(q.QueryRow(ctx, selectAccountSQL, accountID))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Account{}, ledger.ErrAccountNotFound
	}
	return a, interpret(err)
}

// SetAccountStatus moves an account between open and frozen, or closes it.
// Closed is final: a closed account cannot be reopened or frozen. Holds
// placed before a freeze or close can still be captured or released.
func (db *DB) SetAccountStatus(ctx context.Context, accountID, status string) (ledger.Account, error) {
	if !ledger.ValidStatus(status) {
		return ledger.Account{}, ledger.Invalid("/status", "status must be open, frozen or closed")
	}
	if !ledger.ValidText(accountID) {
		return ledger.Account{}, ledger.ErrAccountNotFound
	}
	var a ledger.Account
	err := db.tx(ctx, func(tx pgx.Tx) error {
		cur, err := scanAccount(tx.QueryRow(ctx, selectAccountSQL+" FOR NO KEY UPDATE", accountID))
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.ErrAccountNotFound
		}
		if err != nil {
			return err
		}
		if cur.Status == ledger.StatusClosed && status != ledger.StatusClosed {
			return ledger.ErrAccountClosed
		}
		a, err = scanAccount(tx.QueryRow(ctx, updateAccountStatusSQL, accountID, status, db.now()))
		return err
	})
	return a, err
}

// AddInstrument maps a token to an account. Registering the same mapping
// again returns it with created false; a token mapped otherwise is
// ledger.ErrInstrumentConflict; an unknown account is
// ledger.ErrAccountNotFound.
func (db *DB) AddInstrument(ctx context.Context, in ledger.Instrument) (ledger.Instrument, bool, error) {
	if err := ledger.ValidateInstrument(in); err != nil {
		return ledger.Instrument{}, false, err
	}
	var out ledger.Instrument
	var created bool
	err := db.tx(ctx, func(tx pgx.Tx) error {
		created = false
		if _, err := getAccount(ctx, tx, in.AccountID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, insertInstrumentSQL, in.Token, in.Kind, in.AccountID, db.now()).
			Scan(&out.Token, &out.Kind, &out.AccountID, &out.CreatedAt)
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := tx.QueryRow(ctx, selectInstrumentSQL, in.Token).
			Scan(&out.Token, &out.Kind, &out.AccountID, &out.CreatedAt); err != nil {
			return err
		}
		if out.Kind != in.Kind || out.AccountID != in.AccountID {
			return ledger.ErrInstrumentConflict
		}
		return nil
	})
	return out, created, err
}

// Adjust moves an account's balance by a signed amount from the core
// banking system, journaled against core:<CUR>. It is idempotent by key
// within the account: the same key with the same amount and memo returns
// the first transaction (Replayed true); with anything else it is
// ledger.ErrIdempotencyMismatch. A debit that would take available below
// zero is ledger.ErrInsufficientAvailable; a closed account is
// ledger.ErrAccountClosed.
func (db *DB) Adjust(ctx context.Context, accountID string, amount decimal.Decimal, key, memo string) (ledger.Adjustment, error) {
	if err := ledger.ValidateAdjustment(amount, key, memo); err != nil {
		return ledger.Adjustment{}, err
	}
	if !ledger.ValidText(accountID) {
		return ledger.Adjustment{}, ledger.ErrAccountNotFound
	}
	var out ledger.Adjustment
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, adjustSQL, accountID, amount, key, memo, ledger.NewTransactionID(), db.now()).
			Scan(&out.TransactionID, &out.Replayed); err != nil {
			return err
		}
		a, err := getAccount(ctx, tx, accountID)
		out.Balance, out.Held, out.Available = a.Balance, a.Held, a.Available
		return err
	})
	return out, err
}
