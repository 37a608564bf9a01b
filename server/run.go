package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/schema"
)

// Hooks lets tests observe a running daemon.
type Hooks struct {
	// Started, when set, is called once both listeners accept, with their
	// bound addresses.
	Started func(callbackAddr, adminAddr string)
}

// ShutdownTimeout bounds the drain of in-flight requests at shutdown.
const ShutdownTimeout = 10 * time.Second

// Run runs ledgerd with cfg until ctx ends, then shuts down gracefully. It
// returns nil after a clean shutdown.
func Run(ctx context.Context, cfg Config, log *slog.Logger, hooks Hooks) (err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dbURL := cfg.DatabaseURL
	if cfg.Embedded() {
		log.Info("DATABASE_URL is unset: starting the embedded Postgres", "dataDir", cfg.DataDir)
		pg, err := embedpg.Start(ctx, embedpg.Config{DataDir: cfg.DataDir, Logger: log})
		if err != nil {
			return fmt.Errorf("embedded Postgres: %w", err)
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if stopErr := pg.Stop(stopCtx); stopErr != nil {
				log.Error("stopping the embedded Postgres", "err", stopErr)
			} else {
				log.Info("embedded Postgres stopped")
			}
		}()
		dbURL = pg.URL()
	}

	version, err := schema.MigrateURL(ctx, dbURL)
	if err != nil {
		return err
	}
	log.Info("schema migrated", "version", version)

	poolCfg, err := ledger.PoolConfig(dbURL)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return fmt.Errorf("database pool: %w", err)
	}
	defer pool.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), newPoolCollector(pool))

	ledgerStore := ledger.NewStore(pool, nil)
	holdStore := holds.NewStore(pool, nil)
	adminAPI := admin.New(admin.Config{
		Ledger: ledgerStore, Holds: holdStore, Token: cfg.AdminToken, Logger: log,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
		Ready: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if err := pool.Ping(ctx); err != nil {
				return errors.New("database unreachable")
			}
			return nil
		},
	})

	adminLn, err := net.Listen("tcp", cfg.AdminListen)
	if err != nil {
		return fmt.Errorf("admin listener: %w", err)
	}
	adminSrv := newHTTPServer(adminAPI, log)

	errc := make(chan error, 2)
	go func() { errc <- serve(adminSrv, adminLn, "", "") }()
	log.Info("admin API listening", "addr", adminLn.Addr().String())
	if hooks.Started != nil {
		hooks.Started("", adminLn.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("listener failed", "err", err)
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if shutErr := adminSrv.Shutdown(shutCtx); shutErr != nil {
		log.Warn("admin listener did not drain", "err", shutErr)
	}
	return err
}

func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

func serve(srv *http.Server, ln net.Listener, cert, key string) error {
	var err error
	if cert != "" {
		err = srv.ServeTLS(ln, cert, key)
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// NewLogger returns ledgerd's logger: JSON lines when w is not a terminal,
// text otherwise.
func NewLogger(w *os.File, terminal bool) *slog.Logger {
	if terminal {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}
