package ledger

import (
	"context"
	"fmt"
)

// Violation is one breach of an invariant of the ledger (see doc.go).
type Violation struct {
	Invariant string `json:"invariant"` // I1 .. I6
	Kind      string `json:"kind"`      // a reconciliation finding kind
	Subject   string `json:"subject"`   // account, transaction, hold, request or currency
	Detail    string `json:"detail"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s %s: %s", v.Invariant, v.Kind, v.Subject, v.Detail)
}

// invariantChecks are set-based queries, one per rule, each returning
// (subject, detail) rows for every breach. They read only committed
// tables, never the functions that write them, so they are an independent
// second path over the same facts.
var invariantChecks = []struct {
	invariant, kind, sql string
}{
	{"I1", "balance_drift", `
SELECT a.account_id, format('stored balance %s, journal sums to %s', b.stored, coalesce(e.total, 0))
FROM accounts a
JOIN LATERAL (SELECT CASE WHEN a.kind = 'customer' THEN a.balance
                          ELSE (SELECT coalesce(sum(balance), 0) FROM account_shards s WHERE s.account_id = a.account_id) END AS stored) b ON true
LEFT JOIN (SELECT account_id, sum(amount) AS total FROM journal_entries GROUP BY account_id) e USING (account_id)
WHERE b.stored <> coalesce(e.total, 0)`},
	{"I1", "held_drift", `
SELECT a.account_id, format('stored held %s, held holds sum to %s', a.held, coalesce(h.total, 0))
FROM accounts a
LEFT JOIN (SELECT account_id, sum(amount) AS total FROM holds WHERE status = 'held' GROUP BY account_id) h USING (account_id)
WHERE a.held <> coalesce(h.total, 0)`},
	{"I1", "negative_available", `
SELECT account_id, format('balance %s, held %s', balance, held)
FROM accounts WHERE kind = 'customer' AND balance - held < 0`},
	{"I2", "unbalanced_transaction", `
SELECT transaction_id::text, format('%s entries sum to %s', currency, sum(amount))
FROM journal_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0`},
	{"I3", "hold_journal_mismatch", `
SELECT h.hold_reference, format('%s hold of %s has %s capture entries on its account', h.status, h.amount, count(e.entry_id))
FROM holds h
LEFT JOIN journal_entries e ON e.transaction_id = h.transaction_id AND e.account_id = h.account_id AND e.amount = -h.amount
GROUP BY h.hold_reference, h.status, h.amount
HAVING (h.status = 'captured') <> (count(e.entry_id) = 1)
UNION ALL
SELECT t.transaction_id::text, 'capture transaction not referenced by exactly one captured hold'
FROM journal_transactions t
WHERE t.kind = 'capture' AND (SELECT count(*) FROM holds h WHERE h.transaction_id = t.transaction_id AND h.status = 'captured') <> 1`},
	{"I4", "duplicate_effect", `
SELECT t.transaction_id::text, 'adjustment transaction not referenced by exactly one adjustment'
FROM journal_transactions t
WHERE t.kind = 'adjustment' AND (SELECT count(*) FROM adjustments j WHERE j.transaction_id = t.transaction_id) <> 1`},
	{"I5", "duplicate_credit", `
SELECT t.memo, format('request credited by %s journal transactions', count(*))
FROM journal_transactions t WHERE t.kind = 'credit'
GROUP BY t.memo HAVING count(*) <> 1 OR count(*) <> (SELECT count(*) FROM credits c WHERE c.request_id = t.memo)`},
	{"I6", "currency_imbalance", `
SELECT currency, format('balances sum to %s', sum(amount))
FROM journal_entries GROUP BY currency HAVING sum(amount) <> 0
UNION ALL
SELECT a.currency, format('stored balances sum to %s', sum(CASE WHEN a.kind = 'customer' THEN a.balance ELSE 0 END) + coalesce((SELECT sum(s.balance) FROM account_shards s JOIN accounts x USING (account_id) WHERE x.currency = a.currency), 0))
FROM accounts a GROUP BY a.currency
HAVING sum(CASE WHEN a.kind = 'customer' THEN a.balance ELSE 0 END) + coalesce((SELECT sum(s.balance) FROM account_shards s JOIN accounts x USING (account_id) WHERE x.currency = a.currency), 0) <> 0`},
}

// CheckInvariants runs every invariant check through q and returns the
// violations found; none means the ledger is consistent. Run it in a
// REPEATABLE READ transaction for a consistent picture under traffic.
func CheckInvariants(ctx context.Context, q DBTX) ([]Violation, error) {
	var out []Violation
	for _, c := range invariantChecks {
		rows, err := q.Query(ctx, c.sql)
		if err != nil {
			return nil, fmt.Errorf("ledger: invariant %s %s: %w", c.invariant, c.kind, err)
		}
		for rows.Next() {
			v := Violation{Invariant: c.invariant, Kind: c.kind}
			if err := rows.Scan(&v.Subject, &v.Detail); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("ledger: invariant %s %s: %w", c.invariant, c.kind, err)
		}
	}
	return out, nil
}

// CheckInvariants runs CheckInvariants on a consistent snapshot.
func (s *Store) CheckInvariants(ctx context.Context) ([]Violation, error) {
	tx, err := s.pool.BeginTx(ctx, pgxTxRepeatableReadReadOnly)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	return CheckInvariants(ctx, tx)
}
