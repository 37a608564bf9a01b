package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/ledger"
)

// Group commit (Options.GroupCommit): callbacks share transactions when
// the database is the bottleneck.
//
// Up to GroupCommit transactions of callbacks are in flight at once (the
// lanes). A callback that finds a lane free runs alone, in a transaction
// of its own. One that finds every lane busy waits in a queue, and when a
// lane's transaction ends, the lane takes everything queued (up to
// maxBatch callbacks) as its next transaction: no timer, a batch is what
// arrived while the lanes were busy. A batch is one round trip and one
// commit (pgx.Batch: every statement up to one Sync, an implicit
// transaction), so the commit's cost, its WAL flush and, under synchronous
// replication, its wait for the standby are shared.
//
// Each callback in a batch is its own decision function's call, with its
// own idempotency row and answer; the batch only decides when they commit.
// A batch that fails as a whole (a statement's error, a deadlock, a
// deadline, the connection) commits nothing, and each of its callbacks is
// then run alone, as if it had found a lane free: a failure of one never
// becomes another's answer. A batch whose commit the synchronous
// standby did not confirm answers each of its callbacks as a single
// callback's would be (ledger.ErrUnavailable: retry; the retry finds the
// stored answer once replicated).
//
// Lock order. Every decision function takes its advisory locks, then the
// customer account's row (schema/README.md). A transaction of several
// callbacks would hold one callback's account while taking the next one's
// advisory lock, and two such transactions could wait on each other. So
// under group commit every transaction, of one callback or of many, first
// locks every account its callbacks can move, in account_id order
// (batchLocks), then runs the callbacks in the order of their first
// advisory lock: two transactions meet first on their accounts, in one
// order, then on advisory locks, in one order, and cannot deadlock. (A
// callback that names another account than the earlier request with its
// key or payout, which a mismatch or a denial then answers, can still meet
// one in a cycle; Postgres's deadlock detector breaks it, and the callbacks
// run again.)

// maxBatch bounds the callbacks of one batch.
const maxBatch = 64

// batchLocks locks the accounts a batch's callbacks can move, in one order:
// the accounts of the instruments named (authorize's funding source,
// credit's destination) and of the holds named (capture, release). Each
// is found, then locked, by its own key (one equality on a primary key
// each), so that every plan, the generic one a prepared statement settles
// on included, probes the tables by key even while their statistics are
// those of an empty table: a plan for a set of keys at once may choose to
// scan a table that looked small, and keep scanning it as it grows.
const batchLocks = `SELECT FROM (SELECT DISTINCT x.id FROM (
        SELECT (SELECT i.account_id FROM instruments i WHERE i.token = t) AS id FROM unnest($1::text[]) t
        UNION ALL
        SELECT (SELECT h.account_id FROM holds h WHERE h.hold_reference = r) FROM unnest($2::text[]) r) x
      WHERE x.id IS NOT NULL ORDER BY x.id) k
CROSS JOIN LATERAL (SELECT FROM accounts a WHERE a.account_id = k.id FOR NO KEY UPDATE) l`

// callback is one callback's decision statement, and what a batch needs
// to know of it.
type callback struct {
	sql  string
	args []any
	// token is the instrument whose account the callback can move
	// (authorize, credit); hold the hold's (capture, release).
	token, hold string
	// order is the callback's first advisory lock, as text: a batch runs
	// its callbacks in this order.
	order string
}

// pending is a callback waiting in the queue, and its result.
type pending struct {
	ctx    context.Context
	cb     callback
	answer ledger.Answer
	err    error
	done   chan struct{}
}

// groupCommit is the queue and the lanes.
type groupCommit struct {
	db    *DB
	lanes int

	mu    sync.Mutex
	busy  int
	queue []*pending

	stats GroupCommitStats
}

// GroupCommitStats count group commit's work since the pool opened.
type GroupCommitStats struct {
	// Batches is how many transactions of two or more callbacks committed,
	// Batched how many callbacks they held.
	Batches, Batched atomic.Int64
	// Fallbacks is how many batches failed as a whole: each of their
	// callbacks was then run alone.
	Fallbacks atomic.Int64
	// Queued is how many callbacks wait for a lane now.
	Queued atomic.Int64
}

func newGroupCommit(db *DB, lanes int) *groupCommit {
	return &groupCommit{db: db, lanes: lanes}
}

// do runs c: alone on a free lane, or in the next batch.
//
// A callback that finds a lane free is that lane's first transaction,
// never put in the queue: two that arrive at once while two lanes are free
// run side by side, each alone, rather than the first lane to start taking
// both.
func (g *groupCommit) do(ctx context.Context, c callback) (ledger.Answer, error) {
	p := &pending{ctx: ctx, cb: c, done: make(chan struct{})}
	g.mu.Lock()
	if g.busy < g.lanes {
		g.busy++
		g.mu.Unlock()
		go g.lane([]*pending{p})
	} else {
		g.queue = append(g.queue, p)
		g.stats.Queued.Add(1)
		g.mu.Unlock()
	}
	<-p.done
	return p.answer, p.err
}

