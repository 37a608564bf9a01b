package store

import (
	"context"

	"github.com/provider-ledger/adapter/ledger"
)

// The candidates of a full run, a page of owners at a time, as the run's
// snapshot saw them. Holds and settlements are append-only
// (holds_append_only) and record the transaction that inserted them
// (recorded_xid; NULL before migration 006, seen by every snapshot since):
// a row is in the snapshot when its transaction is visible in it
// (pg_visible_in_snapshot), so the snapshot's view is read back exactly
// from current rows, without holding the snapshot's transaction open
// while the service's lists are read. A hold placed after the snapshot is
// not read; one settled after it is read as held, as the snapshot saw it.
const (
	// $1 the snapshot, $2 the page's lower bound (excluded unless $3),
	// $4 the placing cutoff, $5 the page's upper bound (included). Driven
	// by the page's owners (accounts_owner_idx), then each account's holds
	// placed since the cutoff (holds_account_idx; OFFSET 0 keeps the
	// subquery a probe per account, never a join the planner could turn
	// into a scan of the holds), then the hold's settlement by key.
	candidatesPageFrom = `SELECT h.hold_reference, h.payout_id, a.owner_external_id, coalesce(s.status, 'held'), h.placed_at
FROM accounts a
CROSS JOIN LATERAL (SELECT h.hold_reference, h.payout_id, h.placed_at FROM holds h
                    WHERE h.account_id = a.account_id AND h.placed_at >= $4
                      AND (h.recorded_xid IS NULL OR pg_visible_in_snapshot(h.recorded_xid, $1::pg_snapshot))
                    OFFSET 0) h
LEFT JOIN LATERAL (SELECT s.status FROM hold_settlements s
                   WHERE s.hold_reference = h.hold_reference
                     AND (s.recorded_xid IS NULL OR pg_visible_in_snapshot(s.recorded_xid, $1::pg_snapshot))
                   LIMIT 1) s ON true
WHERE a.owner_external_id >= $2 AND (a.owner_external_id > $2 OR $3)`
	candidatesPageOrder = `
ORDER BY a.owner_external_id, h.placed_at, h.hold_reference`

	candidatesPageSQL     = candidatesPageFrom + ` AND a.owner_external_id <= $5` + candidatesPageOrder
	candidatesLastPageSQL = candidatesPageFrom + candidatesPageOrder
)

// CandidatesPage reads the candidates of one page of owners that a full
// run's snapshot (p.Snapshot) did not read itself: the holds of the
// page's owners placed since p.Since, with their status as the snapshot
// saw them, ordered by owner, placing and reference. One query, driven by
// the page's owners through indexes: its cost is the page's holds since
// p.Since, whatever the history.
func (db *DB) CandidatesPage(ctx context.Context, p ledger.CandidatesPage) ([]ledger.Candidate, error) {
	if p.Through == "" {
		out, err := candidates(ctx, db.pool, candidatesLastPageSQL, p.Snapshot, p.After, p.First, p.Since)
		return out, interpret(err)
	}
	out, err := candidates(ctx, db.pool, candidatesPageSQL, p.Snapshot, p.After, p.First, p.Since, p.Through)
	return out, interpret(err)
}
