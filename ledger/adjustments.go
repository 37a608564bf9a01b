package ledger

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// Adjustment is the result of Adjust.
type Adjustment struct {
	TransactionID uuid.UUID       `json:"transactionID"`
	Balance       decimal.Decimal `json:"balance"`
	Held          decimal.Decimal `json:"held"`
	Available     decimal.Decimal `json:"available"`
	Replayed      bool            `json:"-"`
}

const adjust = `SELECT transaction_id, replayed FROM ledger_adjust($1, $2, $3, $4, $5, $6)`

// Adjust moves an account's balance by a signed amount from the core
// banking system, journaled against core:<CUR>. It is idempotent by key
// within the account: the same key with the same amount and memo returns the first
// transaction (Replayed true); with anything else it is
// ErrIdempotencyMismatch. A debit that would take available below zero is
// ErrInsufficientAvailable; a closed account is ErrAccountClosed.
func (s *Store) Adjust(ctx context.Context, accountID string, amount decimal.Decimal, key, memo string) (Adjustment, error) {
	switch {
	case key == "" || len(key) > 255:
		return Adjustment{}, Invalid("/idempotencyKey", "idempotencyKey must be 1 to 255 characters")
	case amount.IsZero():
		return Adjustment{}, Invalid("/amount", "amount must not be zero")
	case len(memo) > 1024:
		return Adjustment{}, Invalid("/memo", "memo must be at most 1024 characters")
	}
	var out Adjustment
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, adjust, accountID, amount, key, memo, uuid.New(), s.now()).
			Scan(&out.TransactionID, &out.Replayed); err != nil {
			return err
		}
		a, err := GetAccount(ctx, tx, accountID)
		out.Balance, out.Held, out.Available = a.Balance, a.Held, a.Available
		return err
	})
	return out, translate(err)
}
