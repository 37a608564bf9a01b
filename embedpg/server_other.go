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
