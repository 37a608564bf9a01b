package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/ledger"
)

// Abbreviations of the incremental checks: $1 the checkpoint's snapshot,
// $2 its xmin.
const (
	newJournal     = `j.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(j.recorded_xid, $1::pg_snapshot)`
	newHolds       = `h.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(h.recorded_xid, $1::pg_snapshot)`
	newSettlements = `s.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(s.recorded_xid, $1::pg_snapshot)`
	newCredits     = `c.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(c.recorded_xid, $1::pg_snapshot)`
	newAdjustments = `a.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(a.recorded_xid, $1::pg_snapshot)`

	// The touched accounts (touchedAccountsSQL: $3, with what moved on
	// each since the checkpoint: $4 journal, $5 holds placed, $6 holds
	// settled), each with its stored and proven state, probed by key: the
	// planner cannot know how many accounts the arrays hold, and a probe
	// per account is right whatever their number.
	touchedStates = `t AS (
    SELECT a.account_id, a.kind, a.currency, a.balance, a.held,
           coalesce(p.balance, 0) AS p_balance, coalesce(p.held, 0) AS p_held, u.j_total, u.placed, u.settled
    FROM unnest($3::text[], $4::text[]::numeric[], $5::text[]::numeric[], $6::text[]::numeric[])
         AS u (account_id, j_total, placed, settled)
    CROSS JOIN LATERAL (SELECT * FROM accounts a WHERE a.account_id = u.account_id LIMIT 1) a
    LEFT JOIN LATERAL (SELECT * FROM reconciliation_account_states p WHERE p.account_id = u.account_id LIMIT 1) p ON true
    WHERE $1::pg_snapshot IS NOT NULL AND $2::xid8 IS NOT NULL)`
)

