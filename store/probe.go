package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/provider-ledger/adapter/ledger"
)

// ServerInfo is what Probe learns of the database behind a URL.
type ServerInfo struct {
	// Pooled: the connection goes through a pooler (pgbouncer, …): the
	// backend process that answers is not the one the connection was given
	// at start-up.
	Pooled bool
	// ReadOnly: the server is a standby (or read-only by default).
	ReadOnly bool
	// Version is the server's server_version.
	Version string
}

// Probe connects once to the database at url (with o's connect timeout and
// the URL's target_session_attrs), says what it is, and disconnects. It
// uses the simple protocol only, so it works through any pooler.
//
// A pooler is recognised by behaviour, not by name: Postgres tells a new
// connection the PID of its backend (BackendKeyData), and
// pg_backend_pid() then returns the same; a pooler makes up the first
// (it has no backend of its own to give) and the second comes from
// whichever server connection runs the query.
func Probe(ctx context.Context, url string, o Options) (ServerInfo, error) {
	cfg, _, err := configure(url, o)
	if err != nil {
		return ServerInfo{}, err
	}
	cc := cfg.ConnConfig.Config.Copy()
	// target_session_attrs, without the identity check of the pool.
	if cc.ValidateConnect, err = targetSessionAttrs(url); err != nil {
		return ServerInfo{}, err
	}
	pc, err := pgconn.ConnectConfig(ctx, cc)
	if err != nil {
		return ServerInfo{}, interpret(err)
	}
	defer pc.Close(context.WithoutCancel(ctx))
	res, err := pc.Exec(ctx, `SELECT pg_backend_pid(), current_setting('transaction_read_only'), current_setting('server_version')`).ReadAll()
	if err != nil {
		return ServerInfo{}, interpret(err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 {
		return ServerInfo{}, errors.New("store: unexpected answer to the probe")
	}
	row := res[0].Rows[0]
	pid, err := strconv.ParseUint(string(row[0]), 10, 32)
	if err != nil {
		return ServerInfo{}, fmt.Errorf("store: backend pid: %w", err)
	}
	return ServerInfo{Pooled: uint32(pid) != pc.PID(), ReadOnly: string(row[1]) == "on", Version: string(row[2])}, nil
}

// targetSessionAttrs returns the validator pgconn installs for the URL's
// target_session_attrs.
func targetSessionAttrs(url string) (pgconn.ValidateConnectFunc, error) {
	c, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return c.ValidateConnect, nil
}

// HealthStatementTimeout bounds the statement of a readiness probe (its
// statement_timeout and lock_timeout): ledger tables that do not answer a
// primary-key read within it are "statements timing out".
const HealthStatementTimeout = time.Second

// Health is what one readiness probe (DB.Health) found of the database;
// each field is nil when that part is fine.
type Health struct {
	// Unreachable: no new connection could be made and used.
	Unreachable error
	// ReadOnly: a new session is read-only: the server is a standby (in
	// recovery), or default_transaction_read_only is on for it.
	ReadOnly error
	// Slow: a primary-key read of the ledger's accounts and holds did not
	// finish within HealthStatementTimeout (a lock held on a table, an
	// overloaded or stalled server).
	Slow error
	// SplitBrain: another server answered read-write within
	// SplitBrainWindow, so a single primary is not known.
	SplitBrain error
}

// healthSQL is the readiness probe: one round trip in one transaction,
// whose SET LOCALs end with it (a transaction pooler hands the server
// connection on unchanged).
var healthSQL = fmt.Sprintf(`BEGIN;
SET LOCAL statement_timeout = %[1]d; SET LOCAL lock_timeout = %[1]d;
SELECT current_setting('transaction_read_only'), pg_is_in_recovery(),
  (SELECT count(*) FROM accounts WHERE account_id = '') + (SELECT count(*) FROM holds WHERE hold_reference = '');
COMMIT`, HealthStatementTimeout.Milliseconds())

// Health probes the database as a new connection of the pool would find
// it, on a connection of its own that is closed afterwards: it never waits
// for a pooled connection (a pool busy with callbacks is not a reason to
// be unready), and it sees what a reconnecting pool would see (a server
// turned read-only for new sessions). The connection is made as the
// pool's are (the URL's hosts, target_session_attrs, the primary's host
// first, a second primary refused). ctx bounds the whole probe.
func (db *DB) Health(ctx context.Context) Health {
	h := Health{SplitBrain: db.splitBrain()}
	cc := db.pool.Config().ConnConfig.Copy()
	_ = db.topo.preferPrimary(ctx, cc)
	cfg := &cc.Config
	cfg.OnNotice, cfg.OnNotification = nil, nil
	// At ctx's deadline the socket is closed at once: no cancel request,
	// no grace (see the package doc): the probe has its own bound.
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: pc.Conn()}
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		if ro := readOnlyServer(ctx, cfg); ro != nil {
			h.ReadOnly = ro
		} else {
			h.Unreachable = fmt.Errorf("connecting: %w", interpret(err))
		}
		return h
	}
	defer pc.Close(context.WithoutCancel(ctx))
	res, err := pc.Exec(ctx, healthSQL).ReadAll()
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && (pgErr.Code == "57014" || pgErr.Code == "55P03"):
		h.Slow = fmt.Errorf("a primary-key read of accounts and holds did not finish within %s (SQLSTATE %s): a lock held on a table, or an overloaded server", HealthStatementTimeout, pgErr.Code)
	case err != nil && ctx.Err() != nil:
		h.Slow = fmt.Errorf("the database did not answer a primary-key read of accounts and holds in time: %w", ctx.Err())
	case err != nil:
		h.Unreachable = fmt.Errorf("the probe query failed: %w", interpret(err))
	case len(res) != 5 || len(res[3].Rows) != 1 || len(res[3].Rows[0]) != 3:
		h.Unreachable = errors.New("store: unexpected answer to the readiness probe")
	default:
		h.ReadOnly = readOnly(string(res[3].Rows[0][0]), string(res[3].Rows[0][1]))
	}
	return h
}

