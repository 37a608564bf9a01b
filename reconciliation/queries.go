package reconciliation

// Runs and findings (table reconciliation_runs, reconciliation_findings).
const (
	insertRunSQL = `
INSERT INTO reconciliation_runs (run_id, started_on, fix) VALUES ($1, $2, $3)`

	finishRunSQL = `
UPDATE reconciliation_runs SET finished_on = $2, status = $3
WHERE run_id = $1 AND finished_on IS NULL
RETURNING run_id`

	insertFindingsSQL = `
INSERT INTO reconciliation_findings (run_id, seq, kind, severity, subject, detail, fixed)
SELECT $1, f.seq, f.kind, f.severity, f.subject, f.detail, f.fixed
FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[])
     AS f (seq, kind, severity, subject, detail, fixed)`
)

// Checks beyond ledger.CheckInvariants, each returning (subject, detail)
// rows in a stable order. They read committed tables only.
const (
	// $1: now - HoldMaxAge; $2: now.
	staleHoldsSQL = `
SELECT hold_reference,
       format('held for %s, since %s; payout %s, %s %s on account %s',
              justify_interval(date_trunc('minute', $2::timestamptz - placed_at)),
              to_char(placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
              payout_id, amount, currency, account_id)
FROM holds
WHERE status = 'held' AND placed_at < $1
ORDER BY placed_at, hold_reference`

	// $1: orphans.kind.
	orphansSQL = `
SELECT hold_reference,
       format('%s of a hold reference never issued here, payout %s, answered %s on %s',
              kind, CASE WHEN payout_id = '' THEN '(not given)' ELSE payout_id END, reference,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM orphans
WHERE kind = $1
ORDER BY created_at, hold_reference`

	// A requestID received under several idempotency keys: credited at most
	// once (I5), but the service, or someone, sent it twice.
	duplicateCreditAttemptsSQL = `
SELECT r.subject,
       format('requestID received under %s idempotency keys; %s',
              count(DISTINCT r.idempotency_key),
              coalesce('credited once as ' || min(c.credit_reference), 'not credited'))
FROM callback_requests r
LEFT JOIN credits c ON c.request_id = r.subject
WHERE r.endpoint = 'credit-account'
GROUP BY r.subject
HAVING count(DISTINCT r.idempotency_key) > 1
ORDER BY r.subject`

	// Holds to compare with the service: every held hold, and released
	// holds placed since $1 (now - HoldMaxAge), grouped by sender.
	candidatesSQL = `
SELECT h.hold_reference, h.payout_id, h.account_id, a.owner_external_id, h.status, h.currency, h.amount, h.placed_at
FROM holds h
JOIN accounts a ON a.account_id = h.account_id
WHERE h.status = 'held' OR (h.status = 'released' AND h.placed_at >= $1)
ORDER BY a.owner_external_id, h.placed_at, h.hold_reference`
)

// Fixes (table reconciliation_fixes). The two locks come first, in the
// ledger's order (account row, then hold row), so that the decision reads
// the current state and no callback can interleave.
const (
	lockAccountSQL = `SELECT 1 FROM accounts WHERE account_id = $1 FOR NO KEY UPDATE`
	lockHoldSQL    = `SELECT status FROM holds WHERE hold_reference = $1 FOR UPDATE`

	// $1 run, $2 hold, $3 action, $4 reference, $5 payout status, $6 now.
	insertFixSQL = `
INSERT INTO reconciliation_fixes (hold_reference, run_id, action, reference, transaction_id, payout_status, created_at)
SELECT h.hold_reference, $1, $3, $4, h.transaction_id, $5, $6
FROM holds h WHERE h.hold_reference = $2
RETURNING transaction_id::text`
)

// Scheduling.
const (
	tryLockSQL = `SELECT pg_try_advisory_lock($1)`
	unlockSQL  = `SELECT pg_advisory_unlock($1)`
)
