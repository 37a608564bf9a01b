package holds

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// AuthorizeParams are the arguments of the authorize decision
// (cb_authorize, contract §2.3): the payout's business claims, the
// idempotency key with the fingerprint of those claims, the fraud
// thresholds, and the reference a hold placed now takes.
type AuthorizeParams struct {
	Key            string          // the idempotency key: a key seen answers what it answered first (row 1)
	Fingerprint    []byte          // SHA-256 of the business claims (AuthorizeRequest.Fingerprint): the same key with others is row 1a
	KeyFingerprint string          // of the signing secret that opened the request, stored with the answer
	CallerSubject  *string         // the caller's subject: audit only, stored, never decided on (nil: not given)
	AuditRequestID *string         // the requestID claim: audit only, as CallerSubject
	Now            time.Time       // when the request is decided: the hold's placedAt
	PayoutID       string          // one hold per payout (rows 3 and 4)
	ExternalID     string          // the payer: must own the funding source (row 6)
	FundingSource  string          // the token of the account to hold on (row 5)
	Currency       string          // must be the account's (row 8)
	Amount         decimal.Decimal // at most the account's available (row 11), held when approved (row 12)
	FraudScore     float64         // the service's score, 0 to 1 (row 2)
	FraudDeny      float64         // a score at or above it is denied fraud_suspected (row 9)
	FraudStepUp    float64         // a score at or above it is denied step_up_required (row 10)
	HoldReference  string          // taken by a hold placed now (row 12); unused otherwise
}

// CaptureParams are the arguments of the capture decision (cb_capture,
// contract §2.4): Key, Fingerprint and KeyFingerprint as in
// AuthorizeParams, the payout and its hold, and what a capture made now
// takes.
type CaptureParams struct {
	Key              string
	Fingerprint      []byte // CaptureRequest.Fingerprint
	KeyFingerprint   string
	Now              time.Time
	PayoutID         string
	HoldReference    string
	CaptureReference string    // used when the hold is captured now
	TransactionID    uuid.UUID // of the capture's journal transaction
}

// ReleaseParams are the arguments of the release decision (cb_release,
// contract §2.5): Key, Fingerprint and KeyFingerprint as in
// AuthorizeParams. PayoutID nil: not given (the key's scope is then the
// holdReference); Reason nil: not given.
type ReleaseParams struct {
	Key              string
	Fingerprint      []byte // ReleaseRequest.Fingerprint
	KeyFingerprint   string
	Now              time.Time
	PayoutID         *string
	HoldReference    string
	Reason           *string
	ReleaseReference string // used when the hold is released now
}

// Outstanding is the holds still held in one currency: funds customers
// cannot spend while their payouts are undecided (ledgerd_holds_outstanding
// and its _amount gauge).
type Outstanding struct {
	Currency string
	Count    int64
	Amount   decimal.Decimal
	// Stale counts those placed before the stale cutoff.
	Stale int64
}

// FixParams is a fix of one hold by a reconciliation run: the service
// says how the payout ended, and a hold still held is settled to match
// (hold_settle, the same rows 2 to 6 a callback's capture or release goes
// through).
type FixParams struct {
	RunID         string
	HoldReference string
	PayoutID      string
	// Status is what the hold becomes: holds.StatusCaptured or
	// holds.StatusReleased.
	Status       string
	PayoutStatus string // the payout's status at the service that calls for the fix
	Reason       string // the release reason
	Now          time.Time
}

// FixResult is the outcome of a fix (FixParams): either the fix settled the
// hold, or the hold had ended already and EndedAs says how.
type FixResult struct {
	// Fixed: the hold was held and is settled now by this fix.
	Fixed bool
	// EndedAs is the hold's status when it was not held any more.
	EndedAs       string
	Reference     string
	TransactionID string // the capture's journal transaction
}