// incrementalChecks are the invariant checks of a run from a checkpoint,
// by kind as invariantChecks: the same rules over what is new since the
// checkpoint, and over the accounts it touched, against their proven
// state. Each reads the rows since the checkpoint through the
// recorded_xid indexes and probes their counterparts by key (a LATERAL
// subquery with LIMIT 1: a probe of the key's index per new row, which the
// planner cannot turn into a scan of a whole table however many rows are
// new).
var incrementalChecks = []invariantCheck{
	{"I1", "balance_drift", `WITH ` + touchedStates + `
SELECT t.account_id, format('stored balance %s, journal sums to %s (%s proven at the checkpoint, %s since)',
       t.balance, t.p_balance + t.j_total, t.p_balance, t.j_total)
FROM t
WHERE t.kind = 'customer' AND t.balance <> t.p_balance + t.j_total
UNION ALL
SELECT account_id, format('a system account stores balance %s, held %s (its balance is the journal''s)', balance, held)
FROM t WHERE kind <> 'customer' AND (balance <> 0 OR held <> 0)`},
	{"I1", "journal_account_mismatch", `
SELECT j.transaction_id::text, format('journal names %s account %s, which %s', j.currency, j.account_id,
       CASE WHEN a.account_id IS NULL THEN 'does not exist' WHEN a.kind <> 'customer' THEN 'is a system account'
            ELSE 'is in ' || a.currency END)
FROM journal j
LEFT JOIN LATERAL (SELECT a.account_id, a.kind, a.currency FROM accounts a WHERE a.account_id = j.account_id LIMIT 1) a ON true
WHERE ` + newJournal + ` AND (a.account_id IS NULL OR a.kind <> 'customer' OR a.currency <> j.currency)`},
	{"I1", "held_drift", `WITH ` + touchedStates + `
SELECT t.account_id, format('stored held %s, held holds sum to %s (%s proven at the checkpoint, %s placed and %s settled since)',
       t.held, t.p_held + t.placed - t.settled, t.p_held, t.placed, t.settled)
FROM t
WHERE t.held <> t.p_held + t.placed - t.settled
UNION ALL
SELECT h.hold_reference, format('a %s hold on account %s, which %s', h.currency, h.account_id,
       CASE WHEN a.account_id IS NULL THEN 'does not exist' WHEN a.kind <> 'customer' THEN 'is a system account'
            ELSE 'is in ' || a.currency END)
FROM holds h
LEFT JOIN LATERAL (SELECT a.account_id, a.kind, a.currency FROM accounts a WHERE a.account_id = h.account_id LIMIT 1) a ON true
WHERE ` + newHolds + ` AND (a.account_id IS NULL OR a.kind <> 'customer' OR a.currency <> h.currency)
UNION ALL
SELECT x.hold_reference,
       CASE WHEN s.hold_reference IS NOT NULL THEN 'listed in open_holds, but settled or never placed'
            WHEN o.hold_reference IS NULL THEN 'held, but missing from open_holds'
            ELSE format('listed in open_holds as %s %s on %s, placed as %s %s on %s',
                        o.amount, o.currency, o.account_id, h.amount, h.currency, h.account_id) END
FROM (SELECT h.hold_reference FROM holds h WHERE ` + newHolds + `
      UNION SELECT s.hold_reference FROM hold_settlements s WHERE ` + newSettlements + `) x
CROSS JOIN LATERAL (SELECT * FROM holds h WHERE h.hold_reference = x.hold_reference LIMIT 1) h
LEFT JOIN LATERAL (SELECT s.hold_reference FROM hold_settlements s WHERE s.hold_reference = x.hold_reference LIMIT 1) s ON true
LEFT JOIN LATERAL (SELECT * FROM open_holds o WHERE o.hold_reference = x.hold_reference LIMIT 1) o ON true
WHERE (s.hold_reference IS NOT NULL AND o.hold_reference IS NOT NULL)
   OR (s.hold_reference IS NULL AND (o.hold_reference IS NULL
       OR (o.account_id, o.currency, o.amount, o.placed_at) IS DISTINCT FROM (h.account_id, h.currency, h.amount, h.placed_at)))`},
	{"I1", "negative_available", `WITH ` + touchedStates + `
SELECT account_id, format('balance %s, held %s', balance, held) FROM t WHERE kind = 'customer' AND balance - held < 0`},
	{"I2", "unbalanced_transaction", `
SELECT j.transaction_id::text, format('%s %s against %s does not balance: its other side must be the %s account of its currency',
       j.kind, j.amount, j.contra_account_id, CASE WHEN j.kind = 'adjustment' THEN 'core' ELSE 'settlement' END)
FROM journal j
WHERE ` + newJournal + ` AND (j.amount = 0
   OR j.contra_account_id <> CASE WHEN j.kind = 'adjustment' THEN 'core:' ELSE 'settlement:' END || j.currency)`},
	{"I3", "hold_journal_mismatch", `
SELECT s.hold_reference, CASE WHEN h.hold_reference IS NULL THEN 'settled, but never placed'
       ELSE format('captured hold of %s %s on %s has capture transaction %s of %s %s on %s', h.amount, h.currency,
                   h.account_id, s.transaction_id, coalesce(j.amount::text, '(none)'), coalesce(j.currency, ''),
                   coalesce(j.account_id, '')) END
FROM hold_settlements s
LEFT JOIN LATERAL (SELECT * FROM holds h WHERE h.hold_reference = s.hold_reference LIMIT 1) h ON true
LEFT JOIN LATERAL (SELECT * FROM journal j WHERE j.transaction_id = s.transaction_id LIMIT 1) j ON true
WHERE ` + newSettlements + ` AND (h.hold_reference IS NULL
   OR (s.status = 'captured' AND (j.transaction_id IS NULL OR j.kind NOT IN ('capture', 'reconciliation')
       OR j.account_id <> h.account_id OR j.currency <> h.currency OR j.amount <> -h.amount)))
UNION ALL
SELECT j.transaction_id::text, format('%s transaction not referenced by exactly one captured hold (%s)', j.kind, n.n)
FROM journal j,
     LATERAL (SELECT count(*) AS n FROM hold_settlements s WHERE s.transaction_id = j.transaction_id AND s.status = 'captured') n
WHERE ` + newJournal + ` AND j.kind IN ('capture', 'reconciliation') AND n.n <> 1`},
	{"I4", "duplicate_effect", `
SELECT j.transaction_id::text, format('adjustment transaction referenced by %s adjustments', n.n)
FROM journal j, LATERAL (SELECT count(*) AS n FROM adjustments a WHERE a.transaction_id = j.transaction_id) n
WHERE ` + newJournal + ` AND j.kind = 'adjustment' AND n.n <> 1
UNION ALL
SELECT a.account_id || ' ' || a.idempotency_key, 'adjustment without its journal transaction'
FROM adjustments a
LEFT JOIN LATERAL (SELECT * FROM journal j WHERE j.transaction_id = a.transaction_id LIMIT 1) j ON true
WHERE ` + newAdjustments + ` AND (j.transaction_id IS NULL OR j.kind <> 'adjustment' OR j.account_id <> a.account_id
   OR j.amount <> a.amount)`},
	{"I5", "duplicate_credit", `
SELECT c.request_id, 'credit without its journal transaction'
FROM credits c
LEFT JOIN LATERAL (SELECT * FROM journal j WHERE j.transaction_id = c.transaction_id LIMIT 1) j ON true
WHERE ` + newCredits + ` AND (j.transaction_id IS NULL OR j.kind <> 'credit' OR j.account_id <> c.account_id
   OR j.amount <> c.amount OR j.memo <> c.request_id)
UNION ALL
SELECT j.memo, CASE WHEN c.request_id IS NULL THEN 'credit transaction without a credit'
       ELSE format('request credited by more than one journal transaction (its credit is transaction %s)', c.transaction_id) END
FROM journal j
LEFT JOIN LATERAL (SELECT * FROM credits c WHERE c.request_id = j.memo LIMIT 1) c ON true
WHERE ` + newJournal + ` AND j.kind = 'credit' AND (c.request_id IS NULL OR c.transaction_id <> j.transaction_id)`},
	{"I6", "currency_imbalance", `WITH ` + touchedStates + `
SELECT coalesce(a.currency, j.currency), format('customer balances moved %s since the checkpoint, but the journal moved %s into customer accounts',
       coalesce(a.total, 0), coalesce(j.total, 0))
FROM (SELECT currency, sum(balance - p_balance) AS total FROM t WHERE kind = 'customer' GROUP BY currency) a
FULL JOIN (SELECT j.currency, sum(j.amount) AS total FROM journal j WHERE ` + newJournal + ` GROUP BY j.currency) j
       ON j.currency = a.currency
WHERE coalesce(a.total, 0) <> coalesce(j.total, 0)`},
}

