package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// Holds as readers see them: the view hold_states (a hold with its
// settlement, if any).
const (
	holdColumns = `hold_reference, payout_id, account_id, funding_source, currency, amount, status,
coalesce(capture_reference, ''), coalesce(release_reference, ''), coalesce(release_reason, ''),
placed_at, captured_at, released_at`

	selectHoldSQL = `SELECT ` + holdColumns + ` FROM hold_states WHERE hold_reference = $1`

	// Newest first; $3/$4 the position to resume after ('' from the top).
	listHoldsSQL = `SELECT ` + holdColumns + ` FROM hold_states
WHERE ($1 = '' OR payout_id = $1) AND ($2 = '' OR status = $2) AND ($5 = '' OR account_id = $5)
  AND ($3 = '' OR (placed_at, hold_reference) < ($4, $3))
ORDER BY placed_at DESC, hold_reference DESC
LIMIT $6`

	// Read from open_holds: as many rows as holds are
	// held, whatever the size of the history.
	outstandingSQL = `SELECT currency, count(*), sum(amount), count(*) FILTER (WHERE placed_at < $1)
FROM open_holds GROUP BY currency`

	// Held holds only: the page is chosen among open_holds (as many rows as
	// holds are held), then its holds read by key, so that a page of the
	// held never walks the history of settled holds before them.
	listHeldSQL = `SELECT ` + holdColumns + ` FROM hold_states
WHERE hold_reference = ANY (ARRAY(SELECT o.hold_reference FROM open_holds o
      WHERE ($5 = '' OR o.account_id = $5) AND ($3 = '' OR (o.placed_at, o.hold_reference) < ($4, $3))
      ORDER BY o.placed_at DESC, o.hold_reference DESC LIMIT $6))
  AND ($1 = '' OR payout_id = $1) AND $2 = 'held'
ORDER BY placed_at DESC, hold_reference DESC`
)

func scanHold(row pgx.Row) (holds.Hold, error) {
	var h holds.Hold
	err := row.Scan(&h.HoldReference, &h.PayoutID, &h.AccountID, &h.FundingSource, &h.Currency, &h.Amount,
		&h.Status, &h.CaptureReference, &h.ReleaseReference, &h.ReleaseReason, &h.PlacedAt, &h.CapturedAt, &h.ReleasedAt)
	return h, err
}

// GetHold reads one hold; ledger.ErrHoldNotFound when there is none.
func (db *DB) GetHold(ctx context.Context, holdReference string) (holds.Hold, error) {
	if !ledger.ValidText(holdReference) {
		return holds.Hold{}, ledger.ErrHoldNotFound
	}
	h, err := scanHold(db.pool.QueryRow(ctx, selectHoldSQL, holdReference))
	if errors.Is(err, pgx.ErrNoRows) {
		return holds.Hold{}, ledger.ErrHoldNotFound
	}
	return h, interpret(err)
}

// ListHolds returns holds newest first, filtered by payoutID, accountID
// and status, a page at a time.
func (db *DB) ListHolds(ctx context.Context, o holds.ListOptions) (holds.Page, error) {
	pos, err := o.Validate()
	if err != nil {
		return holds.Page{}, err
	}
	sql := listHoldsSQL
	if o.Status == holds.StatusHeld && o.PayoutID == "" {
		sql = listHeldSQL
	}
	rows, err := db.pool.Query(ctx, sql, o.PayoutID, o.Status, pos.HoldReference, pos.PlacedAt, o.AccountID, o.Limit+1)
	if err != nil {
		return holds.Page{}, interpret(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (holds.Hold, error) { return scanHold(r) })
	if err != nil {
		return holds.Page{}, interpret(err)
	}
	p := holds.Page{Holds: list}
	if len(list) > o.Limit {
		p.Holds, p.HasMore = list[:o.Limit], true
		p.NextCursor = holds.EncodeCursor(p.Holds[o.Limit-1])
	}
	if p.Holds == nil {
		p.Holds = []holds.Hold{}
	}
	return p, nil
}

// OutstandingHolds returns the held holds per currency, counting those
// placed before staleBefore as stale.
func (db *DB) OutstandingHolds(ctx context.Context, staleBefore time.Time) ([]holds.Outstanding, error) {
	rows, err := db.pool.Query(ctx, outstandingSQL, staleBefore)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (holds.Outstanding, error) {
		var o holds.Outstanding
		err := r.Scan(&o.Currency, &o.Count, &o.Amount, &o.Stale)
		return o, err
	})
	return out, interpret(err)
}
