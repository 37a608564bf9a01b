package store

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Dual control of adjustments (table adjustment_requests; function
// ledger_adjustment_decide, the one place its states are decided).

// decideArgs are ledger_adjustment_decide's arguments.
type decideArgs struct {
	Action        string           `arg:"p_action"`
	AdjustmentID  *string          `arg:"p_adjustment_id"`
	AccountID     *string          `arg:"p_account_id"`
	Amount        *decimal.Decimal `arg:"p_amount"`
	Key           *string          `arg:"p_key"`
	Memo          *string          `arg:"p_memo"`
	ApprovalOver  *decimal.Decimal `arg:"p_approval_over"`
	ExpiresAt     *time.Time       `arg:"p_expires_at"`
	ActorID       string           `arg:"p_actor_id"`
	ActorName     string           `arg:"p_actor_name"`
	Note          *string          `arg:"p_note"`
	TransactionID uuid.UUID        `arg:"p_transaction_id"`
	Now           time.Time        `arg:"p_now"`
}

var decideCall = newCall[decideArgs]("ledger_adjustment_decide", "outcome, adjustment_id, transaction_id::text, replayed")

const (
	// The status as of $1: a pending request at or past its expiry is
	// expired.
	pendingStatus = `CASE WHEN status = 'pending' AND expires_at <= $1 THEN 'expired' ELSE status END`

	pendingColumns = `adjustment_id, account_id, currency, amount, idempotency_key, memo, ` + pendingStatus + `,
maker_id, maker_name, requested_at, expires_at, coalesce(checker_id, ''), coalesce(checker_name, ''), decided_at,
coalesce(note, ''), coalesce(transaction_id::text, '')`

	selectPendingSQL = `SELECT ` + pendingColumns + ` FROM adjustment_requests WHERE adjustment_id = $2`

	// $2 account ('' any), $3 status ('' any), $4/$5 the cursor's position
	// (NULL: the first page), $6 limit. Newest first.
	listPendingSQL = `SELECT ` + pendingColumns + ` FROM adjustment_requests
WHERE ($2 = '' OR account_id = $2) AND ($3 = '' OR ` + pendingStatus + ` = $3)
  AND ($4::timestamptz IS NULL OR (requested_at, adjustment_id) < ($4, $5::text))
ORDER BY requested_at DESC, adjustment_id DESC
LIMIT $6`
)

// RequestAdjustment requests an adjustment through dual control: applied
// at once when dual control is off or the amount is not over the
// threshold (as Adjust), else held for approval (ledger_adjustment_decide,
// rows R1 to R6). A key already used replays what it did.
func (db *DB) RequestAdjustment(ctx context.Context, p ledger.AdjustmentParams) (ledger.AdjustmentOutcome, error) {
	if err := ledger.ValidateAdjustment(p.Amount, p.Key, p.Memo); err != nil {
		return ledger.AdjustmentOutcome{}, err
	}
	if !ledger.ValidText(p.AccountID) {
		return ledger.AdjustmentOutcome{}, ledger.ErrAccountNotFound
	}
	expires := p.Now.Add(p.TTL)
	args := decideArgs{Action: "request", AdjustmentID: ptr(ledger.NewReference("adj_")), AccountID: &p.AccountID, Amount: &p.Amount,
		Key: &p.Key, Memo: &p.Memo, ApprovalOver: p.ApprovalOver, ExpiresAt: &expires, ActorID: p.Actor.ID,
		ActorName: p.Actor.Name, TransactionID: ledger.NewTransactionID(), Now: p.Now}
	var out ledger.AdjustmentOutcome
	err := db.tx(ctx, func(tx pgx.Tx) error {
		outcome, id, txID, replayed, err := decide(ctx, tx, args)
		if err != nil {
			return err
		}
		if outcome == ledger.AdjustmentApplied {
			a, err := getAccount(ctx, tx, p.AccountID)
			out = ledger.AdjustmentOutcome{Applied: &ledger.Adjustment{TransactionID: txID, Replayed: replayed,
				Balance: a.Balance, Held: a.Held, Available: a.Available}}
			return err
		}
		pa, err := getPending(ctx, tx, id, p.Now)
		pa.Replayed = replayed
		out = ledger.AdjustmentOutcome{Pending: &pa}
		return err
	})
	return out, err
}

// DecideAdjustment approves or rejects an adjustment held for approval
// (ledger_adjustment_decide, rows A1 to A6 and J1 to J5) and returns it as
// it is afterwards.
func (db *DB) DecideAdjustment(ctx context.Context, d ledger.AdjustmentDecision) (ledger.PendingAdjustment, error) {
	if !ledger.ValidText(d.AdjustmentID) {
		return ledger.PendingAdjustment{}, ledger.ErrAdjustmentNotFound
	}
	action := "reject"
	if d.Approve {
		action = "approve"
	}
	args := decideArgs{Action: action, AdjustmentID: &d.AdjustmentID, ActorID: d.Actor.ID, ActorName: d.Actor.Name,
		TransactionID: ledger.NewTransactionID(), Now: d.Now}
	if d.Note != "" {
		args.Note = &d.Note
	}
	var pa ledger.PendingAdjustment
	err := db.tx(ctx, func(tx pgx.Tx) error {
		_, id, _, replayed, err := decide(ctx, tx, args)
		if err != nil {
			return err
		}
		pa, err = getPending(ctx, tx, id, d.Now)
		pa.Replayed = replayed
		return err
	})
	return pa, err
}

func decide(ctx context.Context, tx pgx.Tx, a decideArgs) (outcome, id, txID string, replayed bool, err error) {
	var idp, txp *string
	err = tx.QueryRow(ctx, decideCall.sql, decideCall.args(&a)...).Scan(&outcome, &idp, &txp, &replayed)
	return outcome, deref(idp), deref(txp), replayed, err
}

// GetPendingAdjustment reads an adjustment under dual control, its status
// as of now. ledger.ErrAdjustmentNotFound when there is none.
func (db *DB) GetPendingAdjustment(ctx context.Context, adjustmentID string, now time.Time) (ledger.PendingAdjustment, error) {
	if !ledger.ValidText(adjustmentID) {
		return ledger.PendingAdjustment{}, ledger.ErrAdjustmentNotFound
	}
	pa, err := getPending(ctx, db.querier(ctx), adjustmentID, now)
	return pa, interpret(err)
}

func getPending(ctx context.Context, q querier, adjustmentID string, now time.Time) (ledger.PendingAdjustment, error) {
	pa, err := scanPending(q.QueryRow(ctx, selectPendingSQL, now, adjustmentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return pa, ledger.ErrAdjustmentNotFound
	}
	return pa, err
}

func scanPending(row pgx.Row) (ledger.PendingAdjustment, error) {
	var p ledger.PendingAdjustment
	err := row.Scan(&p.AdjustmentID, &p.AccountID, &p.Currency, &p.Amount, &p.IdempotencyKey, &p.Memo, &p.Status,
		&p.MakerID, &p.MakerName, &p.RequestedAt, &p.ExpiresAt, &p.CheckerID, &p.CheckerName, &p.DecidedAt, &p.Note,
		&p.TransactionID)
	return p, err
}

// cursorPending is the kind of the cursors of the adjustments awaiting
// approval.
const cursorPending = "p1"

// ListPendingAdjustments reads one page of the adjustments under dual
// control, newest first, filtered by account and status (as of o.Now).
func (db *DB) ListPendingAdjustments(ctx context.Context, o ledger.PendingListOptions) (ledger.PendingPage, error) {
	if err := validLimit(&o.Limit); err != nil {
		return ledger.PendingPage{}, err
	}
	switch o.Status {
	case "", ledger.AdjustmentPending, ledger.AdjustmentPosted, ledger.AdjustmentRejected, ledger.AdjustmentExpired:
	default:
		return ledger.PendingPage{}, ledger.Invalid("/status", "status must be pending, posted, rejected or expired")
	}
	if !ledger.ValidText(o.AccountID) {
		return ledger.PendingPage{}, ledger.Invalid("/accountID", "accountID must be valid UTF-8 without NUL")
	}
	var at *time.Time
	var id string
	if o.Cursor != "" {
		p, ok := decodePendingCursor(o.Cursor)
		if !ok {
			return ledger.PendingPage{}, errBadCursor
		}
		at, id = &p.At, p.TxID
	}
	rows, err := db.pool.Query(ctx, listPendingSQL, o.Now, o.AccountID, o.Status, at, id, o.Limit+1)
	if err != nil {
		return ledger.PendingPage{}, interpret(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.PendingAdjustment, error) { return scanPending(r) })
	if err != nil {
		return ledger.PendingPage{}, interpret(err)
	}
	page := ledger.PendingPage{Adjustments: list}
	if len(list) > o.Limit {
		last := list[o.Limit-1]
		page.Adjustments, page.HasMore = list[:o.Limit], true
		page.NextCursor = encodeCursor(cursorPending, strconv.FormatInt(last.RequestedAt.UnixMicro(), 10)+"|"+last.AdjustmentID)
	}
	return page, nil
}

// decodePendingCursor reads a cursor of ListPendingAdjustments: only one
// it could have written (canonical, an adjustment ID of its form, a time
// in range).
func decodePendingCursor(c string) (position, bool) {
	payload, ok := decodeCursor(c, cursorPending)
	if !ok {
		return position{}, false
	}
	us, id, ok := strings.Cut(payload, "|")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || !adjustmentID.MatchString(id) {
		return position{}, false
	}
	at := time.UnixMicro(n).UTC()
	if at.Before(timeFloor) || at.After(timeCeiling) ||
		encodeCursor(cursorPending, strconv.FormatInt(n, 10)+"|"+id) != c {
		return position{}, false
	}
	return position{At: at, TxID: id}, true
}

// adjustmentID is the form of an adjustment's ID (NewReference("adj_")).
var adjustmentID = regexp.MustCompile(`^adj_[a-z2-7]{26}$`)

func ptr[T any](v T) *T { return &v }
