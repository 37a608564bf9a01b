package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// Reconciliation's queries: runs and findings (tables
// reconciliation_runs, reconciliation_findings, reconciliation_fixes) and
// the checks beyond the invariants.
const (
	insertRunSQL = `INSERT INTO reconciliation_runs (run_id, started_on, fix) VALUES ($1, $2, $3)`

	finishRunSQL = `UPDATE reconciliation_runs SET finished_on = $2, status = $3, full_run = $4, from_checkpoint = nullif($5, '')
WHERE run_id = $1 AND finished_on IS NULL
RETURNING run_id`

	insertFindingsSQL = `INSERT INTO reconciliation_findings (run_id, seq, kind, severity, subject, detail, fixed, finding_id, is_new, acknowledged)
SELECT $1, f.seq, f.kind, f.severity, f.subject, f.detail, f.fixed, f.finding_id, f.is_new, f.acknowledged
FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[], $9::boolean[], $10::boolean[])
     AS f (seq, kind, severity, subject, detail, fixed, finding_id, is_new, acknowledged)`

	// $1 run, $2 now, $3 kinds, $4 subjects, $5 fresh finding IDs. An issue
	// resolved and seen again is new again and unacknowledged.
	upsertIssuesSQL = `INSERT INTO reconciliation_issues AS i (finding_id, kind, subject, first_run_id, first_seen_on, last_run_id, last_seen_on)
SELECT f.id, f.kind, f.subject, $1, $2, $1, $2 FROM unnest($3::text[], $4::text[], $5::text[]) AS f (kind, subject, id)
ON CONFLICT (kind, subject) DO UPDATE SET last_run_id = $1, last_seen_on = $2,
    first_run_id = CASE WHEN i.resolved_on IS NULL THEN i.first_run_id ELSE $1 END,
    first_seen_on = CASE WHEN i.resolved_on IS NULL THEN i.first_seen_on ELSE $2 END,
    acknowledged_on = CASE WHEN i.resolved_on IS NULL THEN i.acknowledged_on END,
    ack_note = CASE WHEN i.resolved_on IS NULL THEN i.ack_note END,
    resolved_on = NULL
RETURNING i.kind, i.subject, i.finding_id, i.first_run_id = $1, i.acknowledged_on IS NOT NULL`

	// Issues of the given kinds this run did not see are resolved.
	resolveIssuesSQL = `UPDATE reconciliation_issues SET resolved_on = $2
WHERE resolved_on IS NULL AND last_run_id <> $1 AND kind = ANY ($3::text[])`

	acknowledgeSQL = `UPDATE reconciliation_issues SET acknowledged_on = $2, ack_note = $3
WHERE finding_id = $1
RETURNING finding_id, kind, subject, first_run_id, last_run_id, first_seen_on, last_seen_on, acknowledged_on, coalesce(ack_note, '')`

	// The lease of the one run in progress: taken when free or expired.
	acquireLeaseSQL = `INSERT INTO reconciliation_lease AS l (singleton, run_id, holder, expires_at)
VALUES (true, $1, $2, clock_timestamp() + $3::interval)
ON CONFLICT (singleton) DO UPDATE SET run_id = $1, holder = $2, expires_at = clock_timestamp() + $3::interval
WHERE l.expires_at < clock_timestamp()
RETURNING run_id`
	leaseHolderSQL  = `SELECT run_id FROM reconciliation_lease WHERE expires_at >= clock_timestamp()`
	renewLeaseSQL   = `UPDATE reconciliation_lease SET expires_at = clock_timestamp() + $2::interval WHERE run_id = $1`
	releaseLeaseSQL = `DELETE FROM reconciliation_lease WHERE run_id = $1`

	// A run's snapshot is bounded in time.
	snapshotTimeoutSQL = `SELECT set_config('statement_timeout', $1, true)`

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

	// Requests for payment asked again for another amount (credit row 2a).
	creditConflictsSQL = `SELECT k.request_id,
       format('request for payment %s was credited %s %s here (%s); the service asked for it again for %s '
              '(%s attempts, last on %s): answered 422 credit-amount-mismatch, nothing credited',
              k.request_id, min(c.amount), min(c.currency), min(c.credit_reference),
              string_agg(DISTINCT k.amount::text || ' ' || k.currency, ', '), sum(k.attempts),
              to_char(max(k.last_received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM credit_conflicts k
JOIN credits c ON c.request_id = k.request_id
GROUP BY k.request_id
ORDER BY k.request_id`

	// The candidates of a full run its snapshot reads: the held holds
	// placed before $1 (as a run sets it, those are the stale holds); the
	// others, placed since $1, are read a page of owners at a time
	// (candidatesPageSQL).
	heldBeforeSQL = `SELECT h.hold_reference, h.payout_id, a.owner_external_id, h.status, h.placed_at
FROM hold_states h
JOIN accounts a ON a.account_id = h.account_id
WHERE h.status = 'held' AND h.placed_at < $1
ORDER BY a.owner_external_id, h.placed_at, h.hold_reference`

	// The owners of destination instruments, and what was credited to
	// them since $1 (a NULL request: nothing).
	recipientsSQL = `SELECT a.owner_external_id, NULL::text
FROM accounts a WHERE a.kind = 'customer'
  AND EXISTS (SELECT 1 FROM instruments i WHERE i.account_id = a.account_id AND i.kind = 'destination')
UNION ALL
SELECT a.owner_external_id, c.request_id
FROM credits c JOIN accounts a ON a.account_id = c.account_id
WHERE c.created_at >= $1`

	holdStatusSQL = `SELECT status FROM hold_states WHERE hold_reference = $1`

	// $1 hold, $2 payout, $3 status, $4 reference, $5 reason, $6 kind, $7 transaction, $8 now.
	fixSettleSQL = `SELECT outcome, reason, reference, orphan FROM hold_settle(p_status => $3, p_hold_reference => $1,
p_payout_id => $2, p_reference => $4, p_reason => $5, p_kind => $6, p_transaction_id => $7, p_now => $8)`

	// $1 run, $2 hold, $3 action, $4 reference, $5 transaction, $6 payout status, $7 now.
	insertFixSQL = `INSERT INTO reconciliation_fixes (hold_reference, run_id, action, reference, transaction_id, payout_status, created_at)
VALUES ($2, $1, $3, $4, $5, $6, $7)`
)

