package callbacks_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// slowServer is a callback server on b's database and keyring with the
// body settings under test, and a client that seals for it.
type slowServer struct {
	srv    *callbacks.Handler
	http   *httptest.Server
	client *caller.Client
	log    *syncbuf.Buffer
}

func newSlowServer(t *testing.T, b *bundle, cfg callbacks.Config) *slowServer {
	t.Helper()
	s := &slowServer{log: &syncbuf.Buffer{}}
	cfg.DB, cfg.Keyring, cfg.ProviderID = b.db, b.keyring, provider
	cfg.Registerer = prometheus.NewRegistry()
	cfg.Logger = slog.New(slog.NewJSONHandler(s.log, nil))
	var err error
	if s.srv, err = callbacks.New(cfg); err != nil {
		t.Fatal(err)
	}
	s.http = httptest.NewServer(s.srv)
	t.Cleanup(s.http.Close)
	s.client = &caller.Client{BaseURL: s.http.URL + "/ledger", Key: b.key}
	return s
}

// slowUpload opens a connection that sends a callback's headers and then
// its body at one byte per second (the first byte at once). It is closed
// when the test ends.
func slowUpload(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST /ledger/authorize HTTP/1.1\r\nHost: ledger\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle sends one more body byte on each connection every second until
// the test ends.
func trickle(t *testing.T, conns []net.Conn) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				for _, c := range conns {
					_, _ = c.Write([]byte(" "))
				}
			}
		}
	})
	t.Cleanup(func() { close(done); wg.Wait() })
}

// TestSlowUploads: a request refused on its headers is answered without
// waiting for its body, and the bodies read at once are bounded (a sender
// whose body is ready waits for a place, not for a trickling sender).
// TestSlowUploadsDoNotStarveCallbacks and TestSlowUploadBodyTimeout hold
// the rest: trickling senders hold no in-flight slot, and a body that does
// not arrive in time is answered 408.
func TestSlowUploads(t *testing.T) {
	t.Parallel()

	t.Run("RefusedWithoutWaitingForTheBody", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		s := newSlowServer(t, b, callbacks.Config{RequestTimeout: time.Minute, BodyTimeout: 50 * time.Second})
		s.srv.Drain()
		c := slowUpload(t, strings.TrimPrefix(s.http.URL, "http://"))
		buf := make([]byte, 4096)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := c.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 503 ") {
			t.Fatalf("a slow upload to a draining server: %q %v", buf[:n], err)
		}
	})

	t.Run("BodyReadsBounded", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		s := newSlowServer(t, b, callbacks.Config{MaxBodyReads: 1, BodyTimeout: time.Second})
		slow := slowUpload(t, strings.TrimPrefix(s.http.URL, "http://"))
		reads := s.srv.BodyReads()
		wait.Until(t, "the slow body to be read", func() bool { return testutil.ToFloat64(reads) == 1 })
		// A ready body waits for the one place; the slow upload gives it
		// up at its body timeout, which comes before the ready body's.
		type reply struct {
			r   *caller.Reply
			err error
		}
		answered := make(chan reply, 1)
		go func() {
			r, err := s.client.Send(context.Background(), claims.Capture, captureClaims("br-p", "br-k", "hold_x"))
			answered <- reply{r, err}
		}()
		most := 0.0
		var got *reply
		for got == nil {
			most = max(most, testutil.ToFloat64(reads))
			select {
			case a := <-answered:
				got = &a
			case <-time.After(time.Millisecond):
			}
		}
		if got.err != nil || got.r.Status != 200 {
			t.Fatalf("the ready body: %+v %v", got.r, got.err)
		}
		if most > 1 {
			t.Fatalf("%v bodies read at once, over MaxBodyReads 1", most)
		}
		buf := make([]byte, 4096)
		_ = slow.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := slow.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 408 ") {
			t.Fatalf("the slow upload: %q %v", buf[:n], err)
		}
	})
}

// TestSlowUploadBodyTimeout: a body not sent within the body timeout is
// answered 408 and its connection closed, counted and logged as a warning.
func TestSlowUploadBodyTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	s := newSlowServer(t, b, callbacks.Config{BodyTimeout: 200 * time.Millisecond})
	c := slowUpload(t, strings.TrimPrefix(s.http.URL, "http://"))
	buf := make([]byte, 4096)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no answer to a slow upload: %v", err)
	}
	answer := string(buf[:n])
	if !strings.HasPrefix(answer, "HTTP/1.1 408 ") || !strings.Contains(answer, "urn:provider-ledger:problem:body-timeout") {
		t.Fatalf("slow upload answered:\n%s", answer)
	}
	// The connection is closed after the answer: its rest is not read.
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for err == nil {
		_, err = c.Read(buf)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection stayed open after the 408")
	}
	wait.Until(t, "the 408 to be counted", func() bool {
		return testutil.ToFloat64(s.srv.Metrics().Requests(claims.Authorize, "body_timeout", 408)) == 1
	})
	if n := testutil.ToFloat64(s.srv.BodyReads()); n != 0 {
		t.Fatalf("bodies being read after the 408: %v", n)
	}
	wait.Until(t, "the access log line", func() bool {
		return strings.Contains(s.log.String(), `"outcome":"body_timeout"`)
	})
	if line := s.log.String(); !strings.Contains(line, `"status":408`) || !strings.Contains(line, `"level":"WARN"`) {
		t.Fatalf("log: %s", line)
	}
}

// TestSlowUploadsDoNotStarveCallbacks: with 96 slow uploads open, each
// reading its body, callbacks still take the in-flight slots and are
// answered.
func TestSlowUploadsDoNotStarveCallbacks(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "su-1", Owner: "alice", Funds: "100", Source: "src-su"})
	// The slow uploads must stay open for the whole test: a body
	// timeout far longer than the test takes.
	s := newSlowServer(t, b, callbacks.Config{MaxInflight: 64, RequestTimeout: time.Minute, BodyTimeout: 50 * time.Second})
	addr := strings.TrimPrefix(s.http.URL, "http://")
	conns := make([]net.Conn, 96)
	for i := range conns {
		conns[i] = slowUpload(t, addr)
	}
	trickle(t, conns)
	reads, inflight := s.srv.BodyReads(), s.srv.Metrics().Inflight()
	// Every slow upload is in the server, reading its body (before the
	// fix they took the 64 in-flight slots instead).
	wait.Until(t, "the 96 slow uploads to be read", func() bool {
		return testutil.ToFloat64(reads) >= 96 || testutil.ToFloat64(inflight) >= 64
	})
	var took []time.Duration
	for i := range 6 {
		t0 := time.Now()
		r, err := s.client.Send(context.Background(), claims.Authorize,
			authorizeClaims(fmt.Sprintf("su-p%d", i), fmt.Sprintf("su-k%d", i), "alice", "src-su", "1", 0))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("callback %d of 6 with 96 slow uploads open: %d %v", i+1, r.Status, r.Problem)
		}
		took = append(took, time.Since(t0).Round(time.Microsecond))
	}
	t.Logf("96 slow uploads open: six callbacks answered 200 in %v", took)
	if n := testutil.ToFloat64(reads); n != 96 {
		t.Fatalf("slow uploads being read after the six callbacks: %v, want 96", n)
	}
	storetest.AssertBalances(t, b.db, "su-1", "100", "6", "94")
}