// lane runs first, then batches of what queued until the queue is empty.
func (g *groupCommit) lane(first []*pending) {
	for batch := first; ; {
		g.run(batch)
		g.mu.Lock()
		n := min(len(g.queue), maxBatch)
		if n == 0 {
			g.busy--
			g.mu.Unlock()
			return
		}
		batch = slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		g.stats.Queued.Add(-int64(n))
		g.mu.Unlock()
	}
}

// run applies a batch and delivers each callback's result.
func (g *groupCommit) run(batch []*pending) {
	defer func(all []*pending) {
		for _, p := range all {
			close(p.done)
		}
	}(batch)
	// A callback whose deadline passed while it queued is answered so
	// (nothing applied), not sent: the batch's deadline is its earliest.
	live := batch[:0:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = ledger.ErrTimeout.Wrap(err)
			continue
		}
		live = append(live, p)
	}
	batch = live
	if len(batch) == 0 {
		return
	}
	if len(batch) == 1 {
		p := batch[0]
		p.answer, p.err = g.alone(p)
		return
	}
	err := g.apply(batch)
	if err == nil {
		g.stats.Batches.Add(1)
		g.stats.Batched.Add(int64(len(batch)))
		return
	}
	if errors.Is(err, errUnreplicated) {
		// Committed, not confirmed by the standby: not acknowledged, as a
		// single callback's commit would not be.
		for _, p := range batch {
			p.answer, p.err = ledger.Answer{}, err
		}
		return
	}
	// Nothing committed, or (the connection lost at the commit) perhaps
	// everything: each callback alone finds its stored answer or decides
	// now, as without group commit.
	g.stats.Fallbacks.Add(1)
	var pgErr *pgconn.PgError
	unknown := !errors.As(err, &pgErr) && connectionLost(err)
	var wg sync.WaitGroup
	for _, p := range batch {
		wg.Go(func() {
			if ctxErr := p.ctx.Err(); ctxErr != nil {
				// Past its deadline: too late to run alone. What the
				// batch's failure means for it is what it would mean
				// for it alone: perhaps committed (the connection was
				// lost), or rolled back at the deadline.
				if unknown {
					p.err = interpret(err)
				} else {
					p.err = ledger.ErrTimeout.Wrap(ctxErr)
				}
				return
			}
			p.answer, p.err = g.alone(p)
		})
	}
	wg.Wait()
}

// alone runs one callback in a transaction of its own, in the batches'
// lock order (its account first), again after a serialization failure or
// a deadlock.
func (g *groupCommit) alone(p *pending) (ledger.Answer, error) {
	var a ledger.Answer
	var runs int
	err := retry(p.ctx, &runs, func() error {
		if err := g.apply([]*pending{p}); err != nil {
			return err
		}
		a = p.answer
		return nil
	})
	a.Runs = runs
	return a, err
}

// apply runs a batch in one transaction and one round trip: the accounts'
// locks, then each callback in its advisory lock's order. It sets the
// callbacks' answers only when the transaction committed.
func (g *groupCommit) apply(batch []*pending) error {
	slices.SortStableFunc(batch, func(a, b *pending) int { return cmp.Compare(a.cb.order, b.cb.order) })
	var tokens, refs []string
	deadline := time.Time{}
	for _, p := range batch {
		if p.cb.token != "" {
			tokens = append(tokens, p.cb.token)
		}
		if p.cb.hold != "" {
			refs = append(refs, p.cb.hold)
		}
		if d, ok := p.ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
			deadline = d
		}
	}
	ctx, watch := WatchCommits(context.Background())
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	b := &pgx.Batch{}
	b.Queue(batchLocks, tokens, refs)
	for _, p := range batch {
		b.Queue(p.cb.sql, p.cb.args...)
	}
	answers := make([]ledger.Answer, len(batch))
	br := g.db.pool.SendBatch(ctx, b)
	err := func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		for i := range batch {
			if err := scanAnswer(br.QueryRow(), &answers[i]); err != nil {
				return err
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if watch.Unreplicated() {
		return g.db.replicated(watch)
	}
	for i, p := range batch {
		p.answer = answers[i]
		p.answer.Runs = 1
	}
	return nil
}

// scanAnswer reads a decision function's answer row.
func scanAnswer(row pgx.Row, a *ledger.Answer) error {
	var state string
	var outcome, reason, ref *string
	if err := row.Scan(&state, &outcome, &reason, &ref); err != nil {
		return err
	}
	a.State, a.Decision = ledger.AnswerState(state), ledger.Decision{Outcome: deref(outcome), Reason: deref(reason), Reference: deref(ref)}
	return nil
}

// The batch's commit reaches the watch as a single statement's does.
var _ pgx.BatchTracer = commitTracer{}

func (commitTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	delete(conn.PgConn().CustomData(), unreplicatedKey)
	return ctx
}

func (commitTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t commitTracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.TraceQueryEnd(ctx, conn, pgx.TraceQueryEndData{})
}