// InsertRun records a run as started.
func (db *DB) InsertRun(ctx context.Context, runID string, startedOn time.Time, fix bool) error {
	_, err := db.pool.Exec(ctx, insertRunSQL, runID, startedOn, fix)
	return interpret(err)
}

// FinishRun records the run's findings as issues (new, or seen again),
// resolves the issues of the kinds it checked that it did not see, and
// completes the run with its status and findings, in one transaction. It
// returns the findings with their issue's identity and state, and the
// status.
func (db *DB) FinishRun(ctx context.Context, p ledger.FinishParams) ([]ledger.Finding, string, error) {
	var out []ledger.Finding
	var status string
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = append(out[:0], p.Findings...)
		if err := recordIssues(ctx, tx, p.RunID, p.FinishedOn, out); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, resolveIssuesSQL, p.RunID, p.FinishedOn, p.Resolve); err != nil {
			return err
		}
		status = p.Status(out)
		var id string
		if err := tx.QueryRow(ctx, finishRunSQL, p.RunID, p.FinishedOn, status, p.Full, p.From).Scan(&id); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("run %s is gone or finished already", p.RunID)
			}
			return err
		}
		if len(out) == 0 {
			return nil
		}
		n := len(out)
		seq, kind, sev, subj, detail, fixed := make([]int32, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]bool, n)
		ids, fresh, acked := make([]string, n), make([]bool, n), make([]bool, n)
		for i, f := range out {
			seq[i], kind[i], sev[i], subj[i], detail[i], fixed[i] = int32(i), f.Kind, f.Severity, f.Subject, f.Detail, f.Fixed
			ids[i], fresh[i], acked[i] = f.FindingID, f.New, f.Acknowledged
		}
		_, err := tx.Exec(ctx, insertFindingsSQL, p.RunID, seq, kind, sev, subj, detail, fixed, ids, fresh, acked)
		return err
	})
	return out, status, err
}

