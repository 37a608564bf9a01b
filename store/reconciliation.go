package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// Finding is a reconciliation finding as stored (table
// reconciliation_findings).
type Finding struct {
	Kind, Severity, Subject, Detail string
	Fixed                           bool
}

// Subject is one row of a check: what it is about, and what was found.
type Subject struct {
	Subject, Detail string
}

// Candidate is a hold to compare with the service's view of its payout.
type Candidate struct {
	HoldReference string
	PayoutID      string
	AccountID     string
	Owner         string
	Status        string
	Currency      string
	Amount        decimal.Decimal
	PlacedAt      time.Time
}

// ReconcileSnapshot is what one reconciliation reads, from one consistent
// snapshot.
type ReconcileSnapshot struct {
	Violations              []ledger.Violation
	StaleHolds              []Subject
	OrphanCaptures          []Subject
	OrphanReleases          []Subject
	DuplicateCreditAttempts []Subject
	// Candidates: every held hold, and released holds placed since the
	// cutoff, ordered by owner (when asked for).
	Candidates []Candidate
}

// Reconciliation's queries: runs and findings (tables
// reconciliation_runs, reconciliation_findings, reconciliation_fixes) and
// the checks beyond the invariants.
const (
	insertRunSQL = `INSERT INTO reconciliation_runs (run_id, started_on, fix) VALUES ($1, $2, $3)`

	finishRunSQL = `UPDATE reconciliation_runs SET finished_on = $2, status = $3
WHERE run_id = $1 AND finished_on IS NULL
RETURNING run_id`

	insertFindingsSQL = `INSERT INTO reconciliation_findings (run_id, seq, kind, severity, subject, detail, fixed)
SELECT $1, f.seq, f.kind, f.severity, f.subject, f.detail, f.fixed
FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[])
     AS f (seq, kind, severity, subject, detail, fixed)`

	// $1: the stale cutoff; $2: now.
	staleHoldsSQL = `SELECT hold_reference,
       format('held for %s, since %s; payout %s, %s %s on account %s',
              justify_interval(date_trunc('minute', $2::timestamptz - placed_at)),
              to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
              payout_id, amount, currency, account_id)
FROM hold_states
WHERE status = 'held' AND placed_at < $1
ORDER BY placed_at, hold_reference`

	// $1: orphans.kind.
	orphansSQL = `SELECT hold_reference,
       format('%s of a hold reference never issued here, payout %s, answered %s on %s',
              kind, CASE WHEN payout_id = '' THEN '(not given)' ELSE payout_id END, reference,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM orphans
WHERE kind = $1
ORDER BY created_at, hold_reference`

	// A requestID received under several idempotency keys: credited at most
	// once (I5), but the service, or someone, sent it twice.
	duplicateCreditAttemptsSQL = `SELECT r.subject,
       format('requestID received under %s idempotency keys; %s',
              count(DISTINCT r.idempotency_key),
              coalesce('credited once as ' || min(c.credit_reference), 'not credited'))
FROM callback_credit r
LEFT JOIN credits c ON c.request_id = r.subject
GROUP BY r.subject
HAVING count(DISTINCT r.idempotency_key) > 1
ORDER BY r.subject`

	// $1: released holds placed since.
	candidatesSQL = `SELECT h.hold_reference, h.payout_id, h.account_id, a.owner_external_id, h.status, h.currency, h.amount, h.placed_at
FROM hold_states h
JOIN accounts a ON a.account_id = h.account_id
WHERE h.status = 'held' OR (h.status = 'released' AND h.placed_at >= $1)
ORDER BY a.owner_external_id, h.placed_at, h.hold_reference`

	holdStatusSQL = `SELECT status FROM hold_states WHERE hold_reference = $1`

	// $1 hold, $2 payout, $3 status, $4 reference, $5 reason, $6 kind, $7 transaction, $8 now.
	fixSettleSQL = `SELECT outcome, reason, reference, orphan FROM hold_settle(p_status => $3, p_hold_reference => $1,
p_payout_id => $2, p_reference => $4, p_reason => $5, p_kind => $6, p_transaction_id => $7, p_now => $8)`

	// $1 run, $2 hold, $3 action, $4 reference, $5 transaction, $6 payout status, $7 now.
	insertFixSQL = `INSERT INTO reconciliation_fixes (hold_reference, run_id, action, reference, transaction_id, payout_status, created_at)
VALUES ($2, $1, $3, $4, $5, $6, $7)`

	tryLockSQL = `SELECT pg_try_advisory_lock($1)`
	unlockSQL  = `SELECT pg_advisory_unlock($1)`
)

// InsertRun records a run as started.
func (db *DB) InsertRun(ctx context.Context, runID string, startedOn time.Time, fix bool) error {
	_, err := db.pool.Exec(ctx, insertRunSQL, runID, startedOn, fix)
	return interpret(err)
}

