package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/ledger"
)

// Admin tokens (table admin_tokens).
const (
	tokenColumns = `token_id, name, scopes, created_on, created_by, expires_on, revoked_on`

	// No conflict arbiter: the one live token per name (a random hash
	// never collides) is the only conflict there can be.
	insertTokenSQL = `INSERT INTO admin_tokens (token_id, name, token_hash, scopes, created_on, created_by, expires_on)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT DO NOTHING
RETURNING ` + tokenColumns

	listTokensSQL = `SELECT ` + tokenColumns + ` FROM admin_tokens ORDER BY created_on DESC, token_id DESC`

	revokeTokenSQL = `UPDATE admin_tokens SET revoked_on = $2 WHERE token_id = $1 AND revoked_on IS NULL
RETURNING ` + tokenColumns

	selectTokenSQL = `SELECT ` + tokenColumns + ` FROM admin_tokens WHERE token_id = $1`

	// A live token: not revoked, not expired at $2.
	tokenByHashSQL = `SELECT ` + tokenColumns + ` FROM admin_tokens
WHERE token_hash = $1 AND revoked_on IS NULL AND (expires_on IS NULL OR expires_on > $2)`
)

func scanToken(row pgx.Row) (ledger.AdminToken, error) {
	var t ledger.AdminToken
	err := row.Scan(&t.TokenID, &t.Name, &t.Scopes, &t.CreatedOn, &t.CreatedBy, &t.ExpiresOn, &t.RevokedOn)
	return t, err
}

// CreateToken stores a new admin token (its hash only).
// ledger.ErrTokenNameTaken when a live token has its name.
func (db *DB) CreateToken(ctx context.Context, n ledger.NewAdminToken) (ledger.AdminToken, error) {
	if err := ledger.ValidateNewAdminToken(n); err != nil {
		return ledger.AdminToken{}, err
	}
	var t ledger.AdminToken
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRow(ctx, insertTokenSQL, n.TokenID, n.Name, n.Hash, n.Scopes, n.CreatedOn, n.CreatedBy, n.ExpiresOn))
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.ErrTokenNameTaken
		}
		return err
	})
	return t, err
}

// ListTokens returns every admin token, live and revoked, newest first,
// without their values (which are not stored).
func (db *DB) ListTokens(ctx context.Context) ([]ledger.AdminToken, error) {
	rows, err := db.querier(ctx).Query(ctx, listTokensSQL)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.AdminToken, error) { return scanToken(r) })
	return out, interpret(err)
}

// RevokeToken revokes a token at now: from the next request on, no
// replica accepts it. Revoking a revoked token changes nothing and
// returns it; an unknown ID is ledger.ErrTokenNotFound.
func (db *DB) RevokeToken(ctx context.Context, tokenID string, now time.Time) (ledger.AdminToken, error) {
	if !ledger.ValidText(tokenID) {
		return ledger.AdminToken{}, ledger.ErrTokenNotFound
	}
	var t ledger.AdminToken
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRow(ctx, revokeTokenSQL, tokenID, now))
		if errors.Is(err, pgx.ErrNoRows) {
			t, err = scanToken(tx.QueryRow(ctx, selectTokenSQL, tokenID))
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.ErrTokenNotFound
		}
		return err
	})
	return t, err
}

// TokenByHash returns the live token (not revoked, not expired at now)
// whose hash is hash; ok is false when there is none. The admin API calls
// it on every request that presents a token: one primary-key-sized index
// lookup, so that a revocation or an expiry holds on every replica from
// the next request on.
func (db *DB) TokenByHash(ctx context.Context, hash []byte, now time.Time) (t ledger.AdminToken, ok bool, err error) {
	t, err = scanToken(db.pool.QueryRow(ctx, tokenByHashSQL, hash, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.AdminToken{}, false, nil
	}
	return t, err == nil, interpret(err)
}
