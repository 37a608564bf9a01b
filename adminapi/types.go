package adminapi

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Amount is an amount on the wire: a JSON string, written by the server
// with the currency's minor units ("100.00" USD, "100" JPY, "-5.25" in an
// adjustment). It keeps the text it was read or built with, so what a
// client prints is what the server sent. Read its value with Decimal;
// compare values, never texts.
//
// It is a string rather than a decimal.Decimal because decimal.Decimal
// writes "100.00" as "100" and reads JSON numbers and exponents, which the
// API refuses: the server validates the text itself (ledger.ParseAmount).
type Amount string

// NewAmount returns d as an Amount ("12.5" for 12.50: the server formats
// answers with the currency's places and accepts fewer places in requests).
func NewAmount(d decimal.Decimal) Amount { return Amount(d.String()) }

// Decimal parses the amount. An amount the server wrote always parses.
func (a Amount) Decimal() (decimal.Decimal, error) { return decimal.NewFromString(string(a)) }

// String returns the amount's text.
func (a Amount) String() string { return string(a) }

// TimestampFormat is how the admin API writes a Timestamp: UTC with
// microseconds, the precision Postgres keeps.
const TimestampFormat = "2006-01-02T15:04:05.000000Z07:00"

// Timestamp is a time on the wire written with TimestampFormat.
type Timestamp struct{ time.Time }

// MarshalJSON writes t in UTC with TimestampFormat.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(t.UTC().Format(TimestampFormat))), nil
}

// UnmarshalJSON reads an RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error { return t.Time.UnmarshalJSON(b) }

// Account statuses.
const (
	AccountOpen   = "open"
	AccountFrozen = "frozen"
	AccountClosed = "closed" // final
)

// Account is an account with its balances (GET, POST and PATCH of
// /v1/accounts). Available is Balance − Held.
type Account struct {
	AccountID       string `json:"accountID"`
	OwnerExternalID string `json:"ownerExternalID"`
	Currency        string `json:"currency"`
	Balance         Amount `json:"balance"`
	Held            Amount `json:"held"`
	Available       Amount `json:"available"`
	Status          string `json:"status"`
}

// AccountCreateRequest is the body of POST /v1/accounts.
type AccountCreateRequest struct {
	// AccountID: 1 to 128 characters, no "/", white space or control
	// characters; the prefixes settlement: and core: are reserved.
	AccountID string `json:"accountID"`
	// OwnerExternalID is the owner's externalID at the service.
	OwnerExternalID string `json:"ownerExternalID"`
	// Currency is an ISO 4217 code with minor units.
	Currency string `json:"currency"`
	// Status is AccountOpen (the default when empty) or AccountFrozen.
	Status string `json:"status,omitempty"`
}

// AccountUpdateRequest is the body of PATCH /v1/accounts/{accountID}.
type AccountUpdateRequest struct {
	// Status is required: AccountOpen, AccountFrozen or AccountClosed.
	Status *string `json:"status,omitempty"`
}

// AdjustmentRequest is the body of POST /v1/accounts/{accountID}/adjustments.
type AdjustmentRequest struct {
	// Amount is required: a signed amount in the account's currency, not
	// zero, with at most the currency's minor units.
	Amount *Amount `json:"amount,omitempty"`
	// IdempotencyKey is required and scoped to the account: the same key
	// with the same amount replays the first answer; with another amount
	// it is 422 idempotency-key-mismatch.
	IdempotencyKey string `json:"idempotencyKey"`
	Memo           string `json:"memo,omitempty"`
}

// Adjustment is the answer of an adjustment: its journal transaction and
// the account's balances after it (now, on a replay).
type Adjustment struct {
	Available     Amount `json:"available"`
	Balance       Amount `json:"balance"`
	Held          Amount `json:"held"`
	TransactionID string `json:"transactionID"`
	// Pending, set by Accounts.Adjust on a 202, is the adjustment waiting
	// for approval (the other fields are then empty). Never on the wire.
	Pending *PendingAdjustment `json:"-"`
}

