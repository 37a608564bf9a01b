package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store"
)

// MigrationLockTimeout bounds ledgerd's wait for the migration lock at
// start (another replica migrating holds it).
const MigrationLockTimeout = 5 * time.Minute

// Waiting for the database at start: the first retry after
// dbRetryFirst, doubling up to dbRetryMax, for as long as it takes (an
// orchestrator's start order is not ledgerd's business).
const (
	dbRetryFirst = 250 * time.Millisecond
	dbRetryMax   = 10 * time.Second
	dbProbeLimit = 15 * time.Second
)

// ConnectTimeout is the connect_timeout ledgerd gives each database host
// when the URL sets none: a third of the request timeout, so that a hung
// host in a multi-host URL costs a callback at most that before the next
// host is tried.
func ConnectTimeout(requestTimeout time.Duration) time.Duration {
	return max(requestTimeout/3, 100*time.Millisecond)
}

// startEmbedded starts the embedded Postgres when DATABASE_URL is unset and
// returns the URL to use.
func (d *daemon) startEmbedded(ctx context.Context) (string, error) {
	if !d.cfg.Embedded() {
		return d.cfg.DatabaseURL, nil
	}
	d.log.Info("DATABASE_URL is unset: starting the embedded Postgres", "dataDir", d.cfg.DataDir)
	pg, err := embedpg.Start(ctx, embedpg.Config{DataDir: d.cfg.DataDir, Logger: d.log})
	if err != nil && ctx.Err() != nil {
		d.log.Info("interrupted before the embedded Postgres was ready", "detail", err.Error())
		return "", err
	} else if err != nil {
		return "", fmt.Errorf("embedded Postgres: %w", err)
	}
	d.stops = append(d.stops, func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := pg.Stop(stopCtx); err != nil {
			d.log.Error("stopping the embedded Postgres", "err", err)
		} else {
			d.log.Info("embedded Postgres stopped")
		}
	})
	// The URL names the password file rather than carrying the password:
	// `psql "<url>"` works; `ledgerctl db-url` prints it again.
	d.log.Info("embedded Postgres ready", "url", pg.PassfileURL(), "log", filepath.Join(d.cfg.DataDir, "postgres.log"))
	return pg.URL(), nil
}

// storeOptions are the pool's options before the exec mode is known.
func (d *daemon) storeOptions() store.Options {
	return store.Options{MaxConns: defaultPoolSize, ConnectTimeout: ConnectTimeout(d.cfg.RequestTimeout), Logger: d.log,
		OnConnect: d.connected, GroupCommit: d.cfg.GroupCommit}
}

// connected is the pools' connect hook: a new connection after an outage
// kicks the keyring loader, which reloads at once while its loads fail.
func (d *daemon) connected() {
	if kick := d.kick.Load(); kick != nil {
		(*kick)()
	}
}

// waitForDatabase probes the database named by env (its URL url) until it
// answers read-write, logging each failed attempt, and returns what it is.
func (d *daemon) waitForDatabase(ctx context.Context, env, url string) (store.ServerInfo, error) {
	delay := dbRetryFirst
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, dbProbeLimit)
		srv, err := store.Probe(pctx, url, d.storeOptions())
		cancel()
		if err == nil && !srv.ReadOnly {
			if attempt > 1 {
				d.log.Info("the database answers", "url", env, "attempts", attempt)
			}
			return srv, nil
		}
		if ctx.Err() != nil {
			return srv, ctx.Err()
		}
		if err == nil {
			err = errors.New("it is read-only (a standby): point it at the primary, or list every host with target_session_attrs=read-write")
		}
		d.log.Warn("waiting for the database", "url", env, "attempt", attempt, "retryIn", delay, "err", store.ExplainFor(err, env).Error())
		select {
		case <-ctx.Done():
			return srv, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, dbRetryMax)
	}
}

// migrate brings the schema to this build's version (LEDGER_MIGRATE=auto)
// or checks that it is there (off).
func (d *daemon) migrate(ctx context.Context, dbURL string, srv store.ServerInfo) error {
	if d.cfg.Migrate == "off" {
		return d.checkSchema(ctx, dbURL, "run `ledgerctl migrate` (with LEDGER_MIGRATE=off ledgerd does not migrate)")
	}
	url := d.cfg.MigrationDatabaseURL
	switch {
	case url != "":
		if _, err := d.waitForDatabase(ctx, "LEDGER_MIGRATION_DATABASE_URL", url); err != nil {
			return err
		}
	case srv.Pooled:
		// The migration lock is session-level: a transaction pooler would
		// take it on one server connection and run the migrations on
		// others. Up to date, nothing needs it.
		return d.checkSchema(ctx, dbURL, "run `ledgerctl migrate`, or set LEDGER_MIGRATION_DATABASE_URL to a direct or "+
			"session-pooled URL (DATABASE_URL goes through a connection pooler, which breaks the migrations' session-level lock)")
	default:
		url = dbURL
	}
	before, version, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: MigrationLockTimeout, Logger: d.log})
	if err != nil {
		return fmt.Errorf("migrating the schema: %w", store.Explain(err))
	}
	if before.UpToDate() {
		d.log.Info("schema up to date", "version", version)
	} else {
		d.log.Info("schema migrated", "from", before.Current, "to", version, "functions", len(before.PendingFunctions))
	}
	return nil
}

// checkSchema fails unless the schema is at this build's version with this
// build's function bodies, naming why ledgerd does not migrate it itself
// and the command that does.
func (d *daemon) checkSchema(ctx context.Context, dbURL, why string) error {
	st, err := schema.StatusURL(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("reading the schema version: %w", store.Explain(err))
	}
	switch {
	case st.UpToDate():
		d.log.Info("schema up to date", "version", st.Current)
		return nil
	case st.Newer():
		return fmt.Errorf("%s: run a ledgerd as new as the one that migrated it", st.Explain())
	}
	return fmt.Errorf("%s: %s", st.Explain(), why)
}

// execMode is LEDGER_DB_EXEC_MODE resolved: auto keeps the URL's
// default_query_exec_mode, else picks cache_describe behind a pooler (no
// named prepared statements, which a transaction pooler hands from one
// client to another) and cache_statement on a direct connection.
func (d *daemon) execMode(dbURL string, srv store.ServerInfo) string {
	switch {
	case d.cfg.DBExecMode != "auto":
		return d.cfg.DBExecMode
	case strings.Contains(dbURL, "default_query_exec_mode"):
		return ""
	case srv.Pooled:
		return "cache_describe"
	}
	return "cache_statement"
}
