package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/ledger"
)

// invariantChecks are set-based queries, one per rule, each returning
// (subject, detail) rows for every breach. They read only committed
// tables, never the functions that write them, so they are an independent
// second path over the same facts. Each is a scan or a hash join of whole
// tables, linear in their size (no correlated subquery): see
// TestInvariantChecksAreLinear.
var invariantChecks = []invariantCheck{
	{"I1", "balance_drift", `
SELECT a.account_id, format('stored balance %s, journal sums to %s', a.balance, coalesce(e.total, 0))
FROM accounts a
LEFT JOIN (SELECT account_id, sum(amount) AS total FROM journal GROUP BY account_id) e USING (account_id)
WHERE a.kind = 'customer' AND a.balance <> coalesce(e.total, 0)
UNION ALL
SELECT account_id, format('a system account stores balance %s, held %s (its balance is the journal''s)', balance, held)
FROM accounts WHERE kind <> 'customer' AND (balance <> 0 OR held <> 0)`},
	{"I1", "journal_account_mismatch", `
SELECT j.transaction_id::text, format('journal names %s account %s, which %s', j.currency, j.account_id,
       CASE WHEN a.account_id IS NULL THEN 'does not exist' WHEN a.kind <> 'customer' THEN 'is a system account'
            ELSE 'is in ' || a.currency END)
FROM journal j LEFT JOIN accounts a ON a.account_id = j.account_id
WHERE a.account_id IS NULL OR a.kind <> 'customer' OR a.currency <> j.currency`},
	{"I1", "held_drift", `
SELECT a.account_id, format('stored held %s, held holds sum to %s', a.held, coalesce(h.total, 0))
FROM accounts a
LEFT JOIN (SELECT h.account_id, sum(h.amount) AS total FROM holds h
           LEFT JOIN hold_settlements s ON s.hold_reference = h.hold_reference
           WHERE s.hold_reference IS NULL GROUP BY h.account_id) h USING (account_id)
WHERE a.held <> coalesce(h.total, 0)
UNION ALL
SELECT h.hold_reference, format('a %s hold on account %s, which %s', h.currency, h.account_id,
       CASE WHEN a.account_id IS NULL THEN 'does not exist' WHEN a.kind <> 'customer' THEN 'is a system account'
            ELSE 'is in ' || a.currency END)
FROM holds h LEFT JOIN accounts a ON a.account_id = h.account_id
WHERE a.account_id IS NULL OR a.kind <> 'customer' OR a.currency <> h.currency
UNION ALL
SELECT coalesce(h.hold_reference, o.hold_reference),
       CASE WHEN o.hold_reference IS NULL THEN 'held, but missing from open_holds'
            WHEN h.hold_reference IS NULL THEN 'listed in open_holds, but settled or never placed'
            ELSE format('listed in open_holds as %s %s on %s, placed as %s %s on %s',
                        o.amount, o.currency, o.account_id, h.amount, h.currency, h.account_id) END
FROM (SELECT h.hold_reference, h.account_id, h.currency, h.amount, h.placed_at FROM holds h
      LEFT JOIN hold_settlements s ON s.hold_reference = h.hold_reference
      WHERE s.hold_reference IS NULL) h
FULL JOIN open_holds o ON o.hold_reference = h.hold_reference
WHERE h.hold_reference IS NULL OR o.hold_reference IS NULL
   OR (o.account_id, o.currency, o.amount, o.placed_at) IS DISTINCT FROM (h.account_id, h.currency, h.amount, h.placed_at)`},
	{"I1", "negative_available", `
SELECT account_id, format('balance %s, held %s', balance, held)
FROM accounts WHERE kind = 'customer' AND balance - held < 0`},
	{"I2", "unbalanced_transaction", `
SELECT transaction_id::text, format('%s %s against %s does not balance: its other side must be the %s account of its currency',
       kind, amount, contra_account_id, CASE WHEN kind = 'adjustment' THEN 'core' ELSE 'settlement' END)
FROM journal
WHERE amount = 0 OR contra_account_id <> CASE WHEN kind = 'adjustment' THEN 'core:' ELSE 'settlement:' END || currency`},
	{"I3", "hold_journal_mismatch", `
SELECT s.hold_reference, CASE WHEN h.hold_reference IS NULL THEN 'settled, but never placed'
       ELSE format('captured hold of %s %s on %s has capture transaction %s of %s %s on %s', h.amount, h.currency,
                   h.account_id, s.transaction_id, coalesce(j.amount::text, '(none)'), coalesce(j.currency, ''),
                   coalesce(j.account_id, '')) END
FROM hold_settlements s
LEFT JOIN holds h ON h.hold_reference = s.hold_reference
LEFT JOIN journal j ON j.transaction_id = s.transaction_id
WHERE h.hold_reference IS NULL
   OR (s.status = 'captured' AND (j.transaction_id IS NULL OR j.kind NOT IN ('capture', 'reconciliation')
       OR j.account_id <> h.account_id OR j.currency <> h.currency OR j.amount <> -h.amount))
UNION ALL
SELECT j.transaction_id::text, format('%s transaction not referenced by exactly one captured hold (%s)', j.kind, coalesce(s.n, 0))
FROM journal j
LEFT JOIN (SELECT transaction_id, count(*) AS n FROM hold_settlements WHERE status = 'captured' GROUP BY transaction_id) s
       ON s.transaction_id = j.transaction_id
WHERE j.kind IN ('capture', 'reconciliation') AND coalesce(s.n, 0) <> 1`},
	{"I4", "duplicate_effect", `
SELECT j.transaction_id::text, format('adjustment transaction referenced by %s adjustments', coalesce(a.n, 0))
FROM journal j
LEFT JOIN (SELECT transaction_id, count(*) AS n FROM adjustments GROUP BY transaction_id) a ON a.transaction_id = j.transaction_id
WHERE j.kind = 'adjustment' AND coalesce(a.n, 0) <> 1
UNION ALL
SELECT a.account_id || ' ' || a.idempotency_key, 'adjustment without its journal transaction'
FROM adjustments a LEFT JOIN journal j ON j.transaction_id = a.transaction_id
WHERE j.transaction_id IS NULL OR j.kind <> 'adjustment' OR j.account_id <> a.account_id OR j.amount <> a.amount`},
	{"I5", "duplicate_credit", `
SELECT memo, format('request credited by %s journal transactions', count(*))
FROM journal WHERE kind = 'credit' GROUP BY memo HAVING count(*) <> 1
UNION ALL
SELECT c.request_id, 'credit without its journal transaction'
FROM credits c LEFT JOIN journal j ON j.transaction_id = c.transaction_id
WHERE j.transaction_id IS NULL OR j.kind <> 'credit' OR j.account_id <> c.account_id OR j.amount <> c.amount
   OR j.memo <> c.request_id
UNION ALL
SELECT j.memo, 'credit transaction without a credit'
FROM journal j LEFT JOIN credits c ON c.transaction_id = j.transaction_id
WHERE j.kind = 'credit' AND c.transaction_id IS NULL`},
	{"I6", "currency_imbalance", `
SELECT coalesce(a.currency, j.currency), format('customer balances sum to %s, but the journal moved %s into customer accounts',
       coalesce(a.total, 0), coalesce(j.total, 0))
FROM (SELECT currency, sum(balance) AS total FROM accounts WHERE kind = 'customer' GROUP BY currency) a
FULL JOIN (SELECT currency, sum(amount) AS total FROM journal GROUP BY currency) j ON j.currency = a.currency
WHERE coalesce(a.total, 0) <> coalesce(j.total, 0)`},
}

