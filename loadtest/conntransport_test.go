package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// transportServer is an echo server that counts its connections: /slow
// answers after 5 s (or when the request ends), /refuse answers 429.
func transportServer(t *testing.T, timeout time.Duration) (*httptest.Server, *http.Client, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
		if r.URL.Path == "/refuse" {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		if r.URL.Path == "/header" {
			body = fmt.Appendf(nil, "%s %s?%s %s %s %d %s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Mark"),
				r.Header.Get("Content-Type"), r.ContentLength, body)
		}
		_, _ = w.Write(append([]byte("echo:"), body...))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: newConnTransport(http.DefaultTransport, timeout, 64)}
	t.Cleanup(hc.CloseIdleConnections)
	return srv, hc, &conns
}

// transportPost posts body to url and returns the status and the body of
// the answer.
func transportPost(ctx context.Context, hc *http.Client, url, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestConnTransport: bench's transport writes each request as sent,
// answers every request with its own answer and keeps connections alive.
func TestConnTransport(t *testing.T) {
	t.Parallel()
	setup, post := transportServer, transportPost
	t.Run("AnswersAndKeepsConnections", func(t *testing.T) {
		t.Parallel()
		srv, hc, conns := setup(t, 10*time.Second)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					path, want := "/ok", http.StatusOK
					if i%7 == 0 {
						path, want = "/refuse", http.StatusTooManyRequests
					}
					body := fmt.Sprintf("g%d-i%d-%s", g, i, bytes.Repeat([]byte("x"), i*40))
					status, got, err := post(context.Background(), hc, srv.URL+path, body)
					if err != nil || status != want || got != "echo:"+body {
						t.Errorf("%s %s: %d %q %v", path, body[:6], status, got, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if n := conns.Load(); n > 8 {
			t.Fatalf("%d connections for 8 senders: not kept alive", n)
		}
	})

	t.Run("WritesTheRequest", func(t *testing.T) {
		t.Parallel()
		srv, hc, _ := setup(t, 10*time.Second)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/header?q=1", strings.NewReader("abc"))
		req.Header.Set("X-Mark", "m1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); string(b) != "echo:POST /header?q=1 m1 application/json 3 abc" {
			t.Fatalf("the server read %q", b)
		}
	})

}

// TestConnTransportEnds: bench's transport replaces a connection the
// server closed, and ends an exchange at its context's end or at its
// timeout.
func TestConnTransportEnds(t *testing.T) {
	t.Parallel()
	setup, post := transportServer, transportPost
	t.Run("ReplacesAConnectionTheServerClosed", func(t *testing.T) {
		t.Parallel()
		srv, hc, conns := setup(t, 10*time.Second)
		for i := range 3 {
			if status, got, err := post(context.Background(), hc, srv.URL+"/ok", "a"); err != nil || status != 200 || got != "echo:a" {
				t.Fatalf("request %d: %d %q %v", i, status, got, err)
			}
			srv.CloseClientConnections()
		}
		if n := conns.Load(); n != 3 {
			t.Fatalf("%d connections, want 3", n)
		}
	})

	t.Run("EndsAtTheContextsEnd", func(t *testing.T) {
		t.Parallel()
		srv, hc, _ := setup(t, 10*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, _, err := post(ctx, hc, srv.URL+"/slow", "s"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("took %s", d)
		}
		if status, _, err := post(context.Background(), hc, srv.URL+"/ok", "after"); err != nil || status != 200 {
			t.Fatalf("after a cancelled exchange: %d %v", status, err)
		}
	})

	t.Run("EndsAtItsTimeout", func(t *testing.T) {
		t.Parallel()
		srv, hc, _ := setup(t, 200*time.Millisecond)
		var ne net.Error
		if _, _, err := post(context.Background(), hc, srv.URL+"/slow", "s"); !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("err = %v, want a timeout", err)
		}
	})
}
