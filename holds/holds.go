package holds

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/provider-ledger/adapter/ledger"
)

// Hold statuses.
const (
	StatusHeld     = "held"
	StatusCaptured = "captured"
	StatusReleased = "released"
)

// Risk reasons a caller passes to Place (design 2.3 rows 9 and 10).
const (
	RiskFraudSuspected = "fraud_suspected"
	RiskStepUpRequired = "step_up_required"
)

// PlaceRequest is an authorize decision's input.
type PlaceRequest struct {
	PayoutID      string
	ExternalID    string // the sender, who must own the funding source's account
	FundingSource string // an instrument token of kind source
	Amount        ledger.Money
	// RiskReason is the caller's fraud decision: "" (none),
	// RiskFraudSuspected or RiskStepUpRequired. It applies after the
	// account checks, as the decision table orders it.
	RiskReason string
	Now        time.Time
}

// CaptureRequest is a capture decision's input. PayoutID "" skips the
// payout check.
type CaptureRequest struct {
	HoldReference string
	PayoutID      string
	Now           time.Time
}

// ReleaseRequest is a release decision's input. PayoutID "" skips the
// payout check; Reason is recorded on the hold.
type ReleaseRequest struct {
	HoldReference string
	PayoutID      string
	Reason        string
	Now           time.Time
}

const (
	placeSQL   = `SELECT outcome, reason, reference, orphan FROM hold_place($1, $2, $3, $4, $5, $6, $7, $8)`
	captureSQL = `SELECT outcome, reason, reference, orphan FROM hold_capture($1, $2, $3, $4, $5)`
	releaseSQL = `SELECT outcome, reason, reference, orphan FROM hold_release($1, $2, $3, $4, $5)`
)

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Place decides an authorize (design 2.3 rows 3 to 12) and, when approved,
// places the hold: held grows by the amount. The Decision's Reference is the
// holdReference: new, or the payout's existing one when the same hold is
// asked for again under another key.
func Place(ctx context.Context, q ledger.DBTX, r PlaceRequest) (ledger.Decision, error) {
	return ledger.ScanDecision(ctx, q, placeSQL, r.PayoutID, r.ExternalID, r.FundingSource,
		r.Amount.Currency, r.Amount.Value, nullable(r.RiskReason), ledger.NewReference("hold_"), r.Now)
}

// Capture decides a capture (design 2.4 rows 2 to 6) and, when the hold is
// held, settles it: balance and held fall by the amount and the journal
// debits the sender and credits settlement:<CUR>. A holdReference never
// issued is approved with an orphan reference (Decision.Orphan), stable
// for that holdReference.
func Capture(ctx context.Context, q ledger.DBTX, r CaptureRequest) (ledger.Decision, error) {
	return ledger.ScanDecision(ctx, q, captureSQL, r.HoldReference, nullable(r.PayoutID),
		ledger.NewReference("cap_"), uuid.New(), r.Now)
}

// Release decides a release (design 2.5 rows 2 to 6) and, when the hold is
// held, drops it: held falls by the amount; nothing is journaled. A
// holdReference never issued is approved with an orphan reference.
func Release(ctx context.Context, q ledger.DBTX, r ReleaseRequest) (ledger.Decision, error) {
	return ledger.ScanDecision(ctx, q, releaseSQL, r.HoldReference, nullable(r.PayoutID),
		nullable(r.Reason), ledger.NewReference("rel_"), r.Now)
}
