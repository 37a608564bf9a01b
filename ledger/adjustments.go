package ledger

import (
	"github.com/shopspring/decimal"
)

// Adjustment is the result of an adjustment from the core banking system.
type Adjustment struct {
	TransactionID string          `json:"transactionID"`
	Balance       decimal.Decimal `json:"balance"`
	Held          decimal.Decimal `json:"held"`
	Available     decimal.Decimal `json:"available"`
	Replayed      bool            `json:"-"`
}

// ValidateAdjustment checks an adjustment's key, amount and memo.
func ValidateAdjustment(amount decimal.Decimal, key, memo string) error {
	switch {
	case key == "" || len(key) > 255:
		return Invalid("/idempotencyKey", "idempotencyKey must be 1 to 255 characters")
	case !ValidText(key):
		return Invalid("/idempotencyKey", "idempotencyKey must be valid UTF-8 without NUL")
	case amount.IsZero():
		return Invalid("/amount", "amount must not be zero")
	case len(memo) > 1024:
		return Invalid("/memo", "memo must be at most 1024 characters")
	case !ValidText(memo):
		return Invalid("/memo", "memo must be valid UTF-8 without NUL")
	}
	return nil
}
