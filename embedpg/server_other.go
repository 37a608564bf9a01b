//go:build !unix

package embedpg

import (
	"context"
	"errors"
)

// Start is not supported on this operating system.
func Start(context.Context, Config) (*Server, error) {
	return nil, errors.New("embedpg: the embedded PostgreSQL is not supported on this operating system; set DATABASE_URL")
}

// Stop does nothing: no Server can be started here.
func (s *Server) Stop(context.Context) error { return nil }

// PassfileURL is empty: no Server can be started here.
func (s *Server) PassfileURL() string { return "" }

// ErrNotRunning is returned by RunningURL when no embedded Postgres of the
// data directory is running.
var ErrNotRunning = errors.New("embedpg: the embedded Postgres is not running")

// RunningURL is not supported on this operating system.
func RunningURL(string, bool) (string, error) { return "", ErrNotRunning }
