package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Instrument kinds: what the service sends as fundingSource (source) or
// fundingDestination (destination).
const (
	InstrumentSource      = "source"
	InstrumentDestination = "destination"
)

// Instrument maps a token the service sends to an account.
type Instrument struct {
	Token     string    `json:"token"`
	Kind      string    `json:"kind"`
	AccountID string    `json:"accountID"`
	CreatedAt time.Time `json:"createdAt"`
}

const (
	insertInstrument = `INSERT INTO instruments (token, kind, account_id, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (token) DO NOTHING
RETURNING token, kind, account_id, created_at`

	selectInstrument = `SELECT token, kind, account_id, created_at FROM instruments WHERE token = $1`
)

// AddInstrument maps token to an account. Registering the same mapping
// again returns it with created false; a token mapped otherwise is
// ErrInstrumentConflict; an unknown account is ErrAccountNotFound.
func (s *Store) AddInstrument(ctx context.Context, in Instrument) (Instrument, bool, error) {
	switch {
	case in.Token == "" || len(in.Token) > 256:
		return Instrument{}, false, Invalid("/token", "token must be 1 to 256 characters")
	case in.Kind != InstrumentSource && in.Kind != InstrumentDestination:
		return Instrument{}, false, Invalid("/kind", "kind must be source or destination")
	case in.AccountID == "":
		return Instrument{}, false, Invalid("/accountID", "accountID is required")
	}
	var out Instrument
	var created bool
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := GetAccount(ctx, tx, in.AccountID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, insertInstrument, in.Token, in.Kind, in.AccountID, s.now()).
			Scan(&out.Token, &out.Kind, &out.AccountID, &out.CreatedAt)
		if err == nil {
			created = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := tx.QueryRow(ctx, selectInstrument, in.Token).
			Scan(&out.Token, &out.Kind, &out.AccountID, &out.CreatedAt); err != nil {
			return err
		}
		if out.Kind != in.Kind || out.AccountID != in.AccountID {
			return ErrInstrumentConflict
		}
		return nil
	})
	return out, created, translate(err)
}
