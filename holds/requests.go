package holds

import (
	"strconv"
	"time"

	"github.com/provider-ledger/adapter/ledger"
)

// AuthorizeRequest is the business claims of an authorize callback
// (contract §2.3), decoded and checked: what the authorize decision takes.
// CallerSubject and RequestID are audit claims only: they are stored, but
// not part of the request's fingerprint.
type AuthorizeRequest struct {
	PayoutID       string
	ProviderID     string
	ExternalID     string
	FundingSource  string
	Amount         ledger.Money
	FraudScore     float64
	IdempotencyKey string
	CallerSubject  string
	RequestID      string
}

// Fingerprint is the SHA-256 of the request's canonical business claims.
func (r AuthorizeRequest) Fingerprint() []byte {
	score := r.FraudScore
	if score == 0 {
		score = 0 // -0 is the same score as 0
	}
	return ledger.ClaimsFingerprint("authorize", r.PayoutID, r.ProviderID, r.ExternalID, r.FundingSource,
		r.Amount.Currency, ledger.FormatAmount(r.Amount.Currency, r.Amount.Value),
		strconv.FormatFloat(score, 'g', -1, 64), r.IdempotencyKey)
}

// Params are the arguments of the authorize decision for this request,
// opened with the signing secret of keyFingerprint at now, with the fraud
// thresholds deny and stepUp. A hold placed now takes a fresh reference.
func (r AuthorizeRequest) Params(keyFingerprint string, now time.Time, deny, stepUp float64) AuthorizeParams {
	return AuthorizeParams{Key: r.IdempotencyKey, Fingerprint: r.Fingerprint(), KeyFingerprint: keyFingerprint,
		CallerSubject: optional(r.CallerSubject), AuditRequestID: optional(r.RequestID), Now: now,
		PayoutID: r.PayoutID, ExternalID: r.ExternalID, FundingSource: r.FundingSource,
		Currency: r.Amount.Currency, Amount: r.Amount.Value, FraudScore: r.FraudScore,
		FraudDeny: deny, FraudStepUp: stepUp, HoldReference: ledger.NewReference("hold_")}
}

// CaptureRequest is the business claims of a capture callback (contract
// §2.4).
type CaptureRequest struct {
	PayoutID       string
	ProviderID     string
	HoldReference  string
	IdempotencyKey string
}

// Fingerprint is the SHA-256 of the request's canonical business claims.
func (r CaptureRequest) Fingerprint() []byte {
	return ledger.ClaimsFingerprint("capture", r.PayoutID, r.ProviderID, r.HoldReference, r.IdempotencyKey)
}

// Params are the arguments of the capture decision for this request. A
// capture made now takes a fresh reference and transaction ID.
func (r CaptureRequest) Params(keyFingerprint string, now time.Time) CaptureParams {
	return CaptureParams{Key: r.IdempotencyKey, Fingerprint: r.Fingerprint(), KeyFingerprint: keyFingerprint,
		Now: now, PayoutID: r.PayoutID, HoldReference: r.HoldReference, CaptureReference: ledger.NewReference("cap_"),
		TransactionID: ledger.NewTransactionID()}
}

// ReleaseRequest is the claims of a release callback (contract §2.5: ours,
// read tolerantly: PayoutID, ProviderID and Reason may be empty).
type ReleaseRequest struct {
	HoldReference  string
	IdempotencyKey string
	PayoutID       string
	ProviderID     string
	Reason         string
}

// Fingerprint is the SHA-256 of the request's canonical claims. It leaves
// ProviderID out: it is optional on release, and when present it can only
// be this provider's (another is refused with 403), so sending it or not
// is the same request.
func (r ReleaseRequest) Fingerprint() []byte {
	return ledger.ClaimsFingerprint("release", r.HoldReference, r.IdempotencyKey, r.PayoutID, r.Reason)
}

// Params are the arguments of the release decision for this request. A
// release made now takes a fresh reference.
func (r ReleaseRequest) Params(keyFingerprint string, now time.Time) ReleaseParams {
	return ReleaseParams{Key: r.IdempotencyKey, Fingerprint: r.Fingerprint(), KeyFingerprint: keyFingerprint,
		Now: now, PayoutID: optional(r.PayoutID), HoldReference: r.HoldReference, Reason: optional(r.Reason),
		ReleaseReference: ledger.NewReference("rel_")}
}

// optional is s as an optional claim: nil when not given (empty).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
