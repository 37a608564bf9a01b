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

// errNotRunning is returned by RunningURL when no embedded Postgres of the
// data directory is running.
var errNotRunning = errors.New("embedpg: the embedded Postgres is not running")

// RunningURL is not supported on this operating system.
func RunningURL(string, bool) (string, error) { return "", errNotRunning }

// CrashRestart is not supported on this operating system.
func CrashRestart(context.Context, string) error { return errNotRunning }

// StopCluster does nothing: no cluster can run here.
func StopCluster(context.Context, string) error { return nil }
