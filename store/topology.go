package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/ledger"
)

// Identity names a Postgres server's history: the cluster's system
// identifier (shared by a primary and the standbys cloned from it, unique
// to each initdb) and the timeline (raised by every promotion). Two servers
// answering read-write with different identities are two primaries: a
// split brain.
type Identity struct {
	SystemID uint64
	Timeline uint32
}

// String implements fmt.Stringer: the Identity in one line.
func (id Identity) String() string {
	return fmt.Sprintf("system %d timeline %d", id.SystemID, id.Timeline)
}

// Topology is what the pool has learnt about the primary.
type Topology struct {
	Primary        Identity  // the current primary; zero until the first connection
	PrimaryAddr    string    // its address as last connected to
	PrimaryChanges int64     // promotions and cluster changes seen (ledgerd_db_primary_changes_total)
	SplitBrains    int64     // episodes of two primaries (ledgerd_db_split_brains_total)
	LastConflict   time.Time // when another primary last answered read-write; zero: never
	Unreplicated   int64     // commits whose wait for the synchronous standby was cancelled (ledgerd_db_unreplicated_commits_total)
	Withheld       int64     // successes answered as unavailable because their commit was unreplicated (ledgerd_unreplicated_answers_withheld_total)
}

// SplitBrainWindow is how long after another primary last answered
// read-write the pool still reports a split brain (DB.CheckPrimary), so that
// readiness fails until a single primary is known.
const SplitBrainWindow = 10 * time.Second

// errStalePrimary refuses a connection to a server that answers read-write
// while another primary is known: pgx then tries the next host.
var errStalePrimary = errors.New("store: refused a second primary (split brain)")

// identityKey is where a connection's Identity is kept (pgconn.CustomData).
const identityKey = "ledger.identity"

// identitySQL reads a server's identity and whether it is a standby. On a
// primary the timeline is that of the WAL being written (the first 8 hex
// digits of its file name), which a promotion raises at once; the control
// file's checkpoint timeline follows only at the next checkpoint.
const identitySQL = `SELECT s.system_identifier, pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN c.timeline_id
       ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END
FROM pg_control_system() s, pg_control_checkpoint() c`

