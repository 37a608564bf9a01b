package store

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Explain summarizes a connection error of the driver (several lines, one
// per address tried, with TLS noise) in one line: the host, the port and the
// cause, with the next step. Other errors are returned as they are.
func Explain(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	at := fmt.Sprintf("cannot connect to Postgres at %s:%d", ce.Config.Host, ce.Config.Port)
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: connection refused; is Postgres running there? (--database-url or DATABASE_URL)", at)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: no such host; check the host in --database-url or DATABASE_URL", at)
	case errors.As(err, &pgErr):
		return fmt.Errorf("%s: %s; check the user, password and database in --database-url or DATABASE_URL", at, pgErr.Message)
	}
	cause := errors.Unwrap(ce)
	if cause == nil {
		return fmt.Errorf("%s", at)
	}
	first, _, _ := strings.Cut(cause.Error(), "\n")
	return fmt.Errorf("%s: %s", at, first)
}