// FinishRun completes a run with its status and findings, in one
// transaction.
func (db *DB) FinishRun(ctx context.Context, runID string, finishedOn time.Time, status string, findings []Finding) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		var id string
		if err := tx.QueryRow(ctx, finishRunSQL, runID, finishedOn, status).Scan(&id); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("run %s is gone or finished already", runID)
			}
			return err
		}
		if len(findings) == 0 {
			return nil
		}
		n := len(findings)
		seq, kind, sev, subj, detail, fixed := make([]int32, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]bool, n)
		for i, f := range findings {
			seq[i], kind[i], sev[i], subj[i], detail[i], fixed[i] = int32(i), f.Kind, f.Severity, f.Subject, f.Detail, f.Fixed
		}
		_, err := tx.Exec(ctx, insertFindingsSQL, runID, seq, kind, sev, subj, detail, fixed)
		return err
	})
}

// Reconcile reads every check of a reconciliation from one consistent,
// read-only snapshot: the invariants, holds held since before staleBefore,
// orphans, duplicate credit attempts, and, with candidates, the holds to
// compare with the service (released ones placed since releasedSince).
func (db *DB) Reconcile(ctx context.Context, now, staleBefore, releasedSince time.Time, candidates bool) (ReconcileSnapshot, error) {
	var s ReconcileSnapshot
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		var err error
		if s.Violations, err = checkInvariants(ctx, tx); err != nil {
			return err
		}
		for _, q := range []struct {
			name string
			dst  *[]Subject
			sql  string
			args []any
		}{
			{"stale holds", &s.StaleHolds, staleHoldsSQL, []any{staleBefore, now}},
			{"orphan captures", &s.OrphanCaptures, orphansSQL, []any{"capture"}},
			{"orphan releases", &s.OrphanReleases, orphansSQL, []any{"release"}},
			{"duplicate credit attempts", &s.DuplicateCreditAttempts, duplicateCreditAttemptsSQL, nil},
		} {
			rows, err := tx.Query(ctx, q.sql, q.args...)
			if err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			if *q.dst, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Subject, error) {
				var x Subject
				return x, r.Scan(&x.Subject, &x.Detail)
			}); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
		}
		if !candidates {
			return nil
		}
		rows, err := tx.Query(ctx, candidatesSQL, releasedSince)
		if err != nil {
			return fmt.Errorf("candidates: %w", err)
		}
		s.Candidates, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Candidate, error) {
			var c Candidate
			return c, r.Scan(&c.HoldReference, &c.PayoutID, &c.AccountID, &c.Owner, &c.Status, &c.Currency, &c.Amount, &c.PlacedAt)
		})
		if err != nil {
			return fmt.Errorf("candidates: %w", err)
		}
		return nil
	})
	return s, err
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

// FixHold settles a held hold as a reconciliation fix: by hold_settle, the
// callbacks' own decision (a capture journaled as kind reconciliation),
// with a row of reconciliation_fixes in the same transaction. A hold that
// is no longer held (a late callback, a concurrent run) is left alone.
func (db *DB) FixHold(ctx context.Context, p FixParams) (FixResult, error) {
	var res FixResult
	err := db.tx(ctx, func(tx pgx.Tx) error {
		res = FixResult{}
		action, prefix, kind := "release", "rel_", any(nil)
		txID := ledger.NewTransactionID()
		var txArg *uuid.UUID
		if p.Status == holds.StatusCaptured {
			action, prefix, kind, txArg = "capture", "cap_", "reconciliation", &txID
		}
		ours := ledger.NewReference(prefix)
		var outcome string
		var reason, ref *string
		var orphan bool
		if err := tx.QueryRow(ctx, fixSettleSQL, p.HoldReference, p.PayoutID, p.Status, ours,
			p.Reason, kind, txArg, p.Now).Scan(&outcome, &reason, &ref, &orphan); err != nil {
			return err
		}
		if orphan {
			return fmt.Errorf("hold %s is not in the ledger", p.HoldReference)
		}
		if outcome != ledger.OutcomeApproved || deref(ref) != ours {
			// Settled before this fix: nothing was written.
			return tx.QueryRow(ctx, holdStatusSQL, p.HoldReference).Scan(&res.EndedAs)
		}
		if _, err := tx.Exec(ctx, insertFixSQL, p.RunID, p.HoldReference, action, ours, txArg, p.PayoutStatus, p.Now); err != nil {
			return err
		}
		res.Fixed, res.Reference = true, ours
		if txArg != nil {
			res.TransactionID = txID.String()
		}
		return nil
	})
	return res, err
}

// TryLock takes the session advisory lock key on a connection of its own
// and returns its release; ok is false when another session holds it.
func (db *DB) TryLock(ctx context.Context, key int64) (unlock func(), ok bool, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, interpret(err)
	}
	if err := conn.QueryRow(ctx, tryLockSQL, key).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, false, interpret(err)
	}
	return func() {
		// Unlock even when ctx has ended; if that fails, closing the
		// session drops the lock.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var unlocked bool
		if err := conn.QueryRow(uctx, unlockSQL, key).Scan(&unlocked); err != nil || !unlocked {
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}, true, nil
}