// recordIssues upserts the issue of each finding and fills in its state.
func recordIssues(ctx context.Context, tx pgx.Tx, runID string, now time.Time, fs []ledger.Finding) error {
	if len(fs) == 0 {
		return nil
	}
	type key struct{ kind, subject string }
	at := make(map[key][]int, len(fs))
	var kinds, subjects, fresh []string
	for i, f := range fs {
		k := key{f.Kind, f.Subject}
		if _, seen := at[k]; !seen {
			kinds, subjects = append(kinds, f.Kind), append(subjects, f.Subject)
			fresh = append(fresh, ledger.NewReference("fnd_"))
		}
		at[k] = append(at[k], i)
	}
	rows, err := tx.Query(ctx, upsertIssuesSQL, runID, now, kinds, subjects, fresh)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var id string
		var isNew, acked bool
		if err := rows.Scan(&k.kind, &k.subject, &id, &isNew, &acked); err != nil {
			return err
		}
		for _, i := range at[k] {
			fs[i].FindingID, fs[i].New, fs[i].Acknowledged = id, isNew, acked
		}
	}
	return rows.Err()
}

// AcknowledgeFinding acknowledges the issue findingID with a note: runs go
// on reporting it, acknowledged, until it is resolved.
// ledger.ErrFindingNotFound when there is no such issue.
func (db *DB) AcknowledgeFinding(ctx context.Context, findingID, note string, now time.Time) (ledger.Issue, error) {
	if !ledger.ValidText(findingID) {
		return ledger.Issue{}, ledger.ErrFindingNotFound
	}
	var is ledger.Issue
	err := db.tx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, acknowledgeSQL, findingID, now, note).Scan(&is.FindingID, &is.Kind, &is.Subject,
			&is.FirstRunID, &is.LastRunID, &is.FirstSeenOn, &is.LastSeenOn, &is.AcknowledgedOn, &is.AckNote)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Issue{}, ledger.ErrFindingNotFound
	}
	return is, err
}

// AcquireLease takes the lease of the one reconciliation run in progress
// for runID, for ttl; when another run holds it, ok is false and current
// names that run.
func (db *DB) AcquireLease(ctx context.Context, runID, holder string, ttl time.Duration) (ok bool, current string, err error) {
	var got string
	err = db.pool.QueryRow(ctx, acquireLeaseSQL, runID, holder, ttl.String()).Scan(&got)
	switch {
	case err == nil:
		return true, runID, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return false, "", interpret(err)
	}
	err = db.pool.QueryRow(ctx, leaseHolderSQL).Scan(&current)
	if errors.Is(err, pgx.ErrNoRows) {
		// Released or expired in between: try once more.
		return db.acquireOnce(ctx, runID, holder, ttl)
	}
	return false, current, interpret(err)
}

func (db *DB) acquireOnce(ctx context.Context, runID, holder string, ttl time.Duration) (bool, string, error) {
	var got string
	err := db.pool.QueryRow(ctx, acquireLeaseSQL, runID, holder, ttl.String()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, "", nil
	}
	return err == nil, runID, interpret(err)
}

// RenewLease extends runID's lease to ttl from now.
func (db *DB) RenewLease(ctx context.Context, runID string, ttl time.Duration) error {
	_, err := db.pool.Exec(ctx, renewLeaseSQL, runID, ttl.String())
	return interpret(err)
}

