package loadtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The naive authorize of design 2.9 (the same SQL as callbacks'
// BenchmarkNaiveSQL): BEGIN, five statements, COMMIT, straight from Go with
// no HTTP and no JWE. It is the yardstick the adapter's full authorize path
// is divided by; the goal is above 1.0.
const (
	naiveInstrument = `SELECT account_id FROM instruments WHERE token = $1`
	naiveLock       = `SELECT balance - held FROM accounts WHERE account_id = $1 FOR NO KEY UPDATE`
	naiveHold       = `INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at) VALUES ($1, $2, $3, $4, 'USD', 1, now())`
	naiveHeld       = `UPDATE accounts SET held = held + 1 WHERE account_id = $1`
	naiveKey        = `INSERT INTO callback_requests (endpoint, scope, idempotency_key, fingerprint, subject, key_fingerprint, received_at, last_received_at, response)
VALUES ('authorize', $1, 'k', sha256('x'), $1, 'fp', now(), now(), '{}')`

	// Seeding goes through the schema's own functions, so the baseline's
	// accounts are journaled like any other: ledger_adjust funds them.
	naiveAccount = `INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES ($1, $2, 'USD', now(), now())`
	naiveFund    = `SELECT transaction_id FROM ledger_adjust($1, 1000000, $2, 'loadtest naive baseline', $3, now())`
	naiveToken   = `INSERT INTO instruments (token, kind, account_id, created_at) VALUES ($2, 'source', $1, now())`
)

// runNaive seeds one account per worker in the database at dbURL and runs
// ops naive authorizes over conc connections. The holds it places stay held
// on its own accounts (prefix-naive-*), which stay consistent (held = the
// sum of their held holds).
func runNaive(ctx context.Context, dbURL, prefix string, conc, ops int) NaiveReport {
	rep := NaiveReport{Ops: ops, Concurrency: conc}
	if ops < 1 {
		rep.Error = "no authorizes to compare with"
		return rep
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		rep.Error = fmt.Sprintf("--naive-db: %v", err)
		return rep
	}
	cfg.MaxConns = int32(conc + 1)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		rep.Error = fmt.Sprintf("--naive-db: %v", err)
		return rep
	}
	defer pool.Close()
	accounts := make([]string, conc)
	tokens := make([]string, conc)
	for i := range conc {
		accounts[i] = fmt.Sprintf("%s-naive-%03d", prefix, i)
		tokens[i] = fmt.Sprintf("%s-naive-src-%03d", prefix, i)
		err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, naiveAccount, accounts[i], accounts[i]+"-owner"); err != nil {
				return err
			}
			var txID uuid.UUID
			if err := tx.QueryRow(ctx, naiveFund, accounts[i], accounts[i]+"-funding", uuid.New()).Scan(&txID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, naiveToken, accounts[i], tokens[i])
			return err
		})
		if err != nil {
			rep.Error = fmt.Sprintf("seeding the naive baseline: %v", err)
			return rep
		}
	}
	var next atomic.Int64
	var errMu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= ops || ctx.Err() != nil {
					return
				}
				payout := prefix + "-naive-" + uuid.NewString()
				err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
					var acct string
					if err := tx.QueryRow(ctx, naiveInstrument, tokens[w]).Scan(&acct); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, naiveLock, acct); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, naiveHold, uuid.NewString(), payout, acct, tokens[w]); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, naiveHeld, acct); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, naiveKey, payout)
					return err
				})
				if err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		rep.Error = fmt.Sprintf("naive authorize: %v", firstErr)
		return rep
	}
	if err := ctx.Err(); err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Seconds = round2(elapsed.Seconds())
	rep.NaivePerSec = round(float64(ops) / elapsed.Seconds())
	return rep
}
