package store

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/provider-ledger/adapter/ledger"
)

// interpret translates what the driver returned into the domain's errors:
// the one place where SQLSTATEs are read. Errors it does not recognise pass
// through unchanged (a bug: answered 500). nil stays nil.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var le *ledger.Error
	if errors.As(err, &le) {
		return err
	}
	// A connection that could not be made is the database being
	// unavailable, whatever the server said when it refused (a database
	// not accepting connections, too many clients, starting up, …):
	// nothing ran.
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return ledger.ErrUnavailable.Wrap(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return interpretCode(pgErr, err)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return ledger.ErrCanceled.Wrap(err)
	case errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err):
		// The deadline passed before the statement was sent (waiting
		// for a connection): nothing ran.
		return ledger.ErrTimeout.Wrap(err)
	}
	if connectionLost(err) {
		// Whether a statement in flight committed is not known.
		return ledger.ErrUnavailable.Wrap(err)
	}
	return err
}

// interpretCode maps a server error by its SQLSTATE.
func interpretCode(pgErr *pgconn.PgError, err error) error {
	switch code := pgErr.Code; {
	// Application errors raised by the schema's functions (class LA).
	case code == "LA001":
		return ledger.ErrAccountNotFound
	case code == "LA002":
		return ledger.ErrInsufficientAvailable
	case code == "LA003":
		return ledger.ErrAccountClosed
	case code == "LA004":
		return ledger.ErrIdempotencyMismatch
	// Dual control (ledger_adjustment_decide).
	case code == "LA009":
		return ledger.ErrAdjustmentNotFound
	case code == "LA010":
		return ledger.ErrAdjustmentRejected
	case code == "LA011":
		return ledger.ErrAdjustmentExpired
	case code == "LA012":
		return ledger.ErrMakerCannotApprove
	case code == "LA013":
		return ledger.ErrAdjustmentPosted
	// The statement was cancelled at its deadline, or a server-side
	// statement or lock timeout fired: rolled back.
	case code == "57014", code == "55P03":
		return ledger.ErrTimeout.Wrap(err)
	// Serialization failure, deadlock: retried by retry, then unavailable.
	case retryableCode(code):
		return ledger.ErrRetriesExhausted.Wrap(err)
	// Text Postgres cannot store (NUL, invalid byte sequences): the
	// request can never succeed as sent.
	case code == "22021", code == "22P05":
		return ledger.ErrInvalidText.Wrap(err)
	case strings.HasPrefix(code, "08"), // connection exception
		strings.HasPrefix(code, "53"),                     // insufficient resources
		strings.HasPrefix(code, "58"),                     // system error (I/O)
		code == "57P01", code == "57P02", code == "57P03", // shutdown, crash, starting
		code == "57P04", code == "57P05", // database dropped, idle session timeout
		code == "25006", // read-only transaction: a standby
		code == "0A000" && isPoolerError(pgErr):
		return ledger.ErrUnavailable.Wrap(err)
	// A transaction pooler handing a session's prepared statements to
	// another (pgbouncer with cache_statement): nothing ran; a retry may
	// meet another server connection. LEDGER_DB_EXEC_MODE avoids it.
	case code == "26000", code == "42P05":
		return ledger.ErrUnavailable.Wrap(err)
	}
	return err
}

// retryableCode reports a transaction failure that a fresh attempt may not
// meet: serialization failure (40001) or deadlock (40P01).
func retryableCode(code string) bool { return code == "40001" || code == "40P01" }

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && retryableCode(pgErr.Code)
}

// isPoolerError tells a pooler's refusal (e.g. pgbouncer in transaction
// mode refusing a feature) from a server's "feature not supported" bug.
func isPoolerError(e *pgconn.PgError) bool {
	return strings.Contains(strings.ToLower(e.Message), "pgbouncer")
}

// connectionLost reports an error of the connection itself: reset, closed,
// timed out without an answer, or the pool closed.
func connectionLost(err error) bool {
	var netErr net.Error
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, puddle.ErrClosedPool)
}

// maxAttempts bounds the runs of one transaction that failed on a
// serialization failure or a deadlock.
const maxAttempts = 5

// retry runs fn, running it again after a serialization failure or a
// deadlock, up to maxAttempts times with a short jittered pause, and
// returns the interpreted error. attempts, when not nil, receives the
// number of runs. fn must be safe to run more than once.
func retry(ctx context.Context, attempts *int, fn func() error) error {
	var err error
	for n := 1; ; n++ {
		if attempts != nil {
			*attempts = n
		}
		err = fn()
		if err == nil || !retryable(err) || n == maxAttempts {
			return interpret(err)
		}
		select {
		case <-ctx.Done():
			return interpret(err)
		case <-time.After(backoff(n)):
		}
	}
}

// tx runs fn in one READ COMMITTED transaction under retry. A commit the
// synchronous standby did not confirm is not a success (replicated).
//
// Under Audited, ctx carries Audited's transaction: fn runs in it, once
// (Audited retries the whole), and the commit is Audited's.
func (db *DB) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	if outer, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return interpret(fn(outer))
	}
	ctx, watch := WatchCommits(ctx)
	err := retry(ctx, nil, func() error {
		return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
	})
	if err == nil {
		err = db.replicated(watch)
	}
	return err
}

// errUnreplicated: a commit went through locally, but the synchronous
// standby did not confirm it before the deadline (see WatchCommits).
var errUnreplicated = errors.New("the commit was not confirmed by the synchronous standby before the deadline")

// replicated turns a success whose commit the synchronous standby did not
// confirm into ledger.ErrUnavailable: acknowledged, a failover would lose
// it. What was committed is the stored answer a retry with the same key
// gets once it is replicated (its own commit waits for the standby again).
func (db *DB) replicated(w *CommitWatch) error {
	if !w.Unreplicated() {
		return nil
	}
	db.topo.withheld.Add(1)
	return ledger.ErrUnavailable.Wrap(errUnreplicated)
}

// snapshot runs fn in one REPEATABLE READ, read-only transaction: a
// consistent picture under traffic.
func (db *DB) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	return interpret(pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn))
}

func backoff(attempt int) time.Duration {
	d := time.Duration(attempt*attempt) * time.Millisecond
	return d + rand.N(d+1)
}
