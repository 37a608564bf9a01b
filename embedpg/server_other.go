//go:build !unix

package embedpg

import (
	"context"
	"errors"
)

// Start is not supported on this operating system.
func Start(context.Context, Config) (*Instance, error) {
	return nil, errors.New("embedpg: the embedded PostgreSQL is not supported on this operating system; set DATABASE_URL")
}

// Stop does nothing: no Instance can be started here.
func (s *Instance) Stop(context.Context) error { return nil }

// PassfileURL is empty: no Instance can be started here.
func (s *Instance) PassfileURL() string { return "" }

// ErrNotRunning is returned by RunningURL when no embedded Postgres of the
// data directory is running.
var ErrNotRunning = errors.New("embedpg: the embedded Postgres is not running")

// RunningURL is not supported on this operating system.
func RunningURL(string, bool) (string, error) { return "", ErrNotRunning }

// CrashRestart is not supported on this operating system.
func CrashRestart(context.Context, string) error { return ErrNotRunning }

// StopCluster does nothing: no cluster can run here.
func StopCluster(context.Context, string) error { return nil }
