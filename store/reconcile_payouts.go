package store

import (
	"context"

	"github.com/provider-ledger/adapter/holds"
)

const (
	// $1 the last owner of the previous page, $2 the page size.
	customersSQL = `SELECT DISTINCT owner_external_id FROM accounts
WHERE kind = 'customer' AND owner_external_id > $1 ORDER BY owner_external_id LIMIT $2`

	// Driven by the payouts given (a few score per list), so that each is
	// one probe of holds_payout_id_key and of hold_settlements_pkey, never
	// a scan of the settlements.
	holdsByPayoutSQL = `SELECT ` + holdColumns + ` FROM unnest($1::text[]) p(id) JOIN hold_states h ON h.payout_id = p.id`
)

// Customers returns a page of the owners (ownerExternalID) of customer
// accounts, each once, in order, after the owner after ("" for the
// first page), at most limit of them: reconciliation reads every
// customer's payments list at the service, a page of customers at a time.
func (db *DB) Customers(ctx context.Context, after string, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, customersSQL, after, limit)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, interpret(err)
		}
		out = append(out, o)
	}
	return out, interpret(rows.Err())
}

// HoldsByPayout reads the holds of the given payouts (those that have
// one; a payout has at most one hold), by payoutID.
func (db *DB) HoldsByPayout(ctx context.Context, payoutIDs []string) (map[string]holds.Hold, error) {
	out := make(map[string]holds.Hold, len(payoutIDs))
	if len(payoutIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, holdsByPayoutSQL, payoutIDs)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, interpret(err)
		}
		out[h.PayoutID] = h
	}
	return out, interpret(rows.Err())
}
