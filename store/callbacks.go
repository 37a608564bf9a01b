package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// State says how a callback statement answered.
type State string

// The states of a callback statement.
const (
	StateNew      State = "new"      // decided and applied now, the answer stored
	StateReplay   State = "replay"   // the stored answer of an earlier request with this key
	StateMismatch State = "mismatch" // the key was used with other business claims (422)
	StateInvalid  State = "invalid"  // a new key whose request is invalid (authorize row 2); nothing stored
)

// Answer is what a callback statement answered.
type Answer struct {
	State State
	ledger.Decision
	// Runs is how many times the statement ran: more than one after a
	// serialization failure or a deadlock.
	Runs int
}

// AuthorizeParams are cb_authorize's arguments (design 2.3).
type AuthorizeParams struct {
	Key            string          `arg:"p_key"`
	Fingerprint    []byte          `arg:"p_fingerprint"`     // SHA-256 of the business claims
	KeyFingerprint string          `arg:"p_key_fingerprint"` // of the signing secret that opened it
	CallerSubject  *string         `arg:"p_caller_subject"`
	AuditRequestID *string         `arg:"p_audit_request_id"`
	Now            time.Time       `arg:"p_now"`
	PayoutID       string          `arg:"p_payout_id"`
	ExternalID     string          `arg:"p_external_id"`
	FundingSource  string          `arg:"p_funding_source"`
	Currency       string          `arg:"p_currency"`
	Amount         decimal.Decimal `arg:"p_amount"`
	FraudScore     float64         `arg:"p_fraud_score"`
	FraudDeny      float64         `arg:"p_fraud_deny"`
	FraudStepUp    float64         `arg:"p_fraud_stepup"`
	HoldReference  string          `arg:"p_hold_reference"` // used when a hold is placed
}

// CaptureParams are cb_capture's arguments (design 2.4).
type CaptureParams struct {
	Key              string    `arg:"p_key"`
	Fingerprint      []byte    `arg:"p_fingerprint"`
	KeyFingerprint   string    `arg:"p_key_fingerprint"`
	Now              time.Time `arg:"p_now"`
	PayoutID         string    `arg:"p_payout_id"`
	HoldReference    string    `arg:"p_hold_reference"`
	CaptureReference string    `arg:"p_capture_reference"` // used when the hold is captured now
	TransactionID    uuid.UUID `arg:"p_transaction_id"`
}

// ReleaseParams are cb_release's arguments (design 2.5). PayoutID nil: not
// given (the key's scope is then the holdReference).
type ReleaseParams struct {
	Key              string    `arg:"p_key"`
	Fingerprint      []byte    `arg:"p_fingerprint"`
	KeyFingerprint   string    `arg:"p_key_fingerprint"`
	Now              time.Time `arg:"p_now"`
	PayoutID         *string   `arg:"p_payout_id"`
	HoldReference    string    `arg:"p_hold_reference"`
	Reason           *string   `arg:"p_reason"`
	ReleaseReference string    `arg:"p_release_reference"`
}

// CreditParams are cb_credit's arguments (design 2.6). Max nil: no limit.
type CreditParams struct {
	Key             string           `arg:"p_key"`
	Fingerprint     []byte           `arg:"p_fingerprint"`
	KeyFingerprint  string           `arg:"p_key_fingerprint"`
	Now             time.Time        `arg:"p_now"`
	RequestID       string           `arg:"p_request_id"`
	Destination     string           `arg:"p_destination"`
	Requester       string           `arg:"p_requester"`
	Currency        string           `arg:"p_currency"`
	Amount          decimal.Decimal  `arg:"p_amount"`
	Max             *decimal.Decimal `arg:"p_max"`
	CreditReference string           `arg:"p_credit_reference"`
	TransactionID   uuid.UUID        `arg:"p_transaction_id"`
}

const answerColumns = "state, outcome, reason, reference"

var (
	authorizeCall = newCall[AuthorizeParams]("cb_authorize", answerColumns)
	captureCall   = newCall[CaptureParams]("cb_capture", answerColumns)
	releaseCall   = newCall[ReleaseParams]("cb_release", answerColumns)
	creditCall    = newCall[CreditParams]("cb_credit", answerColumns)
)

// Authorize runs the authorize decision table in one statement: the key
// is looked up, the payout decided, the hold placed when approved, and the
// answer stored, in one transaction.
func (db *DB) Authorize(ctx context.Context, p AuthorizeParams) (Answer, error) {
	return db.answer(ctx, authorizeCall.sql, authorizeCall.args(&p))
}

// Capture runs the capture decision table in one statement.
func (db *DB) Capture(ctx context.Context, p CaptureParams) (Answer, error) {
	return db.answer(ctx, captureCall.sql, captureCall.args(&p))
}

// Release runs the release decision table in one statement.
func (db *DB) Release(ctx context.Context, p ReleaseParams) (Answer, error) {
	return db.answer(ctx, releaseCall.sql, releaseCall.args(&p))
}

// Credit runs the credit-account decision table in one statement.
func (db *DB) Credit(ctx context.Context, p CreditParams) (Answer, error) {
	return db.answer(ctx, creditCall.sql, creditCall.args(&p))
}

func (db *DB) answer(ctx context.Context, sql string, args []any) (Answer, error) {
	var a Answer
	ctx, watch := WatchCommits(ctx)
	err := retry(ctx, &a.Runs, func() error {
		var state string
		var outcome, reason, ref *string
		if err := db.pool.QueryRow(ctx, sql, args...).Scan(&state, &outcome, &reason, &ref); err != nil {
			return err
		}
		a.State, a.Decision = State(state), ledger.Decision{Outcome: deref(outcome), Reason: deref(reason), Reference: deref(ref)}
		return nil
	})
	if err == nil {
		err = db.replicated(watch)
	}
	return a, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// purgeTables are the callback tables, purged by age.
var purgeTables = [...]string{"callback_authorize", "callback_capture", "callback_release", "callback_credit"}

// PurgeCallbacks deletes stored callback answers received before cutoff,
// at most batch rows per statement, and returns how many it deleted. Rows
// received since cutoff are never touched.
func (db *DB) PurgeCallbacks(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	var total int64
	for _, t := range purgeTables {
		sql := `DELETE FROM ` + t + ` c USING (SELECT scope, idempotency_key FROM ` + t + `
 WHERE received_at < $1 LIMIT $2) o
WHERE (c.scope, c.idempotency_key) = (o.scope, o.idempotency_key) AND c.received_at < $1`
		for {
			tag, err := db.pool.Exec(ctx, sql, cutoff, batch)
			if err != nil {
				return total, interpret(err)
			}
			total += tag.RowsAffected()
			if tag.RowsAffected() < int64(batch) {
				break
			}
		}
	}
	return total, nil
}
