// Package store is the adapter's one database boundary: the only package
// (with the migration runner in schema, the embedded server in embedpg and
// the test helpers) that imports pgx. Every SQL string and every call of a
// server-side function is here, with:
//
//   - one interpreter of driver errors and SQLSTATEs into the domain's
//     errors (ledger.Error codes: invalid, not found, conflict,
//     unprocessable, unavailable, timeout, canceled), interpret;
//   - one bounded retry policy for serialization failures and deadlocks,
//     retry;
//   - server-side functions called in named notation
//     (cb_authorize(p_key => $1, …)) built from typed structs, so that an
//     argument can never land in another's place.
//
// Packages above it (callbacks, admin, keyring, reconciliation) see domain
// types from ledger and holds, never a pgx type. One exported method is one
// transaction, but for the four callbacks under group commit
// (Options.GroupCommit, groupcommit.go), which may share one with the
// callbacks that arrived at the same time, each keeping its own decision
// and answer.
//
// # Deadlines
//
// A statement runs until its context's deadline. At the deadline the
// driver asks the server to cancel it (a cancel request, not a closed
// socket) and waits for the server's answer, so the caller learns what
// happened: the statement's result when it had already committed, or
// SQLSTATE 57014 when it was cancelled and rolled back (ledger.ErrTimeout:
// nothing was applied). Only when the server does not answer within
// CancelGrace is the connection closed, and the outcome is unknown
// (ledger.ErrUnavailable). A context cancelled because the caller went away
// is the caller's business: callers that must finish their work whatever
// the client does (the callbacks) run it on a context without cancellation.
package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxConns is the pool size when the URL does not set pool_max_conns.
const DefaultMaxConns = 16

// CancelGrace is how long a statement past its deadline may take to answer
// the cancel request before its connection is closed.
const CancelGrace = 2 * time.Second

// DB is the ledger's database: a connection pool and the queries on it.
// Safe for concurrent use.
type DB struct {
	pool  *pgxpool.Pool
	now   func() time.Time
	topo  *topology
	group *groupCommit // nil: every callback in a transaction of its own
}

// Options are the optional settings of Open.
type Options struct {
	// MaxConns is the pool size when the URL does not set pool_max_conns
	// (default DefaultMaxConns).
	MaxConns int32
	// Now is the clock of the methods that stamp rows (default time.Now).
	Now func() time.Time
	// RuntimeParams are session settings sent at connect.
	RuntimeParams map[string]string
	// ExecMode is how statements are sent (pgx's default_query_exec_mode):
	// one of ExecModes. Empty: the URL's default_query_exec_mode, else
	// cache_statement (named prepared statements, the fastest on a direct
	// connection; behind a transaction pooler use cache_describe).
	ExecMode string
	// ConnectTimeout bounds each host's connection attempt when the URL
	// (or PGCONNECT_TIMEOUT) sets no connect_timeout. Zero: none.
	ConnectTimeout time.Duration
	// Logger receives the pool's topology events: a promoted primary, a
	// split brain. Nil discards them.
	Logger *slog.Logger
	// OnConnect, when set, is called after each new connection is set up
	// (the database answers again after an outage): ledgerd kicks its
	// keyring loader with it. It must not block.
	OnConnect func()
	// GroupCommit, when above zero, lets callbacks share transactions:
	// up to GroupCommit transactions of callbacks in flight at once, and a
	// callback that finds them all busy committed with the others that
	// queued meanwhile (groupcommit.go). Zero: each callback commits alone.
	GroupCommit int
}

// ExecModes are the values of Options.ExecMode (pgx's names).
var ExecModes = []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"}