// readOnly words a session's transaction_read_only and pg_is_in_recovery.
func readOnly(txReadOnly, inRecovery string) error {
	switch {
	case inRecovery == "t":
		return errors.New("the database is a standby (in recovery): point DATABASE_URL at the primary, with target_session_attrs=read-write")
	case txReadOnly == "on":
		return errors.New("new sessions are read-only (default_transaction_read_only is on for this database, role or server)")
	}
	return nil
}

// readOnlyServer tells why a connection was refused when it is because
// every server answers read-only (target_session_attrs=read-write): it
// connects once more without that check and asks. Nil otherwise.
func readOnlyServer(ctx context.Context, cfg *pgconn.Config) error {
	if ctx.Err() != nil {
		return nil
	}
	c := cfg.Copy()
	c.ValidateConnect = nil
	pc, err := pgconn.ConnectConfig(ctx, c)
	if err != nil {
		return nil
	}
	defer pc.Close(context.WithoutCancel(ctx))
	res, err := pc.Exec(ctx, `SELECT current_setting('transaction_read_only'), pg_is_in_recovery()`).ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 2 {
		return nil
	}
	return readOnly(string(res[0].Rows[0][0]), string(res[0].Rows[0][1]))
}

// splitBrain fails while another server answered read-write within
// SplitBrainWindow.
func (db *DB) splitBrain() error {
	t := db.topo.snapshot()
	if t.LastConflict.IsZero() {
		return nil
	}
	ago := db.topo.now().Sub(t.LastConflict)
	if ago >= SplitBrainWindow {
		return nil
	}
	return ledger.ErrUnavailable.Wrap(fmt.Errorf("split brain: a second database answered read-write %s ago (primary %s at %s); fence it",
		ago.Round(time.Second), t.Primary, t.PrimaryAddr))
}
