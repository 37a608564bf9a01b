package embedpg

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Config configures [Start].
type Config struct {
	// DataDir holds the cluster (DataDir/pg) and the material generated for it
	// (files 0600, directories 0700). Required; created if missing.
	DataDir string
	// BinDir, when set, is the directory of initdb and postgres; otherwise
	// they are found by [FindBinaries].
	BinDir string
	// Logger receives warnings (permission changes, stale files, escalated
	// shutdowns). Nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds the wait for the server to accept connections.
	// Zero means 60s.
	StartTimeout time.Duration
}

// errInUse is returned by [Start] when another running Instance (in this or
// another process) holds the data directory.
var errInUse = errors.New("embedpg: data directory is in use by another running embedded PostgreSQL")

// Instance is a running private PostgreSQL cluster started by [Start]. Call
// [Instance.Stop] when done.
type Instance struct {
	url     string
	dataDir string // absolute, symlinks resolved
	pgDir   string // dataDir/pg
	log     *slog.Logger

	proc   *os.Process
	exited chan struct{} // closed once proc has been reaped
	lock   *os.File      // flock on dataDir/embedpg.lock

	stopOnce sync.Once
	stopErr  error
}

// URL returns a connection URL for the cluster's superuser, password
// included: postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres?sslmode=disable.
func (s *Instance) URL() string { return s.url }