// readIdentity runs identitySQL on a connection being set up (the simple
// protocol: it works through any pooler).
func readIdentity(ctx context.Context, pc *pgconn.PgConn) (id Identity, standby bool, err error) {
	res, err := pc.Exec(ctx, identitySQL).ReadAll()
	if err != nil {
		return id, false, err
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 3 {
		return id, false, errors.New("store: unexpected answer to the identity query")
	}
	row := res[0].Rows[0]
	if id.SystemID, err = strconv.ParseUint(string(row[0]), 10, 64); err != nil {
		return id, false, fmt.Errorf("store: system identifier: %w", err)
	}
	tl, err := strconv.ParseUint(string(row[2]), 10, 32)
	if err != nil {
		return id, false, fmt.Errorf("store: timeline: %w", err)
	}
	id.Timeline = uint32(tl)
	return id, string(row[1]) == "t", nil
}

// topology follows the primary across the pool's connections: every new
// connection reports its server's identity (validate), a connection to a
// former primary is not handed out again (prepare), and, with several
// hosts, each host is asked in turn (probe).
type topology struct {
	log *slog.Logger
	now func() time.Time

	untracked    sync.Once
	unreplicated atomic.Int64
	withheld     atomic.Int64

	mu       sync.Mutex
	t        Topology
	lastSeen time.Time // the primary last answered
}

func newTopology(log *slog.Logger) *topology {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &topology{log: log, now: time.Now}
}

// observe records a server answering read-write at addr and says whether a
// connection to it may be used.
func (tp *topology) observe(id Identity, addr string) error {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	now := tp.now()
	p := tp.t.Primary
	switch {
	case p == Identity{}:
		tp.log.Info("database primary", "identity", id.String(), "addr", addr)
	case id == p:
	case id.SystemID == p.SystemID && id.Timeline > p.Timeline:
		tp.t.PrimaryChanges++
		tp.log.Warn("database primary changed: a standby was promoted", "from", p.String(), "to", id.String(), "addr", addr)
	case id.SystemID == p.SystemID || now.Sub(tp.lastSeen) < SplitBrainWindow:
		// A former primary (lower timeline) still answers read-write, or
		// another cluster does while ours is alive: refuse it.
		if now.Sub(tp.t.LastConflict) >= SplitBrainWindow {
			tp.t.SplitBrains++
		}
		tp.t.LastConflict = now
		tp.log.Error("split brain: a second database answers read-write; refusing it. Fence it (stop it or make it a standby)",
			"refused", id.String(), "refusedAddr", addr, "primary", p.String(), "primaryAddr", tp.t.PrimaryAddr)
		return errStalePrimary
	default:
		tp.t.PrimaryChanges++
		tp.log.Warn("database primary changed: another cluster answers read-write", "from", p.String(), "to", id.String(), "addr", addr)
	}
	tp.t.Primary, tp.t.PrimaryAddr, tp.lastSeen = id, addr, now
	return nil
}

// snapshot returns what is known.
func (tp *topology) snapshot() Topology {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	t := tp.t
	t.Unreplicated = tp.unreplicated.Load()
	t.Withheld = tp.withheld.Load()
	return t
}

// validate wraps the URL's ValidateConnect (target_session_attrs): a
// server answering read-write reports its identity, and a second primary is
// refused, so that pgx moves on to the next host.
func (tp *topology) validate(next pgconn.ValidateConnectFunc) pgconn.ValidateConnectFunc {
	return func(ctx context.Context, pc *pgconn.PgConn) error {
		if next != nil {
			if err := next(ctx, pc); err != nil {
				return err
			}
		}
		id, standby, err := readIdentity(ctx, pc)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// A server that will not tell (a managed service without
			// pg_walfile_name, say): the connection is used untracked.
			tp.untracked.Do(func() {
				tp.log.Warn("cannot read the database's system identifier and timeline: split-brain detection is off", "err", err)
			})
			return nil
		}
		if err != nil {
			return err
		}
		if standby {
			return nil
		}
		pc.CustomData()[identityKey] = id
		return tp.observe(id, pc.Conn().RemoteAddr().String())
	}
}

