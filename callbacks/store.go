package callbacks

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/ledger"
)

// Each callback is one statement: a server-side function that claims the
// key, decides, applies the effect and stores the answer in the statement's
// own transaction (schema/migrations/003_callbacks.sql). The outcome is
// read out of the answer by the same statement, so Go need not parse it.
const (
	authorizeSQL = `SELECT state, response, response->>'outcome' FROM cb_authorize($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	captureSQL   = `SELECT state, response, response->>'outcome' FROM cb_capture($1, $2, $3, $4, $5, $6, $7, $8)`
	releaseSQL   = `SELECT state, response, response->>'outcome' FROM cb_release($1, $2, $3, $4, $5, $6, $7, $8)`
	creditSQL    = `SELECT state, response, response->>'outcome' FROM cb_credit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
)

// States a callback statement answers.
const (
	stateNew      = "new"      // decided and applied now
	stateReplay   = "replay"   // the stored answer of an earlier request with this key
	stateMismatch = "mismatch" // the key was used with other business claims
	stateInvalid  = "invalid"  // a new key whose request the caller found invalid
)

// maxAttempts bounds the runs of one callback statement that failed on a
// serialization failure or a deadlock.
const maxAttempts = 4

type result struct {
	state    string
	response []byte // the stored service claims, JSON
	outcome  string // the answer's outcome
	retries  int
}

// store runs the callback statements.
type store struct {
	pool *pgxpool.Pool
}

func (s store) run(ctx context.Context, sql string, args ...any) (result, error) {
	var r result
	for attempt := 1; ; attempt++ {
		var state, outcome *string
		err := s.pool.QueryRow(ctx, sql, args...).Scan(&state, &r.response, &outcome)
		if err == nil {
			if state != nil {
				r.state = *state
			}
			if outcome != nil {
				r.outcome = *outcome
			}
			return r, nil
		}
		if !ledger.Retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return r, err
		}
		r.retries++
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s store) authorize(ctx context.Context, c authorizeClaims, keyFP string, now time.Time, valid bool, risk string) (result, error) {
	return s.run(ctx, authorizeSQL, c.IdempotencyKey, c.fingerprint(), keyFP, nullable(c.CallerSubject),
		nullable(c.RequestID), now, valid, c.PayoutID, c.ExternalID, c.FundingSource, c.Amount.Currency,
		c.Amount.Value, nullable(risk), ledger.NewReference("hold_"))
}

func (s store) capture(ctx context.Context, c captureClaims, keyFP string, now time.Time) (result, error) {
	return s.run(ctx, captureSQL, c.IdempotencyKey, c.fingerprint(), keyFP, now, c.PayoutID, c.HoldReference,
		ledger.NewReference("cap_"), uuid.New())
}

func (s store) release(ctx context.Context, c releaseClaims, keyFP string, now time.Time) (result, error) {
	return s.run(ctx, releaseSQL, c.IdempotencyKey, c.fingerprint(), keyFP, now, nullable(c.PayoutID),
		c.HoldReference, nullable(c.Reason), ledger.NewReference("rel_"))
}

func (s store) credit(ctx context.Context, c creditClaims, keyFP string, now time.Time, max any) (result, error) {
	return s.run(ctx, creditSQL, c.IdempotencyKey, c.fingerprint(), keyFP, now, c.RequestID, c.FundingDestination,
		c.RequesterExternalID, c.Amount.Currency, c.Amount.Value, max, ledger.NewReference("cred_"), uuid.New())
}
