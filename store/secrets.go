package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/envelope"
)

// Queries on signing_secrets (its table in schema/schema.sql).
const (
	secretColumns = `secret_id, fingerprint, kek_fingerprint, nonce, ciphertext, source, added_on, retired_on`

	// The fingerprint's named unique constraint arbitrates: the loser
	// reads the winner in the same transaction.
	insertSecretSQL = `INSERT INTO signing_secrets
    (secret_id, fingerprint, kek_fingerprint, nonce, ciphertext, source, added_on)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT ON CONSTRAINT signing_secrets_fingerprint_key DO NOTHING
RETURNING ` + secretColumns

	secretByFingerprintSQL = `SELECT ` + secretColumns + ` FROM signing_secrets WHERE fingerprint = $1`

	listSecretsSQL = `SELECT ` + secretColumns + ` FROM signing_secrets ORDER BY added_on DESC, secret_id DESC`

	activeSecretsSQL = `SELECT ` + secretColumns + ` FROM signing_secrets WHERE retired_on IS NULL
ORDER BY added_on DESC, secret_id DESC`

	// Retiring erases the encrypted secret. The CTE's outer SELECT sees the
	// table before the UPDATE, so found says whether the ID exists at all.
	// greatest() keeps retired_on >= added_on when the retiring replica's
	// clock is behind the adding one's.
	retireSecretSQL = `WITH r AS (
    UPDATE signing_secrets
    SET retired_on = greatest($2, added_on), nonce = NULL, ciphertext = NULL
    WHERE secret_id = $1 AND retired_on IS NULL
    RETURNING fingerprint
)
SELECT (SELECT fingerprint FROM r), EXISTS (SELECT 1 FROM signing_secrets WHERE secret_id = $1)`

	countActiveSecretsSQL = `SELECT count(*) FROM signing_secrets WHERE retired_on IS NULL`

	// Re-encrypts one active row, compare-and-swap: only while the row is
	// still active and still holds exactly the ciphertext the caller
	// decrypted (its KEK fingerprint and nonce), so a concurrent rekey,
	// retirement or second rekeying replica makes it a no-op, never a
	// lost or resurrected secret.
	rekeySecretSQL = `UPDATE signing_secrets
SET kek_fingerprint = $4, nonce = $5, ciphertext = $6
WHERE secret_id = $1 AND retired_on IS NULL AND kek_fingerprint = $2 AND nonce = $3`

	// Serialises "add a secret when none is active" across processes.
	bootstrapLockSQL = `SELECT pg_advisory_xact_lock(7240190817223431001)`
)

func scanSecret(row pgx.Row) (envelope.StoredSecret, error) {
	var s envelope.StoredSecret
	err := row.Scan(&s.SecretID, &s.Fingerprint, &s.KEKFingerprint, &s.Nonce, &s.Ciphertext, &s.Source, &s.AddedOn, &s.RetiredOn)
	return s, err
}

func (db *DB) secrets(ctx context.Context, sql string) ([]envelope.StoredSecret, error) {
	rows, err := db.pool.Query(ctx, sql)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (envelope.StoredSecret, error) { return scanSecret(r) })
	return out, interpret(err)
}

// ListSecrets returns every secret, active and retired, newest first.
func (db *DB) ListSecrets(ctx context.Context) ([]envelope.StoredSecret, error) {
	return db.secrets(ctx, listSecretsSQL)
}

// ActiveSecrets returns the active secrets, newest first.
func (db *DB) ActiveSecrets(ctx context.Context) ([]envelope.StoredSecret, error) {
	return db.secrets(ctx, activeSecretsSQL)
}

// CountActiveSecrets returns the number of active secrets.
func (db *DB) CountActiveSecrets(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, countActiveSecretsSQL).Scan(&n)
	return n, interpret(err)
}

// AddSecret stores row unless a secret with its fingerprint is stored;
// then it reads that row and returns it with created false, after same
// (when not nil) accepted it (the keyring checks that it holds the same
// secret; its error is returned as is).
func (db *DB) AddSecret(ctx context.Context, row envelope.StoredSecret, same func(envelope.StoredSecret) error) (envelope.StoredSecret, bool, error) {
	var out envelope.StoredSecret
	var created bool
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		out, created, err = addSecret(ctx, tx, row, same)
		return err
	})
	return out, created, err
}

func addSecret(ctx context.Context, tx pgx.Tx, row envelope.StoredSecret, same func(envelope.StoredSecret) error) (envelope.StoredSecret, bool, error) {
	out, err := scanSecret(tx.QueryRow(ctx, insertSecretSQL, row.SecretID, row.Fingerprint, row.KEKFingerprint,
		row.Nonce, row.Ciphertext, row.Source, row.AddedOn))
	if err == nil {
		return out, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return envelope.StoredSecret{}, false, err
	}
	if out, err = scanSecret(tx.QueryRow(ctx, secretByFingerprintSQL, row.Fingerprint)); err != nil {
		return envelope.StoredSecret{}, false, err
	}
	if same != nil {
		if err := same(out); err != nil {
			return envelope.StoredSecret{}, false, err
		}
	}
	return out, false, nil
}

// AddSecretIfNone stores row when no secret is active, under a lock that
// makes two processes doing so at once add one secret between them.
// before, when not nil, runs after the row is written and before the
// commit (the embedded bootstrap writes the secret's file there: a failed
// write stores nothing). It reports whether row was added.
func (db *DB) AddSecretIfNone(ctx context.Context, row envelope.StoredSecret, before func() error) (bool, error) {
	added := false
	err := db.tx(ctx, func(tx pgx.Tx) error {
		added = false
		if _, err := tx.Exec(ctx, bootstrapLockSQL); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, countActiveSecretsSQL).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		_, created, err := addSecret(ctx, tx, row, nil)
		if err != nil {
			return err
		}
		if !created {
			return errors.New("store: a freshly generated secret is already stored; the random source is broken")
		}
		if before != nil {
			if err := before(); err != nil {
				return err
			}
		}
		added = true
		return nil
	})
	return added, err
}

// RetireSecret retires the secret secretID at now, erasing its encrypted
// value. fingerprint is the secret's when it was retired by this call
// ("" when it was retired already); found is false for an unknown ID.
func (db *DB) RetireSecret(ctx context.Context, secretID string, now time.Time) (fingerprint string, found bool, err error) {
	var fp *string
	err = db.tx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, retireSecretSQL, secretID, now).Scan(&fp, &found)
	})
	return deref(fp), found, err
}

// RekeySecret replaces an active row's encrypted secret with r's, in one
// transaction, when the row still holds the material r was made from. It
// reports whether it did: false when the row was retired, deleted or
// re-encrypted meanwhile (by another replica, say).
func (db *DB) RekeySecret(ctx context.Context, r envelope.SecretRekey) (bool, error) {
	var done bool
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, rekeySecretSQL, r.SecretID, r.FromKEKFingerprint, r.FromNonce, r.KEKFingerprint, r.Nonce, r.Ciphertext)
		done = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, err
	}
	return done, nil
}