// CheckInvariants runs every invariant check on one consistent snapshot
// and returns the violations found; none means the ledger is consistent.
func (db *DB) CheckInvariants(ctx context.Context) ([]ledger.Violation, error) {
	var out []ledger.Violation
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		var err error
		out, _, err = checkInvariants(ctx, tx)
		return err
	})
	return out, err
}

// checkInvariants runs every check on tx, timing each.
func checkInvariants(ctx context.Context, tx pgx.Tx) ([]ledger.Violation, []ledger.Timing, error) {
	var out []ledger.Violation
	timings := make([]ledger.Timing, 0, len(invariantChecks))
	for _, c := range invariantChecks {
		vs, took, err := c.run(ctx, tx, "")
		if err != nil {
			return nil, nil, err
		}
		out = append(out, vs...)
		timings = append(timings, took)
	}
	return out, timings, nil
}

// invariantCheck is one query of the invariant checks: each row it
// returns is a violation of invariant, of kind, as (subject, detail).
type invariantCheck struct {
	invariant, kind, sql string
}

// run runs the check's query on tx with args, its errors named by the
// check and what (" since the checkpoint", say), and times it.
func (c invariantCheck) run(ctx context.Context, tx pgx.Tx, what string, args ...any) ([]ledger.Violation, ledger.Timing, error) {
	start := time.Now()
	rows, err := tx.Query(ctx, c.sql, args...)
	if err != nil {
		return nil, ledger.Timing{}, fmt.Errorf("invariant %s %s%s: %w", c.invariant, c.kind, what, err)
	}
	vs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Violation, error) {
		v := ledger.Violation{Invariant: c.invariant, Kind: c.kind}
		return v, r.Scan(&v.Subject, &v.Detail)
	})
	if err != nil {
		return nil, ledger.Timing{}, fmt.Errorf("invariant %s %s%s: %w", c.invariant, c.kind, what, err)
	}
	return vs, ledger.Timing{Query: c.kind, Invariant: c.invariant, Took: time.Since(start)}, nil
}
