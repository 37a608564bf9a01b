package ledger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/puddle/v2"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DBTX is what the store functions need of a connection: a pgx.Tx, a
// *pgxpool.Pool or a *pgx.Conn. Functions that take a DBTX never begin or
// commit a transaction, so a caller composes several into one commit.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// PoolConfig parses url into a pool configuration with NUMERIC mapped to
// decimal.Decimal on every connection.
func PoolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("ledger: database URL: %w", err)
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxdecimal.Register(conn.TypeMap())
		return nil
	}
	return cfg, nil
}

// NewPool opens a connection pool to url (see PoolConfig).
func NewPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := PoolConfig(url)
	if err != nil {
		return nil, err
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// maxTxAttempts bounds how often InTx runs a transaction that failed on a
// serialization failure, a deadlock or a lost uniqueness race.
const maxTxAttempts = 5

// InTx runs fn in one READ COMMITTED transaction and commits it. When the
// transaction fails for a reason that a fresh attempt may not meet again
// (serialization failure, deadlock), it is retried a bounded number of
// times with a short jittered pause; after that the error is returned
// wrapped in ErrUnavailable's code. fn must be safe to run more than once.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
		if err == nil || !Retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff(attempt)):
		}
	}
	return &Error{Code: CodeUnavailable, Slug: "transaction-retries-exhausted",
		Message: "the transaction kept conflicting with concurrent ones", Err: err}
}

// Retryable reports whether err is a transient transaction failure that a
// fresh attempt of the same transaction may not meet: serialization
// failure (40001) or deadlock (40P01).
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return false
}

func backoff(attempt int) time.Duration {
	d := time.Duration(attempt*attempt) * time.Millisecond
	return d + time.Duration(randUint64()%uint64(d+1))
}

var pgxTxRepeatableReadReadOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// Unavailable reports whether err means the database could not be reached
// or could not finish the work for a transient reason: the same request may
// succeed later. That is any failure to connect, whatever the server said
// (connection refused, database not accepting connections, too many
// connections, authentication failing during a password rotation), a lost
// connection, a server shutting down or starting, a read-only standby after
// a failover, a statement or lock timeout set on the server, resource
// exhaustion, a serialization failure or a deadlock.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var le *Error
	if errors.As(err, &le) && le.Code == CodeUnavailable {
		return true
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case strings.HasPrefix(code, "08"), // connection exception
			strings.HasPrefix(code, "53"),                     // insufficient resources
			code == "57P01", code == "57P02", code == "57P03", // shutdown, crash, starting
			code == "25006",                  // read-only transaction: a standby after failover
			code == "57014", code == "55P03", // statement or lock timeout set on the server
			code == "40001", code == "40P01":
			return true
		}
		return false
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, puddle.ErrClosedPool)
}
