package server

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/store"
)

// DefaultMaxConnections is the largest default cap of open connections per
// listener (LEDGER_MAX_CONNECTIONS unset); a low file descriptor limit
// lowers it (connectionCap).
const DefaultMaxConnections = 1024

// fdReserve is the file descriptors kept out of the listeners' share for
// everything else ledgerd opens (besides the pool's connections): log and
// data files, the embedded Postgres's pipes, the provider API's
// connections, probes.
const fdReserve = 64

// newConnGrace is how long a connection that has sent nothing yet is kept
// from eviction: a client that just connected is about to send.
const newConnGrace = time.Second

// connLogEvery is the least time between two log lines of one listener
// about its connection cap: under attack it is one line per interval with
// the counts since the last, not one per connection.
const connLogEvery = 10 * time.Second

// connectionCap is the cap of open connections per listener: set when not
// zero, else DefaultMaxConnections lowered so that both listeners'
// connections and the pool's fit under the soft file descriptor limit
// fdLimit (0: unknown), and never below 16.
func connectionCap(set int, fdLimit uint64, poolSize int) int {
	if set > 0 {
		return set
	}
	if fdLimit == 0 {
		return DefaultMaxConnections
	}
	budget := (int64(min(fdLimit, 1<<20)) - fdReserve - int64(poolSize)) / 2
	return int(max(16, min(DefaultMaxConnections, budget)))
}

// fdsNeeded is how many file descriptors two listeners of cap connections
// each and the pool need.
func fdsNeeded(cap, poolSize int) uint64 { return uint64(2*cap + poolSize + fdReserve) }

// connMetrics are the listeners' connection metrics, labelled by listener.
type connMetrics struct {
	open, max        *prometheus.GaugeVec
	refused, evicted *prometheus.CounterVec
}

func newConnMetrics(reg prometheus.Registerer) *connMetrics {
	m := &connMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ledgerd_connections_open",
			Help: "Open connections of a listener (callbacks, admin).",
		}, []string{"listener"}),
		max: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ledgerd_connections_max",
			Help: "The cap of open connections of a listener (LEDGER_MAX_CONNECTIONS).",
		}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_connections_refused_total",
			Help: "New connections closed at once because the listener was at its cap with every connection active.",
		}, []string{"listener"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledgerd_connections_evicted_total",
			Help: "Idle connections closed to make room for a new one (at the cap, or out of file descriptors).",
		}, []string{"listener"}),
	}
	if reg != nil {
		reg.MustRegister(m.open, m.max, m.refused, m.evicted)
	}
	return m
}

// connLimit caps a listener's open connections. At the cap a new
// connection takes the place of the one idle longest (a keep-alive
// connection between requests, or one that has sent nothing for
// newConnGrace); only when every connection is busy is the new one closed
// at once. Serve the listener with an http.Server whose ConnState is
// track.
type connLimit struct {
	net.Listener
	name string
	max  int
	log  *slog.Logger
	now  func() time.Time

	open             prometheus.Gauge
	refused, evicted prometheus.Counter

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	// What the next log line reports: counts since the last one.
	lastLog                time.Time
	sinceRefused, sinceEvd int
}

func newConnLimit(ln net.Listener, name string, limit int, m *connMetrics, log *slog.Logger) *connLimit {
	m.max.WithLabelValues(name).Set(float64(limit))
	return &connLimit{Listener: ln, name: name, max: limit, log: log, now: time.Now,
		open: m.open.WithLabelValues(name), refused: m.refused.WithLabelValues(name), evicted: m.evicted.WithLabelValues(name),
		conns: make(map[*limitedConn]struct{}, limit)}
}

// limitedConn is a connection counted by its connLimit until closed.
type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
	// Guarded by l.mu: the state net/http last reported, and since when.
	state http.ConnState
	since time.Time
}

// Close closes the connection and gives its place back.
func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if _, ok := c.l.conns[c]; ok {
			delete(c.l.conns, c)
			c.l.open.Dec()
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// Accept returns the next connection within the cap. Out of file
// descriptors (EMFILE, ENFILE) it closes the connection idle longest
// before returning the error, so that net/http's retry of the accept
// finds one.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				if victim := l.pickIdle(); victim != nil {
					l.note(0, 1, "out of file descriptors")
					_ = victim.Close()
				}
			}
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, state: http.StateNew, since: l.now()}
		if l.admit(lc) {
			return lc, nil
		}
		// Counted and logged before the close, so that a client that sees
		// its connection closed finds the refusal counted.
		l.note(1, 0, "at the connection cap")
		_ = c.Close()
	}
}

