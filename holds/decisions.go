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
	Key            string
	Fingerprint    []byte // SHA-256 of the business claims (AuthorizeRequest.Fingerprint)
	KeyFingerprint string // of the signing secret that opened the request
	CallerSubject  *string
	AuditRequestID *string
	Now            time.Time
	PayoutID       string
	ExternalID     string
	FundingSource  string
	Currency       string
	Amount         decimal.Decimal
	FraudScore     float64
	FraudDeny      float64
	FraudStepUp    float64
	HoldReference  string // used when a hold is placed
}

// CaptureParams are the arguments of the capture decision (cb_capture,
// contract §2.4).
type CaptureParams struct {
	Key              string
	Fingerprint      []byte
	KeyFingerprint   string
	Now              time.Time
	PayoutID         string
	HoldReference    string
	CaptureReference string    // used when the hold is captured now
	TransactionID    uuid.UUID // of the capture's journal transaction
}

// ReleaseParams are the arguments of the release decision (cb_release,
// contract §2.5). PayoutID nil: not given (the key's scope is then the
// holdReference).
type ReleaseParams struct {
	Key              string
	Fingerprint      []byte
	KeyFingerprint   string
	Now              time.Time
	PayoutID         *string
	HoldReference    string
	Reason           *string
	ReleaseReference string // used when the hold is released now
}

// Outstanding is the holds still held in one currency.
type Outstanding struct {
	Currency string
	Count    int64
	Amount   decimal.Decimal
	// Stale counts those placed before the stale cutoff.
	Stale int64
}

// FixParams is a fix of one hold by a reconciliation run.
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

// FixResult is the outcome of FixHold.
type FixResult struct {
	// Fixed: the hold was held and is settled now by this fix.
	Fixed bool
	// EndedAs is the hold's status when it was not held any more.
	EndedAs       string
	Reference     string
	TransactionID string // the capture's journal transaction
}