// checkSince runs every incremental check on tx, timing each.
func checkSince(ctx context.Context, tx pgx.Tx, s since) ([]ledger.Violation, []ledger.Timing, error) {
	var out []ledger.Violation
	timings := make([]ledger.Timing, 0, len(incrementalChecks))
	for _, c := range incrementalChecks {
		args := []any{s.snapshot, s.xmin}
		if strings.Contains(c.sql, "$3") {
			args = append(args, s.accounts, s.journal, s.placed, s.settled)
		}
		vs, took, err := c.run(ctx, tx, " since the checkpoint", args...)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, vs...)
		timings = append(timings, took)
	}
	return out, timings, nil
}

// The checks beyond the invariants of a run from a checkpoint. $1 and $2
// are the checkpoint's snapshot and xmin.
const (
	// Held holds are few (open_holds): read them all. $1 cutoff, $2 now.
	staleHoldsOpenSQL = `SELECT h.hold_reference,
       format('held for %s, since %s; payout %s, %s %s on account %s',
              justify_interval(date_trunc('minute', $2::timestamptz - h.placed_at)),
              to_char(h.placed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
              h.payout_id, h.amount, h.currency, h.account_id)
FROM open_holds o JOIN holds h ON h.hold_reference = o.hold_reference
LEFT JOIN hold_settlements s ON s.hold_reference = o.hold_reference
WHERE s.hold_reference IS NULL AND h.placed_at < $1
ORDER BY h.placed_at, h.hold_reference`

	// The requestIDs received since the checkpoint, under several keys.
	duplicateCreditAttemptsSinceSQL = `SELECT r.subject,
       format('requestID received under %s idempotency keys; %s',
              count(DISTINCT r.idempotency_key),
              coalesce('credited once as ' || min(c.credit_reference), 'not credited'))
FROM callback_credit r
LEFT JOIN credits c ON c.request_id = r.subject
WHERE r.subject IN (SELECT n.subject FROM callback_credit n
                    WHERE n.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(n.recorded_xid, $1::pg_snapshot))
GROUP BY r.subject
HAVING count(DISTINCT r.idempotency_key) > 1
ORDER BY r.subject`

	// Every held hold, and the holds placed or settled since the
	// checkpoint (placed since $3). $3 the cutoff. Each is probed by key
	// (LIMIT 1: a probe, never a join the planner could turn into a scan
	// of the holds): the open holds are few beside history.
	candidatesSinceSQL = `SELECT h.hold_reference, h.payout_id, a.owner_external_id, coalesce(s.status, 'held'), h.placed_at
FROM (SELECT hold_reference FROM open_holds
      UNION SELECT h.hold_reference FROM holds h WHERE ` + newHolds + `
      UNION SELECT s.hold_reference FROM hold_settlements s WHERE ` + newSettlements + `) x
CROSS JOIN LATERAL (SELECT * FROM holds h WHERE h.hold_reference = x.hold_reference LIMIT 1) h
LEFT JOIN LATERAL (SELECT s.status FROM hold_settlements s WHERE s.hold_reference = x.hold_reference LIMIT 1) s ON true
JOIN accounts a ON a.account_id = h.account_id
WHERE s.status IS NULL OR h.placed_at >= $3
ORDER BY a.owner_external_id, h.placed_at, h.hold_reference`

	// The owners credited since the checkpoint, with what was credited to
	// them since $3.
	recipientsSinceSQL = `SELECT a.owner_external_id, c.request_id
FROM (SELECT DISTINCT c.account_id FROM credits c WHERE ` + newCredits + `) n
JOIN accounts a ON a.account_id = n.account_id
JOIN credits c ON c.account_id = n.account_id AND c.created_at >= $3`
)

