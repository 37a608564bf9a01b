package ledger

import (
	"unicode/utf8"

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

// ValidateAdjustment checks an adjustment's key, amount and memo. Lengths
// are in characters, as the database's length() and the admin API's
// maxLength count them, not bytes.
func ValidateAdjustment(amount decimal.Decimal, key, memo string) error {
	switch {
	case key == "" || utf8.RuneCountInString(key) > 255:
		return Invalid("/idempotencyKey", "idempotencyKey must be 1 to 255 characters")
	case !ValidText(key):
		return Invalid("/idempotencyKey", "idempotencyKey must be valid UTF-8 without NUL")
	case amount.IsZero():
		return Invalid("/amount", "amount must not be zero")
	case utf8.RuneCountInString(memo) > 1024:
		return Invalid("/memo", "memo must be at most 1024 characters")
	case !ValidText(memo):
		return Invalid("/memo", "memo must be valid UTF-8 without NUL")
	}
	return nil
}