// admit counts c in, making room by closing the connection idle longest
// when at the cap; it is false when every connection is busy.
func (l *connLimit) admit(c *limitedConn) bool {
	l.mu.Lock()
	full := len(l.conns) >= l.max
	l.mu.Unlock()
	if full {
		victim := l.pickIdle()
		if victim == nil {
			return false
		}
		// Only Accept adds connections: the place stays free.
		l.note(0, 1, "at the connection cap")
		_ = victim.Close()
	}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	l.open.Inc()
	return true
}

// pickIdle returns the connection idle longest: a keep-alive connection
// between requests, else one that has sent nothing for newConnGrace; nil
// when every connection is busy.
func (l *connLimit) pickIdle() *limitedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var idle, fresh *limitedConn
	for c := range l.conns {
		switch c.state {
		case http.StateIdle:
			if idle == nil || c.since.Before(idle.since) {
				idle = c
			}
		case http.StateNew:
			if now.Sub(c.since) >= newConnGrace && (fresh == nil || c.since.Before(fresh.since)) {
				fresh = c
			}
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// track is the http.Server's ConnState: it records what each connection
// is doing (a TLS connection is followed through to the one accepted).
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	for {
		if lc, ok := c.(*limitedConn); ok {
			l.mu.Lock()
			lc.state, lc.since = st, l.now()
			l.mu.Unlock()
			return
		}
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		c = inner.NetConn()
	}
}

// note counts refused and evicted connections, and logs them at most once
// per connLogEvery with the counts since the last line.
func (l *connLimit) note(refused, evicted int, why string) {
	// Counted once the line (if any) is written: whoever sees the count
	// sees the log too.
	defer func() {
		l.refused.Add(float64(refused))
		l.evicted.Add(float64(evicted))
	}()
	l.mu.Lock()
	l.sinceRefused += refused
	l.sinceEvd += evicted
	now := l.now()
	if !l.lastLog.IsZero() && now.Sub(l.lastLog) < connLogEvery {
		l.mu.Unlock()
		return
	}
	r, e, open := l.sinceRefused, l.sinceEvd, len(l.conns)
	l.lastLog, l.sinceRefused, l.sinceEvd = now, 0, 0
	l.mu.Unlock()
	l.log.Warn("connection cap reached: closing the idlest connections for new ones, refusing new ones while every connection is busy",
		"listener", l.name, "why", why, "refused", r, "evicted", e, "open", open, "max", l.max,
		"nextLineWithin", connLogEvery.String())
}

// sizeConnections raises the soft limit of open files to the hard limit,
// sets the cap of open connections per listener from it, and logs both,
// with a warning when a LEDGER_MAX_CONNECTIONS given does not fit.
func (d *daemon) sizeConnections() {
	soft, hard, err := raiseFileLimit()
	if err != nil {
		d.log.Warn("cannot raise the open files limit to the hard limit", "soft", soft, "hard", hard, "err", err)
	}
	pool := d.poolSize()
	d.maxConns = connectionCap(d.cfg.MaxConnections, soft, pool)
	if soft == 0 {
		return
	}
	d.log.Info("open files limit", "soft", soft, "hard", hard, "maxConnectionsPerListener", d.maxConns)
	if need := fdsNeeded(d.maxConns, pool); need > soft {
		d.log.Warn("LEDGER_MAX_CONNECTIONS does not fit under the open files limit: accept may fail with EMFILE",
			"maxConnectionsPerListener", d.maxConns, "needed", need, "limit", soft)
	}
}

// poolSize is the database pool's size as DATABASE_URL sets it, before
// the pool is opened.
func (d *daemon) poolSize() int {
	if d.cfg.DatabaseURL == "" {
		return defaultPoolSize
	}
	c, err := store.Config(d.cfg.DatabaseURL, d.storeOptions())
	if err != nil {
		return defaultPoolSize
	}
	return int(c.MaxConns)
}
