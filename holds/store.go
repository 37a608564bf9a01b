package holds

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Hold is a hold as the admin API shows it.
type Hold struct {
	HoldReference    string          `json:"holdReference"`
	PayoutID         string          `json:"payoutID"`
	AccountID        string          `json:"accountID"`
	FundingSource    string          `json:"fundingSource"`
	Currency         string          `json:"currency"`
	Amount           decimal.Decimal `json:"amount"`
	Status           string          `json:"status"`
	CaptureReference string          `json:"captureReference,omitempty"`
	ReleaseReference string          `json:"releaseReference,omitempty"`
	ReleaseReason    string          `json:"releaseReason,omitempty"`
	PlacedAt         time.Time       `json:"placedAt"`
	CapturedAt       *time.Time      `json:"capturedAt,omitempty"`
	ReleasedAt       *time.Time      `json:"releasedAt,omitempty"`
}

// Store reads holds and runs Place, Capture and Release each in a
// transaction of its own (the callbacks package composes them instead).
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewStore returns a Store on pool; now nil means time.Now.
func NewStore(pool *pgxpool.Pool, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{pool: pool, now: now}
}

const holdColumns = `hold_reference, payout_id, account_id, funding_source, currency, amount, status,
coalesce(capture_reference, ''), coalesce(release_reference, ''), coalesce(release_reason, ''),
placed_at, captured_at, released_at`

func scanHold(row pgx.Row) (Hold, error) {
	var h Hold
	err := row.Scan(&h.HoldReference, &h.PayoutID, &h.AccountID, &h.FundingSource, &h.Currency, &h.Amount,
		&h.Status, &h.CaptureReference, &h.ReleaseReference, &h.ReleaseReason, &h.PlacedAt, &h.CapturedAt, &h.ReleasedAt)
	return h, err
}

// Get reads one hold; ledger.ErrHoldNotFound when there is none.
func (s *Store) Get(ctx context.Context, holdReference string) (Hold, error) {
	h, err := scanHold(s.pool.QueryRow(ctx, `SELECT `+holdColumns+` FROM holds WHERE hold_reference = $1`, holdReference))
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, ledger.ErrHoldNotFound
	}
	return h, err
}

// ListOptions filters and pages List. Limit is 1 to 100 (default 25).
type ListOptions struct {
	PayoutID string
	Status   string
	Cursor   string
	Limit    int
}

// Page is one page of holds.
type Page struct {
	Holds      []Hold `json:"holds"`
	NextCursor string `json:"nextCursor,omitempty"`
	HasMore    bool   `json:"hasMore"`
}

// List returns holds newest first, filtered by payoutID and status, a page
// at a time. The cursor is opaque (the position after the last hold).
func (s *Store) List(ctx context.Context, o ListOptions) (Page, error) {
	if o.Limit == 0 {
		o.Limit = 25
	}
	if o.Limit < 1 || o.Limit > 100 {
		return Page{}, ledger.Invalid("/limit", "limit must be 1 to 100")
	}
	if o.Status != "" && o.Status != StatusHeld && o.Status != StatusCaptured && o.Status != StatusReleased {
		return Page{}, ledger.Invalid("/status", "status must be held, captured or released")
	}
	var afterAt time.Time
	var afterRef string
	if o.Cursor != "" {
		var err error
		if afterAt, afterRef, err = decodeCursor(o.Cursor); err != nil {
			return Page{}, ledger.Invalid("/cursor", "cursor is malformed")
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+holdColumns+` FROM holds
WHERE ($1 = '' OR payout_id = $1) AND ($2 = '' OR status = $2)
  AND ($3 = '' OR (placed_at, hold_reference) < ($4, $3))
ORDER BY placed_at DESC, hold_reference DESC
LIMIT $5`, o.PayoutID, o.Status, afterRef, afterAt, o.Limit+1)
	if err != nil {
		return Page{}, err
	}
	holds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Hold, error) { return scanHold(r) })
	if err != nil {
		return Page{}, err
	}
	p := Page{Holds: holds}
	if len(holds) > o.Limit {
		p.Holds, p.HasMore = holds[:o.Limit], true
		last := p.Holds[o.Limit-1]
		p.NextCursor = encodeCursor(last.PlacedAt, last.HoldReference)
	}
	if p.Holds == nil {
		p.Holds = []Hold{}
	}
	return p, nil
}

func encodeCursor(at time.Time, ref string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + "|" + ref))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", err
	}
	us, ref, ok := strings.Cut(string(b), "|")
	if !ok || ref == "" {
		return time.Time{}, "", errors.New("malformed cursor")
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return time.Time{}, "", err
	}
	return time.UnixMicro(n), ref, checkCursor(c, n, ref)
}

// Place runs Place in a transaction of its own.
func (s *Store) Place(ctx context.Context, r PlaceRequest) (d ledger.Decision, err error) {
	r.Now = s.stamp(r.Now)
	err = ledger.InTx(ctx, s.pool, func(tx pgx.Tx) error { d, err = Place(ctx, tx, r); return err })
	return d, err
}

// Capture runs Capture in a transaction of its own.
func (s *Store) Capture(ctx context.Context, r CaptureRequest) (d ledger.Decision, err error) {
	r.Now = s.stamp(r.Now)
	err = ledger.InTx(ctx, s.pool, func(tx pgx.Tx) error { d, err = Capture(ctx, tx, r); return err })
	return d, err
}

// Release runs Release in a transaction of its own.
func (s *Store) Release(ctx context.Context, r ReleaseRequest) (d ledger.Decision, err error) {
	r.Now = s.stamp(r.Now)
	err = ledger.InTx(ctx, s.pool, func(tx pgx.Tx) error { d, err = Release(ctx, tx, r); return err })
	return d, err
}

func (s *Store) stamp(t time.Time) time.Time {
	if t.IsZero() {
		return s.now()
	}
	return t
}
