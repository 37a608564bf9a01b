package server

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/provider-ledger/adapter/internal/problem"
)

// The answers net/http writes itself, before any handler runs, to a
// request it cannot read (a bad %-escape in the path, a duplicated
// Content-Length, no Host, headers over MaxHeaderBytes, an unknown
// transfer coding): one write of exactly
//
//	HTTP/1.1 <status line><ownHeaders><text body>
//
// with no other header. ownAnswerConn rewrites each into the
// problem+json answer, with Cache-Control: no-store, that every other
// answer of ledgerd's has (contract §2.7).
const ownHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// The problem slugs of those answers.
const (
	SlugBadRequest           = "bad-request"             // 400: the request could not be read as HTTP
	SlugHeaderFieldsTooLarge = "header-fields-too-large" // 431
	SlugNotImplemented       = "not-implemented"         // 501: a transfer coding other than chunked
)

// ownAnswerConn is a connection whose net/http error answers are
// rewritten as problem+json. It is what the http.Server reads and writes:
// the accepted connection, or the TLS connection over it.
type ownAnswerConn struct {
	net.Conn
}

// NetConn returns the connection beneath (connLimit.track follows it).
func (c ownAnswerConn) NetConn() net.Conn { return c.Conn }

// Write writes b, or the problem+json answer for b when b is one of
// net/http's own answers.
func (c ownAnswerConn) Write(b []byte) (int, error) {
	if answer, ok := rewriteOwnAnswer(b); ok {
		if _, err := c.Conn.Write(answer); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// Read reads from the connection. A plain-HTTP request to a TLS listener
// is answered, in plain text as net/http does, with a problem+json 400.
func (c ownAnswerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	var rh tls.RecordHeaderError
	if err != nil && errors.As(err, &rh) && rh.Conn != nil && looksLikeHTTP(rh.RecordHeader[:]) {
		answer := problemAnswer(http.StatusBadRequest, SlugBadRequest, "the request is plain HTTP to an HTTPS listener")
		_, _ = rh.Conn.Write(answer)
		_ = rh.Conn.Close()
	}
	return n, err
}

// looksLikeHTTP is net/http's test of a TLS record header that is the
// start of an HTTP request.
func looksLikeHTTP(hdr []byte) bool {
	switch string(hdr) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// rewriteOwnAnswer returns the problem+json answer for b when b is one
// of net/http's own answers.
func rewriteOwnAnswer(b []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 4 || rest[3] != ' ' {
		return nil, false
	}
	status, err := strconv.Atoi(string(rest[:3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	line, body, ok := bytes.Cut(rest, []byte(ownHeaders))
	if !ok || bytes.ContainsAny(line, "\r\n") {
		return nil, false
	}
	slug, detail := SlugBadRequest, "the request could not be read as HTTP/1.1"
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		slug, detail = SlugHeaderFieldsTooLarge, "the request's header fields are over 16 KiB"
	case http.StatusNotImplemented:
		slug, detail = SlugNotImplemented, "the request's transfer coding is not supported"
	case http.StatusBadRequest:
		// net/http's reason, such as "missing required Host header" or
		// "invalid URI", after "400 Bad Request: "; never the request's bytes.
		if _, reason, found := bytes.Cut(body, []byte("400 Bad Request: ")); found && len(reason) < 100 {
			detail = "the request could not be read as HTTP/1.1: " + string(reason)
		}
	}
	return problemAnswer(status, slug, detail), true
}

// problemAnswer is a whole HTTP/1.1 answer carrying a problem+json body,
// closing the connection.
func problemAnswer(status int, slug, detail string) []byte {
	body, _ := json.Marshal(problem.New(slug, status, detail))
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\n"+
		"X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// ownAnswerListener wraps each accepted connection in an ownAnswerConn,
// after TLS when config is set (then the server speaks HTTP/1.1 over it:
// net/http reads TLS only from a *tls.Conn it is given).
type ownAnswerListener struct {
	net.Listener
	config *tls.Config
}

// Accept returns the next connection, wrapped.
func (l ownAnswerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.config != nil {
		c = tls.Server(c, l.config)
	}
	return ownAnswerConn{Conn: c}, nil
}