// ReleaseLease gives runID's lease back.
func (db *DB) ReleaseLease(ctx context.Context, runID string) error {
	_, err := db.pool.Exec(ctx, releaseLeaseSQL, runID)
	return interpret(err)
}

// Reconcile reads every check of a reconciliation from one consistent
// snapshot: the invariants, holds held since before staleBefore,
// orphans, duplicate credit attempts, and, with candidates, the holds to
// compare with the service (released ones placed since releasedSince).
// A full run reads, of the candidates, only the held holds placed before
// p.ComparedSince: the others are read a page of owners at a time, as of
// the snapshot (CandidatesPage). From a checkpoint (p.From), the
// invariants and the checks whose cost
// grows with history read only what the checkpoint's snapshot did not see
// (incrementalChecks, reconcileQueriesSince). With p.Checkpoint, a
// snapshot whose invariant checks found nothing writes a checkpoint, in
// its own transaction (so that the account states are the snapshot's).
// Each statement of the snapshot is bounded by timeout (0: no bound), so
// that a run cannot hold a snapshot open for ever. Every query of a full
// run is a scan or a hash join of whole tables, linear in their size (see
// TestReconciliationQueriesAreLinear).
func (db *DB) Reconcile(ctx context.Context, p ledger.ReconcileParams) (ledger.ReconcileSnapshot, error) {
	var s ledger.ReconcileSnapshot
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	if p.Checkpoint {
		opts.AccessMode = pgx.ReadWrite
	}
	err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		s = ledger.ReconcileSnapshot{}
		if _, err := tx.Exec(ctx, snapshotTimeoutSQL, strconv.FormatInt(p.Timeout.Milliseconds(), 10)); err != nil {
			return err
		}
		if p.From != "" {
			// Many short queries, each a few index probes per new row: the
			// planner's estimates (arrays of unknown length) would have
			// them compiled (JIT), which costs more than they run.
			if _, err := tx.Exec(ctx, `SELECT set_config('jit', 'off', true)`); err != nil {
				return err
			}
		}
		var taken string
		if err := tx.QueryRow(ctx, currentSnapshotSQL).Scan(&taken); err != nil {
			return err
		}
		s.Snapshot = taken
		from, err := readInvariants(ctx, tx, p, &s)
		if err != nil {
			return err
		}
		queries := reconcileQueries(p, &s)
		if p.From != "" {
			queries = reconcileQueriesSince(p, &s, from)
		}
		for _, q := range queries {
			if q.skip {
				continue
			}
			start := time.Now()
			if err := q.read(ctx, tx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			s.Timings = append(s.Timings, ledger.Timing{Query: q.name, Took: time.Since(start)})
		}
		if !p.Checkpoint || len(s.Violations) > 0 {
			return nil
		}
		var accounts []string // every account
		if p.From != "" {
			accounts = from.accounts
		}
		start := time.Now()
		s.Checkpoint, err = writeCheckpoint(ctx, tx, p, taken, accounts)
		s.Timings = append(s.Timings, ledger.Timing{Query: "checkpoint", Took: time.Since(start)})
		return err
	})
	return s, interpret(err)
}

// readInvariants runs the invariant checks into s: all of history, or
// from p.From what is new since (then it returns the checkpoint's
// snapshot and the accounts touched since).
func readInvariants(ctx context.Context, tx pgx.Tx, p ledger.ReconcileParams, s *ledger.ReconcileSnapshot) (since, error) {
	var err error
	if p.From == "" {
		s.Violations, s.Timings, err = checkInvariants(ctx, tx)
		return since{}, err
	}
	start := time.Now()
	from, err := readSince(ctx, tx, p.From)
	if err != nil {
		return from, err
	}
	took := time.Since(start)
	if s.Violations, s.Timings, err = checkSince(ctx, tx, from); err != nil {
		return from, err
	}
	s.Timings = append([]ledger.Timing{{Query: "accounts_since", Invariant: "I1", Took: took}}, s.Timings...)
	return from, nil
}

