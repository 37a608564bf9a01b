package ledger

import (
	"strconv"

	"github.com/mtibben/confusables"
)

// Skeleton returns the confusable skeleton of an account ID (UTS #39,
// section 4): NFD, each character replaced by its prototype in Unicode's
// confusables table, NFD again. Two IDs print alike when their skeletons
// are equal: "paypal", "paypaI" and "paypa1" share one, as do "bıll" and
// "bill", and "modem" and "rnodem". UTS #39's step that drops default
// ignorable code points is moot here: ValidateNewAccount refuses them.
// The skeleton is for comparison only, never shown or stored as an ID.
func Skeleton(id string) string { return confusables.Skeleton(id) }

// ErrAccountIDConfusable is the error of an account ID whose skeleton is
// another account's; AccountIDConfusable names that account.
var ErrAccountIDConfusable = &Error{Code: CodeConflict, Slug: "account-id-confusable",
	Message: "the accountID prints like an existing account's"}

// AccountIDConfusable returns ErrAccountIDConfusable naming the existing
// account whose ID prints like the one asked for.
func AccountIDConfusable(existing string) *Error {
	e := *ErrAccountIDConfusable
	e.Message = "the accountID prints like that of the existing account " + quoteID(existing) + " (the same confusable skeleton, UTS #39)"
	e.Pointer = "/accountID"
	return &e
}

// quoteID quotes an account ID for a message, escaping what is not
// printable ASCII so that the reader sees how it differs.
func quoteID(id string) string {
	return strconv.QuoteToASCII(id)
}
