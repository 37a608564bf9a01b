package ledger

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"
)

// Account statuses.
const (
	StatusOpen   = "open"
	StatusFrozen = "frozen"
	StatusClosed = "closed"
)

// Account kinds: customer accounts, and the two system accounts of each
// currency (settlement:<CUR>, core:<CUR>).
const (
	KindCustomer   = "customer"
	KindSettlement = "settlement"
	KindCore       = "core"
)

// Account is a customer account.
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

// NewAccount is the input of account creation.
type NewAccount struct {
	AccountID       string
	OwnerExternalID string
	Currency        string
	Status          string // default open
}

// maxAccountIDLen and maxExternalIDLen bound identifiers, in characters.
const (
	maxAccountIDLen  = 128
	maxExternalIDLen = 256
)

// ValidateNewAccount checks a NewAccount's fields and fills defaults.
func ValidateNewAccount(n *NewAccount) error {
	switch {
	case n.AccountID == "" || utf8.RuneCountInString(n.AccountID) > maxAccountIDLen:
		return Invalid("/accountID", "accountID must be 1 to %d characters", maxAccountIDLen)
	case !utf8.ValidString(n.AccountID) || strings.ContainsFunc(n.AccountID, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return Invalid("/accountID", "accountID must not contain a slash, white space or control characters")
	case strings.ContainsFunc(n.AccountID, func(r rune) bool { return unicode.Is(unicode.Cf, r) }):
		// Zero-width characters, bidirectional controls, soft hyphens: an
		// ID that prints like another's, or reorders a log line.
		return Invalid("/accountID", "accountID must not contain invisible format characters (zero-width, bidirectional controls)")
	case !norm.NFC.IsNormalString(n.AccountID):
		// "é" as one character or as "e" and a combining accent would be
		// two accounts that look the same: one spelling is accepted.
		return Invalid("/accountID", "accountID must be in Unicode normalization form C (composed characters)")
	case checkIdentifier(n.AccountID) != nil:
		return Invalid("/accountID", "accountID %v", checkIdentifier(n.AccountID))
	case HasSystemPrefix(n.AccountID) || looksLikeSystemID(n.AccountID):
		return Invalid("/accountID", "accountID must not start with settlement: or core:, nor with anything that prints like them")
	case n.OwnerExternalID == "" || utf8.RuneCountInString(n.OwnerExternalID) > maxExternalIDLen:
		return Invalid("/ownerExternalID", "ownerExternalID must be 1 to %d characters", maxExternalIDLen)
	case !ValidText(n.OwnerExternalID):
		return Invalid("/ownerExternalID", "ownerExternalID must be valid UTF-8 without NUL")
	case !ValidCurrency(n.Currency):
		return Invalid("/currency", "currency must be an active ISO 4217 code")
	}
	if n.Status == "" {
		n.Status = StatusOpen
	}
	if !ValidStatus(n.Status) {
		return Invalid("/status", "status must be open, frozen or closed")
	}
	return nil
}

// HasSystemPrefix reports whether id names a system account.
func HasSystemPrefix(id string) bool {
	return strings.HasPrefix(id, KindSettlement+":") || strings.HasPrefix(id, KindCore+":")
}

// looksLikeSystemID reports whether id's confusable skeleton starts with
// a system account's prefix ("settIement:EUR" with a capital I): system
// accounts have no stored skeleton to collide with.
func looksLikeSystemID(id string) bool {
	sk := Skeleton(id)
	return strings.HasPrefix(sk, Skeleton(KindSettlement+":")) || strings.HasPrefix(sk, Skeleton(KindCore+":"))
}

// ValidStatus reports whether s is an account status.
func ValidStatus(s string) bool {
	return s == StatusOpen || s == StatusFrozen || s == StatusClosed
}

// ValidText reports whether s can be stored as Postgres text: valid UTF-8
// without NUL.
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
