package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/ledger"
)

// Confusable skeletons of account IDs (accounts.skeleton,
// accounts_skeleton_key; schema/migrations/005_account_skeletons.sql).
const (
	// The account a skipped insert met: the same ID, or one that prints
	// alike. The same ID first.
	selectConflictingAccountSQL = `SELECT account_id FROM accounts
WHERE account_id = $1 OR skeleton = $2 ORDER BY account_id <> $1 LIMIT 1`

	// Customer accounts whose skeleton is not stored: created before
	// 005_account_skeletons.sql or by an earlier build, and not filled yet.
	selectUnfilledSQL = `SELECT account_id FROM accounts WHERE skeleton IS NULL AND kind = 'customer'
ORDER BY created_at, account_id`

	accountExistsSQL = `SELECT EXISTS (SELECT 1 FROM accounts WHERE account_id = $1)`

	// Stores a skeleton unless another account holds it already.
	fillSkeletonSQL = `UPDATE accounts SET skeleton = $2
WHERE account_id = $1 AND skeleton IS NULL
AND NOT EXISTS (SELECT 1 FROM accounts WHERE skeleton = $2)`
)

// existingAccount explains a skipped insert of accountID with skeleton sk:
// ledger.ErrAccountExists for the same ID, ledger.ErrAccountIDConfusable
// naming the account that prints alike otherwise. The conflicting row was
// committed before the insert skipped, so this statement sees it.
func existingAccount(ctx context.Context, tx pgx.Tx, accountID, sk string) error {
	var existing string
	if err := tx.QueryRow(ctx, selectConflictingAccountSQL, accountID, sk).Scan(&existing); err != nil {
		return err
	}
	if existing == accountID {
		return ledger.ErrAccountExists
	}
	return ledger.AccountIDConfusable(existing)
}

// checkUnfilledSkeletons compares a new account's skeleton with those of
// the customer accounts whose skeleton is not stored (FillSkeletons has
// not reached them, or they print like an account that holds theirs):
// ledger.ErrAccountIDConfusable naming the first that prints alike, unless
// the account itself exists (ledger.ErrAccountExists, as the insert would
// say).
func checkUnfilledSkeletons(ctx context.Context, tx pgx.Tx, accountID, sk string) error {
	ids, err := unfilled(ctx, tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == accountID || ledger.Skeleton(id) != sk {
			continue
		}
		var exists bool
		if err := tx.QueryRow(ctx, accountExistsSQL, accountID).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return ledger.ErrAccountExists
		}
		return ledger.AccountIDConfusable(id)
	}
	return nil
}

func unfilled(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, selectUnfilledSQL)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// FillSkeletons stores the confusable skeleton of every customer account
// that has none (accounts created before 005_account_skeletons.sql, or by
// an earlier build during a rolling upgrade), oldest first, one statement
// each. An account whose ID prints like one that holds its skeleton keeps
// none: the older holds it, so that a new ID that prints like either is
// still refused, and CreateAccount compares new IDs with those left too.
// It returns how many it filled and how many it left. Running it again,
// or beside account creation, is safe.
func (db *DB) FillSkeletons(ctx context.Context) (filled, left int, err error) {
	ids, err := unfilled(ctx, db.pool)
	if err != nil {
		return 0, 0, interpret(err)
	}
	for _, id := range ids {
		tag, err := db.pool.Exec(ctx, fillSkeletonSQL, id, ledger.Skeleton(id))
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && pe.Code == "23505":
			left++ // an account created meanwhile holds it
		case err != nil:
			return filled, left, interpret(err)
		case tag.RowsAffected() == 1:
			filled++
		default:
			left++
		}
	}
	return filled, left, nil
}
