package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/schema"
)

// Hooks lets tests observe a running daemon.
type Hooks struct {
	// Started, when set, is called once both listeners accept, with their
	// bound addresses.
	Started func(callbackAddr, adminAddr string)
}

// DefaultPoolSize is the number of database connections when DATABASE_URL
// does not set pool_max_conns.
const DefaultPoolSize = 16

// KeyringMaxAge is how long a replica goes on opening callbacks without a
// successful keyring load (loads run every 2 s).
const KeyringMaxAge = 10 * time.Second

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
	if !strings.Contains(dbURL, "pool_max_conns") {
		// pgx's default (the number of CPUs, at least 4) is too few for a
		// server with many callbacks waiting on I/O.
		poolCfg.MaxConns = DefaultPoolSize
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return fmt.Errorf("database pool: %w", err)
	}
	defer pool.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), newPoolCollector(pool))

	// The keyring: signing secrets in the database, encrypted under the KEK,
	// reloaded into memory every 2 s on every replica.
	kek := cfg.KEK
	if kek == nil {
		path := filepath.Join(cfg.DataDir, "kek")
		if kek, err = keyring.LoadOrCreateKEK(path); err != nil {
			return fmt.Errorf("LEDGER_KEK is unset and %s cannot be used: %w", path, err)
		}
		if !cfg.Embedded() {
			log.Warn("LEDGER_KEK is unset: using the KEK in the data dir; replicas must all be given the same LEDGER_KEK", "path", path)
		}
	}
	secrets, err := keyring.NewStore(pool, kek, keyring.StoreOptions{Logger: log})
	if err != nil {
		return err
	}
	boot, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Store: secrets, EnvSecrets: cfg.SigningSecrets,
		Embedded: cfg.Embedded(), DataDir: cfg.DataDir, Logger: log})
	if err != nil {
		return err
	}
	if boot.SecretFile != "" {
		log.Info("generated a development signing secret", "path", boot.SecretFile, "fingerprint", boot.Generated)
	}
	keys := envelope.NewKeyring()
	loader, err := keyring.NewLoader(keyring.Config{Store: secrets, Keyring: keys, Logger: log})
	if err != nil {
		return err
	}
	if err := loader.Reload(ctx); err != nil {
		return fmt.Errorf("loading the keyring: %w", err)
	}
	if err := loader.Start(ctx); err != nil {
		return err
	}
	defer loader.Stop()

	// A replica whose keyring could not be refreshed for KeyringMaxAge may
	// still hold a secret retired meanwhile: it refuses callbacks (503) and
	// reports not ready until a load succeeds.
	keyringFresh := func() error {
		if age := loader.Age(); age > KeyringMaxAge {
			return fmt.Errorf("the keyring was last loaded %s ago", age.Round(time.Second))
		}
		return nil
	}
	cb, err := callbacks.New(callbacks.Config{
		Check: keyringFresh,
		Pool:  pool, Keyring: keys, ProviderID: cfg.ProviderID, Prefix: cfg.CallbackPrefix,
		MaxInflight: cfg.MaxInflight, RequestTimeout: cfg.RequestTimeout, ClockLeeway: leeway(cfg.ClockLeeway),
		FraudDeny: &cfg.FraudDeny, FraudStepUp: &cfg.FraudStepUp, CreditMax: cfg.CreditMax,
		Logger: log, Registerer: reg,
	})
	if err != nil {
		return err
	}
	purger := &callbacks.Purger{Pool: pool, Retention: cfg.IdempotencyRetention, Logger: log}
	purger.Start(ctx)
	defer purger.Stop()

	var serviceAPI *provider.Client
	if cfg.ServiceBaseURL != "" {
		opts := []provider.Option{provider.WithProviderID(cfg.ProviderID),
			provider.WithAPIKey(cfg.ServiceAPIKeyID, cfg.ServiceAPIKeySecret), provider.WithUserAgent("ledgerd")}
		if cfg.ServiceVersion != "" {
			opts = append(opts, provider.WithVersion(cfg.ServiceVersion))
		}
		if serviceAPI, err = provider.NewClient(cfg.ServiceBaseURL, opts...); err != nil {
			return fmt.Errorf("invalid SERVICE_BASE_URL: %w", err)
		}
	}
	reconciler, err := reconciliation.New(reconciliation.Config{Pool: pool, Provider: serviceAPI,
		HoldMaxAge: cfg.HoldMaxAge, Every: cfg.ReconcileEvery, Logger: log})
	if err != nil {
		return err
	}

	ledgerStore := ledger.NewStore(pool, nil)
	holdStore := holds.NewStore(pool, nil)
	adminAPI := admin.New(admin.Config{
		Ledger: ledgerStore, Holds: holdStore, Secrets: secrets, Reconciler: reconciler, Token: cfg.AdminToken, Logger: log,
		// On a non-loopback listener /metrics (holds outstanding per
		// currency, key fingerprints) needs the token unless made public.
		PublicMetrics: cfg.MetricsPublic || loopback(cfg.AdminListen),
		Metrics:       promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
		Ready: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if err := pool.Ping(ctx); err != nil {
				return errors.New("database unreachable")
			}
			if keys.Len() == 0 {
				return errors.New("no active signing secret")
			}
			if err := keyringFresh(); err != nil {
				return err
			}
			return nil
		},
	})

	adminLn, err := net.Listen("tcp", cfg.AdminListen)
	if err != nil {
		return fmt.Errorf("admin listener: %w", err)
	}
	cbLn, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		adminLn.Close()
		return fmt.Errorf("callback listener: %w", err)
	}
	adminSrv := newHTTPServer(adminAPI, log)
	// A reconciliation run is answered when it is done, which may take a
	// while with many senders to compare against the provider API.
	adminSrv.WriteTimeout = admin.RunTimeout + time.Minute
	cbSrv := newHTTPServer(cb, log)
	// A callback's own deadline is LEDGER_REQUEST_TIMEOUT; the write timeout
	// leaves room to answer 408 after it.
	cbSrv.WriteTimeout = cfg.RequestTimeout + 5*time.Second

	errc := make(chan error, 2)
	go func() { errc <- serve(adminSrv, adminLn, "", "") }()
	go func() { errc <- serve(cbSrv, cbLn, cfg.TLSCert, cfg.TLSKey) }()
	log.Info("ledgerd listening", "callbacks", cbLn.Addr().String(), "prefix", cfg.CallbackPrefix,
		"admin", adminLn.Addr().String(), "tls", cfg.TLSCert != "", "providerID", cfg.ProviderID, "activeKeys", keys.Len())
	if err := reconciler.Start(ctx); err != nil {
		return err
	}
	defer reconciler.Stop()
	if hooks.Started != nil {
		hooks.Started(cbLn.Addr().String(), adminLn.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("listener failed", "err", err)
	}
	log.Info("shutting down: draining callbacks")
	cb.Drain()
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if shutErr := cbSrv.Shutdown(shutCtx); shutErr != nil {
		log.Warn("callback listener did not drain", "err", shutErr)
	}
	if shutErr := adminSrv.Shutdown(shutCtx); shutErr != nil {
		log.Warn("admin listener did not drain", "err", shutErr)
	}
	return err
}

// leeway maps a configured zero leeway to the callbacks' "none" (negative).
func leeway(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
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
