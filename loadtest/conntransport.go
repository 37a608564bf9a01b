package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// connTransport is the http.RoundTripper of bench's callbacks: HTTP/1.1
// over plain-TCP keep-alive connections, each request written and its
// answer read on the goroutine that sends it. net/http's Transport hands
// every request to a writer and a reader goroutine of its connection, and
// http.Client's Timeout adds a goroutine per request: their wake-ups were
// the largest share of the load generator's CPU per cycle, which is part
// of what bench measures. Requests to any other scheme (https) go to
// fallback.
type connTransport struct {
	fallback http.RoundTripper
	timeout  time.Duration // per request, from writing to the end of the answer
	maxIdle  int
	dialer   net.Dialer

	mu   sync.Mutex
	idle map[string][]*benchConn // by host:port
}

// benchConn is one keep-alive connection of a connTransport.
type benchConn struct {
	net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func newConnTransport(fallback http.RoundTripper, timeout time.Duration, maxIdle int) *connTransport {
	return &connTransport{fallback: fallback, timeout: timeout, maxIdle: maxIdle,
		dialer: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}, idle: map[string][]*benchConn{}}
}

// RoundTrip sends req on an idle connection to its host, or a new one. A
// reused connection the server closed meanwhile (an answer of nothing at
// all) is replaced by a new one and the request sent again, as net/http
// does; a callback is idempotent by its key.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return t.fallback.RoundTrip(req)
	}
	host := canonicalHost(req.URL.Host)
	for {
		c, reused := t.get(host)
		if c == nil {
			var err error
			if c, err = t.dial(req.Context(), host); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, nothingRead, err := t.send(c, req)
		if err == nil {
			return resp, nil
		}
		c.Close()
		var ne net.Error
		timedOut := errors.As(err, &ne) && ne.Timeout()
		if !reused || !nothingRead || timedOut || req.Context().Err() != nil || !rewindable(req) {
			closeBody(req)
			return nil, err
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			again := *req
			again.Body = body
			req = &again
		}
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// rewindable reports whether req can be sent again: no body, or one
// GetBody makes again.
func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// canonicalHost is host with the default port when it has none.
func canonicalHost(host string) string {
	if _, _, err := net.SplitHostPort(host); err != nil {
		return net.JoinHostPort(host, "80")
	}
	return host
}

func (t *connTransport) dial(ctx context.Context, host string) (*benchConn, error) {
	nc, err := t.dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	return &benchConn{Conn: nc, br: bufio.NewReaderSize(nc, 8<<10), bw: bufio.NewWriterSize(nc, 4<<10)}, nil
}

// send writes req on c and reads the head of its answer; the body is read
// from c by the caller, and gives c back when closed after its end.
// nothingRead says that the connection failed before giving any byte of
// an answer: closed by the server while idle, or reset.
func (t *connTransport) send(c *benchConn, req *http.Request) (_ *http.Response, nothingRead bool, _ error) {
	ctx := req.Context()
	deadline := time.Now().Add(t.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.SetDeadline(deadline); err != nil {
		return nil, true, err
	}
	// A cancelled context ends the exchange at once: the deadline passes.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	err := writeRequest(c.bw, req)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		stop()
		return nil, true, ctxErr(ctx, err)
	}
	if _, err := c.br.Peek(1); err != nil {
		stop()
		return nil, true, ctxErr(ctx, err)
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		stop()
		return nil, false, ctxErr(ctx, err)
	}
	keep := !resp.Close && !req.Close && resp.ProtoAtLeast(1, 1)
	resp.Body = &connBody{ReadCloser: resp.Body, t: t, c: c, host: canonicalHost(req.URL.Host), keep: keep, stop: stop}
	return resp, false, nil
}

// writeRequest writes req as net/http's Request.Write does, less its
// User-Agent, for a request with a known length (the callbacks'), and by
// Request.Write for any other or one whose header has a line break.
func writeRequest(w *bufio.Writer, req *http.Request) error {
	if req.ContentLength < 0 || req.ContentLength > 0 && req.Body == nil || len(req.TransferEncoding) > 0 || req.Close ||
		len(req.Trailer) > 0 || !plainHeader(req.Header) {
		return req.Write(w)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	for k, vs := range req.Header {
		for _, v := range vs {
			w.WriteString("\r\n")
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
		}
	}
	w.WriteString("\r\nContent-Length: ")
	w.WriteString(strconv.FormatInt(req.ContentLength, 10))
	w.WriteString("\r\n\r\n")
	if req.Body == nil {
		return nil
	}
	n, err := io.Copy(w, req.Body)
	_ = req.Body.Close()
	if err == nil && n != req.ContentLength {
		err = fmt.Errorf("loadtest: body of %d bytes, ContentLength %d", n, req.ContentLength)
	}
	return err
}

// plainHeader reports whether h has no line break and no Host or
// Content-Length of its own (writeRequest writes those).
func plainHeader(h http.Header) bool {
	for k, vs := range h {
		if k == "Host" || k == "Content-Length" || strings.ContainsAny(k, "\r\n: ") {
			return false
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				return false
			}
		}
	}
	return true
}

// ctxErr is the context's error when it ended the exchange (its deadline,
// the connection's too, may pass a moment before the context says so),
// else err.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return err
}

// connBody is an answer's body: closed, it gives its connection back when
// the answer was read to its end and the connection may be kept.
type connBody struct {
	io.ReadCloser
	t      *connTransport
	c      *benchConn
	host   string
	keep   bool
	stop   func() bool
	closed bool
}

func (b *connBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	canceled := !b.stop()
	// The rest of a small body is read so that the connection can serve
	// the next request; a large one is not worth it.
	_, err := io.CopyN(io.Discard, b.ReadCloser, 64<<10)
	_ = b.ReadCloser.Close()
	if b.keep && !canceled && errors.Is(err, io.EOF) && b.c.br.Buffered() == 0 {
		b.t.put(b.host, b.c)
		return nil
	}
	return b.c.Close()
}

// get takes an idle connection to host, most recently used first.
func (t *connTransport) get(host string) (*benchConn, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[host]
	if len(cs) == 0 {
		return nil, false
	}
	c := cs[len(cs)-1]
	t.idle[host] = cs[:len(cs)-1]
	return c, true
}

// put keeps c for host's next request, or closes it past maxIdle.
func (t *connTransport) put(host string, c *benchConn) {
	t.mu.Lock()
	if len(t.idle[host]) < t.maxIdle {
		t.idle[host] = append(t.idle[host], c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// CloseIdleConnections closes the idle connections (http.Client's
// CloseIdleConnections calls it).
func (t *connTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*benchConn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.Close()
		}
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
