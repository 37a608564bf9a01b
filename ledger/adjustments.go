package ledger

import (
	"time"
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

// Dual control (table adjustment_requests, function
// ledger_adjustment_decide): an adjustment whose absolute amount is over
// the approval threshold waits, moving no money, until an actor other than
// its maker approves it.

// The states of an adjustment under dual control. Expired is not stored:
// a pending adjustment at or past its ExpiresAt is expired.
const (
	AdjustmentPending  = "pending"
	AdjustmentPosted   = "posted"
	AdjustmentRejected = "rejected"
	AdjustmentExpired  = "expired"
)

// AdjustmentApplied is what ledger_adjustment_decide answers for an
// adjustment it handed to ledger_adjust at once (dual control off, or the
// amount not over the threshold): no request was made, the money moved.
const AdjustmentApplied = "adjusted"

// AdjustmentParams is an adjustment requested through the admin API.
type AdjustmentParams struct {
	AccountID string
	Amount    decimal.Decimal
	Key, Memo string
	// ApprovalOver: an adjustment whose absolute amount is over it waits
	// for approval. Nil: dual control is off.
	ApprovalOver *decimal.Decimal
	// TTL is how long a pending adjustment waits before it expires.
	TTL   time.Duration
	Actor Actor
	Now   time.Time
}

// AdjustmentOutcome is what an adjustment request did: one of the two is
// set.
type AdjustmentOutcome struct {
	// Applied is an adjustment applied at once (or replayed).
	Applied *Adjustment
	// Pending is an adjustment held for approval (or a replay of one, in
	// whatever state it is now).
	Pending *PendingAdjustment
}

// PendingAdjustment is an adjustment under dual control, in any of its
// states.
type PendingAdjustment struct {
	AdjustmentID   string
	AccountID      string
	Currency       string
	Amount         decimal.Decimal
	IdempotencyKey string
	Memo           string
	// Status is AdjustmentPending, AdjustmentPosted, AdjustmentRejected or
	// AdjustmentExpired (as of the read).
	Status                 string
	MakerID, MakerName     string
	RequestedAt, ExpiresAt time.Time
	// CheckerID and CheckerName: who posted or rejected it.
	CheckerID, CheckerName string
	DecidedAt              *time.Time
	Note                   string
	// TransactionID is the journal transaction of a posted adjustment.
	TransactionID string
	// Replayed: this answer repeats an earlier request's or decision's.
	Replayed bool
}

// AdjustmentDecision is an approval or a rejection.
type AdjustmentDecision struct {
	AdjustmentID string
	Approve      bool
	Note         string
	Actor        Actor
	Now          time.Time
}

// PendingListOptions are the filters of a page of adjustments under dual
// control, newest first.
type PendingListOptions struct {
	AccountID string
	Status    string // one of the Adjustment… states; "" any
	Cursor    string
	Limit     int
	Now       time.Time // what expired means
}

// PendingPage is one page of adjustments under dual control.
type PendingPage struct {
	Adjustments []PendingAdjustment
	NextCursor  string
	HasMore     bool
}

// Dual control's refusals.
var (
	ErrAdjustmentNotFound = &Error{Code: CodeNotFound, Slug: "adjustment-not-found", Message: "no adjustment awaits approval under this adjustmentID"}
	ErrAdjustmentRejected = &Error{Code: CodeConflict, Slug: "adjustment-rejected", Message: "the adjustment was rejected; request it again under a new key"}
	ErrAdjustmentExpired  = &Error{Code: CodeConflict, Slug: "adjustment-expired", Message: "the adjustment expired before it was approved; request it again under a new key"}
	ErrAdjustmentPosted   = &Error{Code: CodeConflict, Slug: "adjustment-posted", Message: "the adjustment was posted; it can no longer be rejected"}
	ErrMakerCannotApprove = &Error{Code: CodeForbidden, Slug: "maker-cannot-approve", Message: "an adjustment is approved by an actor other than its maker"}
)