var execModes = map[string]pgx.QueryExecMode{
	"cache_statement": pgx.QueryExecModeCacheStatement,
	"cache_describe":  pgx.QueryExecModeCacheDescribe,
	"describe_exec":   pgx.QueryExecModeDescribeExec,
	"exec":            pgx.QueryExecModeExec,
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// Config parses url into a pool configuration: NUMERIC as decimal.Decimal
// on every connection, and statements past their context's deadline
// cancelled by a cancel request (see the package doc).
func Config(url string, o Options) (*pgxpool.Config, error) {
	cfg, _, err := configure(url, o)
	return cfg, err
}

// configure is Config with the topology its hooks report to: each new
// connection's server identity is checked (a second primary is refused),
// connections to a former primary are dropped, and the primary's host is
// tried first.
func configure(url string, o Options) (*pgxpool.Config, *topology, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("database URL: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
		if o.MaxConns > 0 {
			cfg.MaxConns = o.MaxConns
		}
	}
	for k, v := range o.RuntimeParams {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	if o.ExecMode != "" {
		mode, ok := execModes[o.ExecMode]
		if !ok {
			return nil, nil, fmt.Errorf("exec mode %q is not one of %s", o.ExecMode, strings.Join(ExecModes, ", "))
		}
		cfg.ConnConfig.DefaultQueryExecMode = mode
	}
	if cfg.ConnConfig.ConnectTimeout == 0 && o.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
	}
	onConnect := o.OnConnect
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgxdecimal.Register(conn.TypeMap())
		if onConnect != nil {
			onConnect()
		}
		return nil
	}
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: CancelGrace}
	}
	topo := newTopology(o.Logger)
	cfg.ConnConfig.ValidateConnect = topo.validate(cfg.ConnConfig.ValidateConnect)
	cfg.ConnConfig.OnNotice = topo.onNotice
	cfg.ConnConfig.Tracer = commitTracer{}
	cfg.PrepareConn = topo.prepare
	cfg.BeforeConnect = topo.preferPrimary
	return cfg, topo, nil
}

// Open connects a pool to the database at url (see Config). It does not
// wait for the database: the first query does.
func Open(ctx context.Context, url string, o Options) (*DB, error) {
	cfg, topo, err := configure(url, o)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database pool: %w", err)
	}
	db := Wrap(pool, o.Now)
	db.topo = topo
	db.SetGroupCommit(o.GroupCommit)
	return db, nil
}

// Wrap returns a DB on an existing pool (tests build pools of their own).
// now nil means time.Now.
func Wrap(pool *pgxpool.Pool, now func() time.Time) *DB {
	if now == nil {
		now = time.Now
	}
	return &DB{pool: pool, now: now, topo: newTopology(nil)}
}

// Sibling opens a second pool on db's database with db's settings (URL,
// exec mode, deadlines, topology), of at most maxConns connections that
// identify themselves to the server as applicationName (pg_stat_activity).
// Work that must never take the callbacks' connections, such as
// reconciliation, runs on a sibling. The caller closes it.
func (db *DB) Sibling(ctx context.Context, maxConns int32, applicationName string) (*DB, error) {
	cfg := db.pool.Config()
	cfg.MaxConns, cfg.MinConns = maxConns, 0
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = applicationName
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database pool: %w", err)
	}
	return &DB{pool: pool, now: db.now, topo: db.topo}, nil
}

// SetGroupCommit turns group commit on with up to lanes transactions of
// callbacks in flight (at most the pool's size), or off (0), as
// Options.GroupCommit does. Call it before the first callback (tests wrap
// pools of their own).
func (db *DB) SetGroupCommit(lanes int) {
	db.group = nil
	if lanes > 0 {
		db.group = newGroupCommit(db, min(lanes, db.MaxConns()))
	}
}

// GroupCommit returns group commit's counters, nil when it is off.
func (db *DB) GroupCommit() *GroupCommitStats {
	if db.group == nil {
		return nil
	}
	return &db.group.stats
}

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// Ping checks that a connection answers.
func (db *DB) Ping(ctx context.Context) error { return interpret(db.pool.Ping(ctx)) }

// MaxConns returns the pool size.
func (db *DB) MaxConns() int { return int(db.pool.Config().MaxConns) }

// PoolStats are the pool's statistics, for metrics.
type PoolStats struct {
	Total, Idle, Acquired, Constructing, Max                  int32
	AcquireCount, EmptyAcquireCount, CanceledAcquireCount     int64
	AcquireDuration                                           time.Duration
	NewConnsCount, MaxLifetimeDestroyCount, MaxIdleDestroyCnt int64
}

// Stats returns the pool's statistics.
func (db *DB) Stats() PoolStats {
	s := db.pool.Stat()
	return PoolStats{Total: s.TotalConns(), Idle: s.IdleConns(), Acquired: s.AcquiredConns(),
		Constructing: s.ConstructingConns(), Max: s.MaxConns(), AcquireCount: s.AcquireCount(),
		EmptyAcquireCount: s.EmptyAcquireCount(), CanceledAcquireCount: s.CanceledAcquireCount(),
		AcquireDuration: s.AcquireDuration(), NewConnsCount: s.NewConnsCount(),
		MaxLifetimeDestroyCount: s.MaxLifetimeDestroyCount(), MaxIdleDestroyCnt: s.MaxIdleDestroyCount()}
}
