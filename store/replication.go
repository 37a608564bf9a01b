package store

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A commit on a primary with synchronous replication waits until a standby
// confirms it. When that wait is cancelled (by the statement's deadline, a
// cancel request, pg_cancel_backend), Postgres does not roll back: the
// transaction has committed locally, the client gets a WARNING ("canceling
// wait for synchronous replication … The transaction has already committed
// locally, but might not have been replicated to the standby") and a
// success. Acknowledging that success would defeat synchronous replication:
// a failover now loses it. The pool notices the warning on the connection
// (unreplicatedKey, counted in Topology.Unreplicated), and a context from
// WatchCommits learns that one of the statements run under it ended so:
// the caller must then answer as if the outcome were unknown (a retryable
// 503), never acknowledge it.

// unreplicatedKey marks a connection (pgconn.CustomData) whose last
// statement's commit was not confirmed by the synchronous standby.
const unreplicatedKey = "ledger.unreplicated"

// syncRepCancelled reports the warning of a cancelled wait for
// synchronous replication (SQLSTATE 01000, the server's message).
func syncRepCancelled(n *pgconn.Notice) bool {
	return n.Severity == "WARNING" && strings.HasPrefix(n.Message, "canceling wait for synchronous replication")
}

// onNotice is the pool's notice handler: it marks the connection and counts.
func (tp *topology) onNotice(pc *pgconn.PgConn, n *pgconn.Notice) {
	if !syncRepCancelled(n) {
		return
	}
	pc.CustomData()[unreplicatedKey] = true
	tp.unreplicated.Add(1)
	tp.log.Warn("a commit was not confirmed by the synchronous standby before its deadline: it is not acknowledged",
		"pid", pc.PID(), "detail", n.Detail)
}

// CommitWatch learns whether a statement run under its context committed
// without the synchronous standby's confirmation.
type CommitWatch struct{ unreplicated atomic.Bool }

// Unreplicated reports that a statement run under the watch's context
// committed locally without the synchronous standby's confirmation: its
// effect must not be acknowledged (the caller answers 503; a retry with the
// same key finds the stored answer once it is replicated).
func (w *CommitWatch) Unreplicated() bool { return w.unreplicated.Load() }

type commitWatchKey struct{}

// WatchCommits returns a context under which the store's statements report
// to the returned watch. Values pass through context.WithoutCancel.
func WatchCommits(ctx context.Context) (context.Context, *CommitWatch) {
	w := &CommitWatch{}
	return context.WithValue(ctx, commitWatchKey{}, w), w
}

// commitTracer carries a connection's mark to the watch of the statement's
// context. Every statement starts unmarked.
type commitTracer struct{}

func (commitTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	delete(conn.PgConn().CustomData(), unreplicatedKey)
	return ctx
}

func (commitTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryEndData) {
	if conn.PgConn().CustomData()[unreplicatedKey] == nil {
		return
	}
	delete(conn.PgConn().CustomData(), unreplicatedKey)
	if w, ok := ctx.Value(commitWatchKey{}).(*CommitWatch); ok {
		w.unreplicated.Store(true)
	}
}

// Both ends of a transaction (pgx.BeginTxFunc) are statements of their own:
// the COMMIT's warning reaches the watch through TraceQueryEnd too.
var _ pgx.QueryTracer = commitTracer{}
