package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// The arguments of the four decision functions, each field tagged with its
// parameter's name: the domain's parameter structs (holds.AuthorizeParams,
// …) converted as they are, so that a field added there and not here does
// not compile.
type (
	authorizeArgs struct {
		Key            string          `arg:"p_key"`
		Fingerprint    []byte          `arg:"p_fingerprint"`
		KeyFingerprint string          `arg:"p_key_fingerprint"`
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
		HoldReference  string          `arg:"p_hold_reference"`
	}
	captureArgs struct {
		Key              string    `arg:"p_key"`
		Fingerprint      []byte    `arg:"p_fingerprint"`
		KeyFingerprint   string    `arg:"p_key_fingerprint"`
		Now              time.Time `arg:"p_now"`
		PayoutID         string    `arg:"p_payout_id"`
		HoldReference    string    `arg:"p_hold_reference"`
		CaptureReference string    `arg:"p_capture_reference"`
		TransactionID    uuid.UUID `arg:"p_transaction_id"`
	}
	releaseArgs struct {
		Key              string    `arg:"p_key"`
		Fingerprint      []byte    `arg:"p_fingerprint"`
		KeyFingerprint   string    `arg:"p_key_fingerprint"`
		Now              time.Time `arg:"p_now"`
		PayoutID         *string   `arg:"p_payout_id"`
		HoldReference    string    `arg:"p_hold_reference"`
		Reason           *string   `arg:"p_reason"`
		ReleaseReference string    `arg:"p_release_reference"`
	}
	creditArgs struct {
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
)

const answerColumns = "state, outcome, reason, reference"

var (
	authorizeCall = newCall[authorizeArgs]("cb_authorize", answerColumns)
	captureCall   = newCall[captureArgs]("cb_capture", answerColumns)
	releaseCall   = newCall[releaseArgs]("cb_release", answerColumns)
	creditCall    = newCall[creditArgs]("cb_credit", answerColumns)
)

// Authorize runs the authorize decision table in one statement: the key
// is looked up, the payout decided, the hold placed when approved, and the
// answer stored, in one transaction (or, under group commit, in a batch's).
func (db *DB) Authorize(ctx context.Context, p holds.AuthorizeParams) (ledger.Answer, error) {
	a := authorizeArgs(p)
	return db.answer(ctx, callback{sql: authorizeCall.sql, args: authorizeCall.args(&a),
		token: p.FundingSource, order: "1 " + p.PayoutID})
}

// Capture runs the capture decision table in one statement.
func (db *DB) Capture(ctx context.Context, p holds.CaptureParams) (ledger.Answer, error) {
	a := captureArgs(p)
	return db.answer(ctx, callback{sql: captureCall.sql, args: captureCall.args(&a),
		hold: p.HoldReference, order: "2 " + p.PayoutID})
}

// Release runs the release decision table in one statement.
func (db *DB) Release(ctx context.Context, p holds.ReleaseParams) (ledger.Answer, error) {
	a := releaseArgs(p)
	scope := p.HoldReference
	if p.PayoutID != nil {
		scope = *p.PayoutID
	}
	return db.answer(ctx, callback{sql: releaseCall.sql, args: releaseCall.args(&a),
		hold: p.HoldReference, order: "3 " + scope})
}

// Credit runs the credit-account decision table in one statement.
func (db *DB) Credit(ctx context.Context, p ledger.CreditParams) (ledger.Answer, error) {
	a := creditArgs(p)
	return db.answer(ctx, callback{sql: creditCall.sql, args: creditCall.args(&a),
		token: p.Destination, order: "4 " + p.Key})
}

// answer runs a callback's decision statement: alone, or under group
// commit (Options.GroupCommit) alone or in a batch.
func (db *DB) answer(ctx context.Context, c callback) (ledger.Answer, error) {
	if db.group != nil {
		return db.group.do(ctx, c)
	}
	return db.answerOne(ctx, c)
}

// answerOne runs a callback's decision statement in a transaction of its
// own, again after a serialization failure or a deadlock.
func (db *DB) answerOne(ctx context.Context, c callback) (ledger.Answer, error) {
	var a ledger.Answer
	ctx, watch := WatchCommits(ctx)
	err := retry(ctx, &a.Runs, func() error {
		return scanAnswer(db.pool.QueryRow(ctx, c.sql, c.args...), &a)
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