// reconcileQuery is one check of a snapshot beyond the invariants.
type reconcileQuery struct {
	name string
	skip bool
	read func(context.Context, pgx.Tx) error
}

// readSubjects reads the (subject, detail) rows of sql into dst.
func readSubjects(dst *[]ledger.Subject, sql string, args ...any) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		*dst, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Subject, error) {
			var x ledger.Subject
			return x, r.Scan(&x.Subject, &x.Detail)
		})
		return err
	}
}

// reconcileQueries are the checks of a snapshot beyond the invariants,
// each reading into s; the comparison's are skipped without a provider.
func reconcileQueries(p ledger.ReconcileParams, s *ledger.ReconcileSnapshot) []reconcileQuery {
	return []reconcileQuery{
		{name: "stale_holds", read: readSubjects(&s.StaleHolds, staleHoldsSQL, p.StaleBefore, p.Now)},
		{name: "orphan_captures", read: readSubjects(&s.OrphanCaptures, orphansSQL, "capture")},
		{name: "orphan_releases", read: readSubjects(&s.OrphanReleases, orphansSQL, "release")},
		{name: "duplicate_credit_attempts", read: readSubjects(&s.DuplicateCreditAttempts, duplicateCreditAttemptsSQL)},
		{name: "audit_chain", read: readSubjects(&s.AuditChain, auditChainSQL)},
		{name: "credit_conflicts", read: readSubjects(&s.CreditConflicts, creditConflictsSQL)},
		{name: "recipients", skip: !p.WithProvider, read: func(ctx context.Context, tx pgx.Tx) (err error) {
			s.Recipients, err = recipients(ctx, tx, recipientsSQL, p.CreditsSince)
			return err
		}},
		{name: "candidates", skip: !p.WithProvider, read: func(ctx context.Context, tx pgx.Tx) (err error) {
			s.Candidates, err = candidates(ctx, tx, heldBeforeSQL, p.ComparedSince)
			return err
		}},
	}
}

// candidates reads candidates in the snapshot's order (by owner), one
// string per distinct owner and status.
func candidates(ctx context.Context, q querier, sql string, args ...any) ([]ledger.Candidate, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ledger.Candidate
	var owner, status pgtype.DriverBytes
	var owners, statuses interned
	for rows.Next() {
		var c ledger.Candidate
		if err := rows.Scan(&c.HoldReference, &c.PayoutID, &owner, &status, &c.PlacedAt); err != nil {
			return nil, err
		}
		c.Owner, c.Status = owners.get(owner), statuses.get(status)
		out = append(out, c)
	}
	return out, rows.Err()
}

// interned hands out one string per distinct value it is given.
type interned map[string]string

func (in *interned) get(b []byte) string {
	if s, ok := (*in)[string(b)]; ok {
		return s
	}
	if *in == nil || len(*in) >= 4096 {
		*in = interned{} // values in order (owners): the recent ones repeat
	}
	s := string(b)
	(*in)[s] = s
	return s
}

func recipients(ctx context.Context, tx pgx.Tx, sql string, args ...any) (map[string]map[string]bool, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var owner string
		var request *string
		if err := rows.Scan(&owner, &request); err != nil {
			return nil, err
		}
		if out[owner] == nil {
			out[owner] = map[string]bool{}
		}
		if request != nil {
			out[owner][*request] = true
		}
	}
	return out, rows.Err()
}

// FixHold settles a held hold as a reconciliation fix: by hold_settle, the
// callbacks' own decision (a capture journaled as kind reconciliation),
// with a row of reconciliation_fixes in the same transaction. A hold that
// is no longer held (a late callback, a concurrent run) is left alone.
func (db *DB) FixHold(ctx context.Context, p holds.FixParams) (holds.FixResult, error) {
	var res holds.FixResult
	err := db.tx(ctx, func(tx pgx.Tx) error {
		res = holds.FixResult{}
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