// prepare keeps a connection to a former primary from being handed out.
func (tp *topology) prepare(_ context.Context, conn *pgx.Conn) (bool, error) {
	id, ok := conn.PgConn().CustomData()[identityKey].(Identity)
	if !ok {
		return true, nil
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return id == tp.t.Primary, nil
}

// preferPrimary puts the hosts at the primary's last address first, so
// that a dead or hung former primary listed first does not cost every new
// connection its connect timeout.
func (tp *topology) preferPrimary(ctx context.Context, cc *pgx.ConnConfig) error {
	tp.mu.Lock()
	addr := tp.t.PrimaryAddr
	tp.mu.Unlock()
	if addr == "" || len(cc.Fallbacks) == 0 {
		return nil
	}
	hosts := append([]*pgconn.FallbackConfig{{Host: cc.Host, Port: cc.Port, TLSConfig: cc.TLSConfig}}, cc.Fallbacks...)
	var first, rest []*pgconn.FallbackConfig
	for _, h := range hosts {
		if hostIs(ctx, h, addr) {
			first = append(first, h)
		} else {
			rest = append(rest, h)
		}
	}
	if len(first) == 0 {
		return nil
	}
	hosts = append(first, rest...)
	cc.Host, cc.Port, cc.TLSConfig, cc.Fallbacks = hosts[0].Host, hosts[0].Port, hosts[0].TLSConfig, hosts[1:]
	return nil
}

// hostIs reports whether h is addr (an IP:port), resolving a host name.
func hostIs(ctx context.Context, h *pgconn.FallbackConfig, addr string) bool {
	ip, port, err := net.SplitHostPort(addr)
	if err != nil || port != strconv.Itoa(int(h.Port)) {
		return false
	}
	if h.Host == ip {
		return true
	}
	if net.ParseIP(h.Host) != nil || len(h.Host) > 0 && h.Host[0] == '/' {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	ips, err := net.DefaultResolver.LookupHost(ctx, h.Host)
	if err != nil {
		return false
	}
	for _, a := range ips {
		if a == ip {
			return true
		}
	}
	return false
}

// HostProbeInterval is how often DB.ProbeHosts is meant to be called (by
// ledgerd, when the URL lists several hosts).
const HostProbeInterval = 2 * time.Second

// MultiHost reports whether the database URL lists several hosts, each of
// which ProbeHosts asks.
func (db *DB) MultiHost() bool {
	return len(db.pool.Config().ConnConfig.Fallbacks) > 0 && len(hostGroups(db.pool.Config().ConnConfig)) > 1
}

// ProbeHosts connects to each host of the URL in turn and records which
// answer read-write: a promotion is noticed even while the pool's
// connections still reach the former primary (which are then dropped), and
// two primaries answering at once are a split brain (CheckPrimary). A host
// that does not answer is skipped.
func (db *DB) ProbeHosts(ctx context.Context) {
	cc := db.pool.Config().ConnConfig
	type seen struct {
		id   Identity
		addr string
	}
	var primaries []seen
	for _, group := range hostGroups(cc) {
		c := cc.Config.Copy()
		c.Host, c.Port, c.TLSConfig, c.Fallbacks = group[0].Host, group[0].Port, group[0].TLSConfig, group[1:]
		c.ValidateConnect, c.AfterConnect, c.OnNotice, c.OnNotification = nil, nil, nil, nil
		pc, err := pgconn.ConnectConfig(ctx, c)
		if err != nil {
			continue
		}
		id, standby, err := readIdentity(ctx, pc)
		addr := pc.Conn().RemoteAddr().String()
		_ = pc.Close(ctx)
		if err == nil && !standby {
			primaries = append(primaries, seen{id, addr})
		}
	}
	// The latest timeline first: a former primary seen in the same round
	// is then the second primary, never taken for the current one.
	slices.SortStableFunc(primaries, func(a, b seen) int { return cmp.Compare(b.id.Timeline, a.id.Timeline) })
	for _, p := range primaries {
		_ = db.topo.observe(p.id, p.addr)
	}
}

// hostGroups groups the URL's hosts by address (sslmode=prefer lists each
// host twice: with and without TLS).
func hostGroups(cc *pgx.ConnConfig) [][]*pgconn.FallbackConfig {
	all := append([]*pgconn.FallbackConfig{{Host: cc.Host, Port: cc.Port, TLSConfig: cc.TLSConfig}}, cc.Fallbacks...)
	var groups [][]*pgconn.FallbackConfig
	index := map[string]int{}
	for _, h := range all {
		k := net.JoinHostPort(h.Host, strconv.Itoa(int(h.Port)))
		if i, ok := index[k]; ok {
			groups[i] = append(groups[i], h)
			continue
		}
		index[k] = len(groups)
		groups = append(groups, []*pgconn.FallbackConfig{h})
	}
	return groups
}

// Topology returns what the pool knows of the primary.
func (db *DB) Topology() Topology { return db.topo.snapshot() }

// CheckPrimary fails while a single primary is not known: another server
// answered read-write within SplitBrainWindow, or the primary's sessions
// are read-only (a standby, or a primary demoted by
// default_transaction_read_only).
func (db *DB) CheckPrimary(ctx context.Context) error {
	if err := db.splitBrain(); err != nil {
		return err
	}
	var readOnly string
	if err := db.pool.QueryRow(ctx, "SHOW transaction_read_only").Scan(&readOnly); err != nil {
		return interpret(err)
	}
	if readOnly == "on" {
		return ledger.ErrUnavailable.Wrap(errors.New("the database is read-only (a standby?): point DATABASE_URL at the primary, with target_session_attrs=read-write"))
	}
	return nil
}