// Instrument kinds.
const (
	KindSource      = "source"      // a fundingSource of authorize
	KindDestination = "destination" // a fundingDestination of credit-account
)

// Instrument maps a token the service sends to an account: the body and
// the answer of POST /v1/instruments (201 when added, 200 when the same
// mapping existed).
type Instrument struct {
	AccountID string `json:"accountID"`
	Kind      string `json:"kind"`
	Token     string `json:"token"`
}

// Hold statuses.
const (
	HoldHeld     = "held"
	HoldCaptured = "captured"
	HoldReleased = "released"
)

// Hold is a hold on a sender's funds (GET /v1/holds/{holdReference}).
type Hold struct {
	HoldReference    string     `json:"holdReference"`
	PayoutID         string     `json:"payoutID"`
	AccountID        string     `json:"accountID"`
	FundingSource    string     `json:"fundingSource"`
	Amount           Amount     `json:"amount"`
	Currency         string     `json:"currency"`
	Status           string     `json:"status"`
	CaptureReference string     `json:"captureReference,omitempty"`
	ReleaseReference string     `json:"releaseReference,omitempty"`
	ReleaseReason    string     `json:"releaseReason,omitempty"`
	PlacedAt         Timestamp  `json:"placedAt"`
	CapturedAt       *Timestamp `json:"capturedAt,omitempty"`
	ReleasedAt       *Timestamp `json:"releasedAt,omitempty"`
}

// HoldListOptions are the query of GET /v1/holds.
type HoldListOptions struct {
	PayoutID  string // only the holds of this payout
	AccountID string // only the holds on this account
	Status    string // HoldHeld, HoldCaptured or HoldReleased
	Cursor    string // NextCursor of the previous page
	Limit     int    // 1 to 100; 0: the server's default
}

// HoldList is one page of GET /v1/holds, newest first.
type HoldList struct {
	Holds      []Hold `json:"holds"`
	NextCursor string `json:"nextCursor,omitempty"`
	HasMore    bool   `json:"hasMore"`
}

// SigningSecret describes a signing secret of the callback keyring, never
// its value.
type SigningSecret struct {
	SecretID    string `json:"secretID"`
	Fingerprint string `json:"fingerprint"`
	// KEKFingerprint identifies the KEK the secret is encrypted under
	// (keyring.KEKFingerprint): during a KEK rotation, which secrets are
	// still under the old one.
	KEKFingerprint string     `json:"kekFingerprint"`
	AddedOn        time.Time  `json:"addedOn"`
	RetiredOn      *time.Time `json:"retiredOn"` // null while active
}

// SigningSecretList is the answer of GET /v1/signing-secrets, newest first.
type SigningSecretList struct {
	SigningSecrets []SigningSecret `json:"signingSecrets"`
}

// SigningSecretRequest is the body of POST /v1/signing-secrets: exactly one
// of Secret (the Base64 of 32 bytes) and Generate (true). The server reads
// the two members case-sensitively and refuses any other.
type SigningSecretRequest struct {
	Secret   string `json:"secret,omitempty"`
	Generate bool   `json:"generate,omitempty"`
}

// SigningSecretCreated is the answer of POST /v1/signing-secrets (201 when
// added, 200 when the secret was already active). Secret is set only when
// the server generated it: this answer is the only place it appears.
type SigningSecretCreated struct {
	SecretID    string `json:"secretID"`
	Fingerprint string `json:"fingerprint"`
	Secret      string `json:"secret,omitempty"`
}

// KeyringRekeyRequest is the body of POST /v1/keyring/rekey; {} is fine.
type KeyringRekeyRequest struct {
	// KEKFingerprint, when set, is the fingerprint of the KEK the operator
	// rotates to (ledgerctl secrets kek-fingerprint): a replica whose
	// current KEK is another answers 409 kek-mismatch and changes nothing,
	// so that a replica given the KEKs the wrong way round does not move
	// the secrets back under the old KEK.
	KEKFingerprint string `json:"kekFingerprint,omitempty"`
}

