package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestConnectionCap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		set     int
		fdLimit uint64
		pool    int
		want    int
	}{
		{0, 0, 16, DefaultMaxConnections},       // limit unknown
		{0, 1 << 20, 16, DefaultMaxConnections}, // plenty
		{0, 1024, 16, (1024 - fdReserve - 16) / 2},
		{0, 256, 16, (256 - fdReserve - 16) / 2},
		{0, 100, 16, 16}, // never below 16
		{300, 256, 16, 300},
	} {
		if got := connectionCap(c.set, c.fdLimit, c.pool); got != c.want {
			t.Errorf("connectionCap(%d, %d, %d) = %d, want %d", c.set, c.fdLimit, c.pool, got, c.want)
		}
		if c.set == 0 && c.fdLimit > 0 && c.want > 16 && fdsNeeded(c.want, c.pool) > c.fdLimit {
			t.Errorf("the default cap %d does not fit under %d descriptors", c.want, c.fdLimit)
		}
	}
}

// capBundle is an HTTP server on a capped listener, with a clock the test
// moves and its log.
type capBundle struct {
	l       *connLimit
	addr    string
	release chan struct{} // closing it answers the requests to /block
	clock   atomic.Int64  // unix nanoseconds
	log     *syncLog
}

type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.FieldsFunc(s.b.String(), func(r rune) bool { return r == '\n' })
}

func capSetup(t *testing.T, limit int) *capBundle {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &capBundle{addr: ln.Addr().String(), release: make(chan struct{}), log: &syncLog{}}
	b.clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	b.l = newConnLimit(ln, "callbacks", limit, newConnMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(b.log, nil)))
	b.l.now = func() time.Time { return time.Unix(0, b.clock.Load()) }
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			<-b.release
		}
		_, _ = io.WriteString(w, "ok")
	}), slog.New(slog.DiscardHandler), b.l)
	go func() { _ = srv.Serve(b.l) }()
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
		_ = srv.Close()
	})
	return b
}

func (b *capBundle) advance(d time.Duration) { b.clock.Add(int64(d)) }

// dial opens a connection, closed when the test ends.
func (b *capBundle) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// request sends GET path on c and, unless path is /block, reads the
// answer, leaving c open (keep-alive).
func request(t *testing.T, c net.Conn, path string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if path == "/block" {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
}

// closed reports whether the server closed c without answering.
func closed(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return n == 0 && err != nil
}

// states counts the tracked connections in st.
func (b *capBundle) states(st http.ConnState) int {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	n := 0
	for c := range b.l.conns {
		if c.state == st {
			n++
		}
	}
	return n
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestConnLimit: at the cap a new connection takes the place of the one
// idle longest; it is closed at once only when every connection is busy;
// both are counted, and logged at most once per interval.
func TestConnLimit(t *testing.T) {
	t.Parallel()

	t.Run("IdleKeepAliveMakesRoom", func(t *testing.T) { connLimitIdleKeepAliveMakesRoom(t) })

	t.Run("RefusedWhenEveryConnectionIsBusy", func(t *testing.T) {
		t.Parallel()
		b := capSetup(t, 2)
		busy := []net.Conn{b.dial(t), b.dial(t)}
		for _, c := range busy {
			request(t, c, "/block")
		}
		waitUntil(t, "two busy connections", func() bool { return b.states(http.StateActive) == 2 })
		if !closed(t, b.dial(t)) {
			t.Fatal("a connection over the cap was kept while every one was busy")
		}
		if n := testutil.ToFloat64(b.l.refused); n != 1 {
			t.Fatalf("refused = %v", n)
		}
		close(b.release)
		for _, c := range busy {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("a busy connection after the refusal: %v %v", resp, err)
			}
		}
	})

	t.Run("SilentNewConnectionsAfterAGrace", func(t *testing.T) {
		t.Parallel()
		b := capSetup(t, 1)
		silent := b.dial(t)
		waitUntil(t, "the silent connection", func() bool { return b.states(http.StateNew) == 1 })
		b.advance(newConnGrace / 2)
		if !closed(t, b.dial(t)) {
			t.Fatal("a connection just made was closed for a newer one")
		}
		b.advance(newConnGrace)
		request(t, b.dial(t), "/")
		if !closed(t, silent) {
			t.Fatal("a connection silent past the grace kept its place")
		}
		if r, e := testutil.ToFloat64(b.l.refused), testutil.ToFloat64(b.l.evicted); r != 1 || e != 1 {
			t.Fatalf("refused %v evicted %v", r, e)
		}
	})

	t.Run("LogsOncePerInterval", func(t *testing.T) {
		t.Parallel()
		b := capSetup(t, 1)
		request(t, b.dial(t), "/block")
		waitUntil(t, "a busy connection", func() bool { return b.states(http.StateActive) == 1 })
		for range 5 {
			closed(t, b.dial(t))
		}
		waitUntil(t, "5 refusals", func() bool { return testutil.ToFloat64(b.l.refused) == 5 })
		if lines := b.log.lines(); len(lines) != 1 || !strings.Contains(lines[0], "refused=1 ") {
			t.Fatalf("after 5 refusals in one interval: %q", lines)
		}
		b.advance(connLogEvery)
		closed(t, b.dial(t))
		waitUntil(t, "6 refusals", func() bool { return testutil.ToFloat64(b.l.refused) == 6 })
		lines := b.log.lines()
		if len(lines) != 2 || !strings.Contains(lines[1], "refused=5 ") || !strings.Contains(lines[1], "listener=callbacks") {
			t.Fatalf("after the interval: %q", lines)
		}
	})
}

// connLimitIdleKeepAliveMakesRoom: at the cap, a new connection evicts the
// one idle longest (counted as evicted, not refused) and the others serve.
func connLimitIdleKeepAliveMakesRoom(t *testing.T) {
	t.Parallel()
	b := capSetup(t, 3)
	idle := make([]net.Conn, 3)
	for i := range idle {
		idle[i] = b.dial(t)
		request(t, idle[i], "/")
		b.advance(time.Second)
		waitUntil(t, "the connection to be idle", func() bool { return b.states(http.StateIdle) == i+1 })
	}
	request(t, b.dial(t), "/")
	if !closed(t, idle[0]) {
		t.Fatal("the connection idle longest is still open")
	}
	request(t, idle[1], "/") // the others still serve
	if n := testutil.ToFloat64(b.l.evicted); n != 1 {
		t.Fatalf("evicted = %v", n)
	}
	if n := testutil.ToFloat64(b.l.refused); n != 0 {
		t.Fatalf("refused = %v", n)
	}
	if n := testutil.ToFloat64(b.l.open); n != 3 {
		t.Fatalf("open = %v", n)
	}
}