// reconcileQueriesSince are the checks beyond the invariants of a run from
// a checkpoint: the small tables (orphans, credit conflicts, the audit
// trail, open holds) in full, the others from the checkpoint.
func reconcileQueriesSince(p ledger.ReconcileParams, s *ledger.ReconcileSnapshot, from since) []reconcileQuery {
	return []reconcileQuery{
		{name: "stale_holds", read: readSubjects(&s.StaleHolds, staleHoldsOpenSQL, p.StaleBefore, p.Now)},
		{name: "orphan_captures", read: readSubjects(&s.OrphanCaptures, orphansSQL, "capture")},
		{name: "orphan_releases", read: readSubjects(&s.OrphanReleases, orphansSQL, "release")},
		{name: "duplicate_credit_attempts", read: readSubjects(&s.DuplicateCreditAttempts, duplicateCreditAttemptsSinceSQL,
			from.snapshot, from.xmin)},
		{name: "audit_chain", read: readSubjects(&s.AuditChain, auditChainSQL)},
		{name: "credit_conflicts", read: readSubjects(&s.CreditConflicts, creditConflictsSQL)},
		{name: "recipients", skip: !p.WithProvider, read: func(ctx context.Context, tx pgx.Tx) (err error) {
			s.Recipients, err = recipients(ctx, tx, recipientsSinceSQL, from.snapshot, from.xmin, p.CreditsSince)
			return err
		}},
		{name: "candidates", skip: !p.WithProvider, read: func(ctx context.Context, tx pgx.Tx) (err error) {
			s.Candidates, err = candidates(ctx, tx, candidatesSinceSQL, from.snapshot, from.xmin, p.ComparedSince)
			return err
		}},
	}
}