// KeyringRekey is the answer of POST /v1/keyring/rekey: what this call
// re-encrypted and what is left under another KEK. Remaining 0 means no
// active secret needs the previous KEK any more.
type KeyringRekey struct {
	// KEKFingerprint is the answering replica's current KEK: the one the
	// secrets are now encrypted under.
	KEKFingerprint string `json:"kekFingerprint"`
	// PreviousKEKFingerprint is its previous KEK (LEDGER_KEK_PREVIOUS), null
	// when it has none.
	PreviousKEKFingerprint *string `json:"previousKEKFingerprint"`
	// Rekeyed is the number of active secrets this call re-encrypted.
	Rekeyed int `json:"rekeyed"`
	// Current is the number of active secrets under the current KEK.
	Current int `json:"current"`
	// Remaining is len(RemainingSecrets).
	Remaining int `json:"remaining"`
	// RemainingSecrets are the active secrets still under another KEK.
	RemainingSecrets []RemainingSecret `json:"remainingSecrets"`
}

// Reasons a secret remains under another KEK after a rekey.
const (
	RemainingOtherKEK = "other_kek" // the answering replica has not that KEK
	RemainingDamaged  = "damaged"   // it has, and the row does not decrypt
	RemainingPending  = "pending"   // it changed during the call: run the rekey again
)

// RemainingSecret is an active secret a rekey left under another KEK.
type RemainingSecret struct {
	SecretID       string `json:"secretID"`
	Fingerprint    string `json:"fingerprint"`
	KEKFingerprint string `json:"kekFingerprint"`
	Reason         string `json:"reason"`
}

// ReconciliationRunRequest is the body of POST /v1/reconciliation/runs.
type ReconciliationRunRequest struct {
	// Fix applies missed_capture and missed_release findings.
	Fix bool `json:"fix"`
	// Full reads all of history instead of starting from the last
	// checkpoint.
	Full bool `json:"full,omitempty"`
}

// Run statuses and finding severities.
const (
	StatusClean      = "clean"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// ReconciliationRun is the report of one reconciliation run (contract
// §5).
type ReconciliationRun struct {
	RunID      string    `json:"runID"`
	StartedOn  time.Time `json:"startedOn"`
	FinishedOn time.Time `json:"finishedOn"`
	// Status is the worst severity among the unfixed, unacknowledged
	// findings, or StatusClean.
	Status   string           `json:"status"`
	Findings []ledger.Finding `json:"findings"`
	// Mode is "full" (all of history was read) or "incremental" (what is
	// new since FromCheckpoint).
	Mode           string `json:"mode"`
	FromCheckpoint string `json:"fromCheckpoint,omitempty"`
	// Checkpoint is the checkpoint the run wrote; empty when its invariant
	// checks found anything.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// MarshalJSON writes findings as [] when there are none, never null.
func (r ReconciliationRun) MarshalJSON() ([]byte, error) {
	type plain ReconciliationRun
	if r.Findings == nil {
		r.Findings = []ledger.Finding{}
	}
	return json.Marshal(plain(r))
}

// AcknowledgementRequest is the body of POST
// /v1/reconciliation/findings/{findingID}/acknowledgement.
type AcknowledgementRequest struct {
	// Note says why the finding needs no further action (required, at
	// most 1024 characters).
	Note string `json:"note"`
}

// AcknowledgedFinding is a finding's issue, acknowledged.
type AcknowledgedFinding struct {
	FindingID      string    `json:"findingID"`
	Kind           string    `json:"kind"`
	Subject        string    `json:"subject"`
	FirstRunID     string    `json:"firstRunID"`
	LastRunID      string    `json:"lastRunID"`
	FirstSeenOn    time.Time `json:"firstSeenOn"`
	LastSeenOn     time.Time `json:"lastSeenOn"`
	AcknowledgedOn time.Time `json:"acknowledgedOn"`
	Note           string    `json:"note"`
}
