package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// Server is what Probe learns of the database behind a URL.
type Server struct {
	// Pooled: the connection goes through a pooler (pgbouncer, …): the
	// backend process that answers is not the one the connection was given
	// at start-up.
	Pooled bool
	// ReadOnly: the server is a standby (or read-only by default).
	ReadOnly bool
	// Version is the server's server_version.
	Version string
}

// Probe connects once to the database at url (with o's connect timeout and
// the URL's target_session_attrs), says what it is, and disconnects. It
// uses the simple protocol only, so it works through any pooler.
//
// A pooler is recognised by behaviour, not by name: Postgres tells a new
// connection the PID of its backend (BackendKeyData), and
// pg_backend_pid() then returns the same; a pooler makes up the first
// (it has no backend of its own to give) and the second comes from
// whichever server connection runs the query.
func Probe(ctx context.Context, url string, o Options) (Server, error) {
	cfg, _, err := configure(url, o)
	if err != nil {
		return Server{}, err
	}
	cc := cfg.ConnConfig.Config.Copy()
	// target_session_attrs, without the identity check of the pool.
	if cc.ValidateConnect, err = targetSessionAttrs(url); err != nil {
		return Server{}, err
	}
	pc, err := pgconn.ConnectConfig(ctx, cc)
	if err != nil {
		return Server{}, interpret(err)
	}
	defer pc.Close(context.WithoutCancel(ctx))
	res, err := pc.Exec(ctx, `SELECT pg_backend_pid(), current_setting('transaction_read_only'), current_setting('server_version')`).ReadAll()
	if err != nil {
		return Server{}, interpret(err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 {
		return Server{}, errors.New("store: unexpected answer to the probe")
	}
	row := res[0].Rows[0]
	pid, err := strconv.ParseUint(string(row[0]), 10, 32)
	if err != nil {
		return Server{}, fmt.Errorf("store: backend pid: %w", err)
	}
	return Server{Pooled: uint32(pid) != pc.PID(), ReadOnly: string(row[1]) == "on", Version: string(row[2])}, nil
}

// targetSessionAttrs returns the validator pgconn installs for the URL's
// target_session_attrs.
func targetSessionAttrs(url string) (pgconn.ValidateConnectFunc, error) {
	c, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return c.ValidateConnect, nil
}
