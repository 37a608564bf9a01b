package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Explain summarizes a connection error of the driver in one line: the
// host, the port and the cause, with the next step naming --database-url
// or DATABASE_URL. Other errors are returned as they are; nil stays nil.
func Explain(err error) error { return ExplainFor(err, "--database-url or DATABASE_URL") }

// ExplainFor is Explain naming setting (such as "TEST_DATABASE_URL") as
// where the URL comes from.
//
// The driver's own message has a line per address tried (an IPv4 and an
// IPv6 address of localhost, a TLS attempt and a plain one with
// sslmode=prefer), indented with tabs, and says "server refused TLS
// connection" for a server that merely has no TLS. The summary keeps the
// cause that decided: the server's refusal (a bad password, a missing
// database), a refused connection, an unknown host, a timeout, or else the
// last attempt's error.
func ExplainFor(err error, setting string) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	at := "cannot connect to Postgres"
	if ce.Config != nil {
		at += " at " + net.JoinHostPort(ce.Config.Host, strconv.Itoa(int(ce.Config.Port)))
	}
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &pgErr):
		return fmt.Errorf("%s: %s; %s", at, pgErr.Message, serverRefusal(pgErr.Code, setting))
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: connection refused; is Postgres running there? (%s)", at, setting)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: no such host; check the host in %s", at, setting)
	case timedOut(err):
		return fmt.Errorf("%s: timed out; is the host reachable and Postgres listening on that port? (%s)", at, setting)
	}
	if cause := lastAttempt(errors.Unwrap(ce)); cause != "" {
		return fmt.Errorf("%s: %s (%s)", at, cause, setting)
	}
	return fmt.Errorf("%s (%s)", at, setting)
}

// serverRefusal is the next step after the server refused the connection
// with SQLSTATE code.
func serverRefusal(code, setting string) string {
	switch code {
	case "28P01": // invalid_password
		return "check the user and password in " + setting
	case "28000": // invalid_authorization_specification: no pg_hba.conf line
		return "check the user in " + setting + ", and the server's pg_hba.conf"
	case "3D000": // invalid_catalog_name
		return "check the database name in " + setting + ", or create it"
	case "57P03": // cannot_connect_now: starting up, shutting down, recovering
		return "retry in a moment"
	case "53300": // too_many_connections
		return "the server is at max_connections; retry, or close other clients"
	}
	return "check " + setting
}

func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// attemptPrefix is the "127.0.0.1:5432 (localhost): " before each
// attempt's error in the driver's message.
var attemptPrefix = regexp.MustCompile(`^\S+ \([^)]*\): `)

// lastAttempt is the last line of the driver's per-attempt errors that is
// not a refused TLS negotiation (the server simply has no TLS; with
// sslmode=prefer the driver then tries without), without its address.
func lastAttempt(cause error) string {
	if cause == nil {
		return ""
	}
	var last string
	for line := range strings.SplitSeq(cause.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, "server refused TLS connection") {
			continue
		}
		last = attemptPrefix.ReplaceAllString(line, "")
	}
	return last
}
