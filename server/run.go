package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/loop"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
)

// Hooks lets tests observe a running daemon.
type Hooks struct {
	// Started, when set, is called once both listeners accept, with their
	// bound addresses.
	Started func(callbackAddr, adminAddr string)
}

// defaultPoolSize is the number of database connections when DATABASE_URL
// does not set pool_max_conns.
const defaultPoolSize = store.DefaultMaxConns

// reconcilePoolSize is the size of reconciliation's own pool, apart from
// the callbacks': one connection for a run's snapshot or fix, one for its
// lease and records. Its connections are named ReconcileApplicationName
// in pg_stat_activity.
const reconcilePoolSize = 2

// ReconcileApplicationName is the application_name of reconciliation's
// connections.
const ReconcileApplicationName = "ledgerd-reconciliation"

// metricsPoolSize is the size of the pool /metrics reads the database on,
// apart from the callbacks': a scrape never waits for their connections.
// One connection for each collector that reads the database (the holds
// outstanding, the last reconciliation run), so that one blocked read (a
// table locked) does not hold up the other. Its connections are named
// MetricsApplicationName in pg_stat_activity.
const metricsPoolSize = 2

// MetricsApplicationName is the application_name of the metrics' connections.
const MetricsApplicationName = "ledgerd-metrics"

// keyringMaxAge is how long a replica goes on opening callbacks without a
// successful keyring load (loads run every 2 s).
const keyringMaxAge = 10 * time.Second

// ShutdownTimeout bounds the drain of in-flight requests at shutdown.
const ShutdownTimeout = 10 * time.Second

// daemon is a running ledgerd: what Run starts, and stops in reverse.
type daemon struct {
	cfg     Config
	log     *slog.Logger
	db      *store.DB
	reconDB *store.DB // reconciliation's own pool
	reg     *prometheus.Registry
	keys    *envelope.KeySet
	secrets *keyring.Vault
	loader  *keyring.Loader
	// kick is the loader's Kick once it exists: the pools' connect hook
	// calls it, so that the keyring reloads as soon as a primary answers.
	kick  atomic.Pointer[func()]
	cb    *callbacks.Handler
	stops []func()
	// maxConns is the cap of open connections per listener.
	maxConns int
	readyLog readyLog

	// metricsDB is the pool of the metrics read at scrape time.
	metricsDB *store.DB
}

// Run runs ledgerd with cfg until ctx ends, then shuts down gracefully. It
// returns nil after a clean shutdown.
func Run(ctx context.Context, cfg Config, log *slog.Logger, hooks Hooks) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &daemon{cfg: cfg, log: log}
	defer d.stop()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	if err := checkPorts(cfg); err != nil {
		return err
	}
	d.sizeConnections()
	if err := d.openDatabase(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting for the database
		}
		return err
	}
	if err := d.startKeyring(ctx); err != nil {
		return err
	}
	if err := d.registerMetrics(); err != nil {
		return err
	}
	adminAPI, err := d.startServices(ctx)
	if err != nil {
		return err
	}
	d.initSeries()
	return d.serve(ctx, adminAPI, hooks)
}

// stop stops what was started, last first.
func (d *daemon) stop() {
	for i := len(d.stops) - 1; i >= 0; i-- {
		d.stops[i]()
	}
}

// checkPorts fails when a listen address is taken, before anything slow
// (initdb, waiting for the database, migrations) is done.
func checkPorts(cfg Config) error {
	for _, l := range []struct{ env, addr string }{{"LEDGER_LISTEN", cfg.Listen}, {"LEDGER_ADMIN_LISTEN", cfg.AdminListen}} {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fmt.Errorf("%s %s cannot be listened on (another ledgerd?): %w", l.env, l.addr, err)
		}
		ln.Close()
	}
	return nil
}

// openDatabase starts the embedded Postgres when DATABASE_URL is unset,
// waits for the database, applies the migrations and opens the pool.
func (d *daemon) openDatabase(ctx context.Context) error {
	dbURL, err := d.startEmbedded(ctx)
	if err != nil {
		return err
	}
	srv, err := d.waitForDatabase(ctx, "DATABASE_URL", dbURL)
	if err != nil {
		return err
	}
	if err := d.migrate(ctx, dbURL, srv); err != nil {
		return err
	}
	opts := d.storeOptions()
	opts.ExecMode = d.execMode(dbURL, srv)
	d.log.Info("database", "version", srv.Version, "pooled", srv.Pooled, "execMode", opts.ExecMode, "connectTimeout", opts.ConnectTimeout.String())
	if d.db, err = store.Open(ctx, dbURL, opts); err != nil {
		return err
	}
	d.stops = append(d.stops, d.db.Close)
	d.fillSkeletons(ctx)
	// Reconciliation reads whole tables: it runs on a small pool of its
	// own, so that a run never waits for, or takes, the callbacks'
	// connections.
	if d.reconDB, err = d.db.Sibling(ctx, reconcilePoolSize, ReconcileApplicationName); err != nil {
		return err
	}
	d.stops = append(d.stops, d.reconDB.Close)
	if d.metricsDB, err = d.db.Sibling(ctx, metricsPoolSize, MetricsApplicationName); err != nil {
		return err
	}
	d.stops = append(d.stops, d.metricsDB.Close)
	if err := d.probeHosts(ctx); err != nil {
		return err
	}
	d.reg = prometheus.NewRegistry()
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newPoolCollector(d.db), newBuildInfo())
	return nil
}

// fillSkeletons stores the confusable skeletons of the accounts that have
// none (created before they were stored, or by an earlier build): account
// creation compares new IDs with those it leaves, so a failure is only
// logged.
func (d *daemon) fillSkeletons(ctx context.Context) {
	filled, left, err := d.db.FillSkeletons(ctx)
	switch {
	case err != nil:
		d.log.Warn("filling the accounts' confusable skeletons", "err", err)
	case filled > 0 || left > 0:
		d.log.Info("filled the accounts' confusable skeletons", "filled", filled, "left", left)
	}
}

// probeHosts asks every host of a multi-host DATABASE_URL which is the
// primary, now and every store.HostProbeInterval, so that a promotion or a
// second primary is noticed whatever the pool's connections reach.
func (d *daemon) probeHosts(ctx context.Context) error {
	if !d.db.MultiHost() {
		return nil
	}
	d.db.ProbeHosts(ctx)
	var l loop.Loop
	if err := l.Start(ctx, store.HostProbeInterval, false, d.db.ProbeHosts); err != nil {
		return err
	}
	d.stops = append(d.stops, l.Stop)
	return nil
}

// startKeyring opens the keyring (signing secrets in the database,
// encrypted under the KEK), imports or generates secrets, loads them and
// reloads them every 2 s.
func (d *daemon) startKeyring(ctx context.Context) error {
	kek := d.cfg.KEK
	if kek == nil && d.cfg.Embedded() { // LoadConfig requires one with DATABASE_URL
		path := filepath.Join(d.cfg.DataDir, keyring.KEKFile)
		var err error
		if kek, err = keyring.LoadOrCreateKEK(path); err != nil {
			return fmt.Errorf("LEDGER_KEK is unset and %s cannot be used: %w", path, err)
		}
	}
	var err error
	if d.secrets, err = keyring.NewVault(d.db, kek, keyring.VaultOptions{Logger: d.log, PreviousKEK: d.cfg.KEKPrevious}); err != nil {
		return err
	}
	if err := d.secrets.RegisterMetrics(d.reg); err != nil {
		return err
	}
	current, previous := d.secrets.KEKFingerprints()
	d.log.Info("keyring KEKs", "kek", current, "previousKEK", previous)
	if _, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: d.secrets, EnvSecrets: d.cfg.SigningSecrets,
		Embedded: d.cfg.Embedded(), DataDir: d.cfg.DataDir, Logger: d.log}); err != nil {
		return err
	}
	d.keys = envelope.NewKeySet()
	if d.loader, err = keyring.NewLoader(keyring.Config{Vault: d.secrets, Keyring: d.keys, Logger: d.log}); err != nil {
		return err
	}
	if err := d.loader.Reload(ctx); err != nil {
		return fmt.Errorf("loading the keyring: %w", err)
	}
	kick := d.loader.Kick
	d.kick.Store(&kick)
	if err := d.loader.Start(ctx); err != nil {
		return err
	}
	d.stops = append(d.stops, d.loader.Stop)
	return nil
}

// keyringFresh fails while the keyring has not been reloaded for
// keyringMaxAge: the replica may still hold a secret retired meanwhile, so
// it refuses callbacks (503) and reports not ready until a load succeeds.
func (d *daemon) keyringFresh() error {
	if age := d.loader.Age(); age > keyringMaxAge {
		return fmt.Errorf("the keyring was last loaded %s ago", age.Round(time.Second))
	}
	return nil
}

// startServices builds the callbacks and the admin API, and starts the
// purger and the reconciliation schedule.
func (d *daemon) startServices(ctx context.Context) (*admin.Handler, error) {
	cfg := d.cfg
	var err error
	d.cb, err = callbacks.New(callbacks.Config{
		Check: d.keyringFresh, DB: d.db, Keyring: d.keys, ProviderID: cfg.ProviderID, Prefix: cfg.CallbackPrefix,
		KeysMissing: d.secrets.MissingKEK, // a KEK rotation under way: 503, not 400
		MaxInflight: cfg.MaxInflight, RequestTimeout: cfg.RequestTimeout, ClockLeeway: leeway(cfg.ClockLeeway),
		MaxTokenLifetime: cfg.MaxTokenLifetime,
		// Over HTTP/1 a connection reads one body at a time: as many
		// readers as connections never refuses one that the cap let in.
		BodyTimeout: cfg.BodyTimeout, MaxBodyReads: d.maxConns,
		FraudDeny: &cfg.FraudDeny, FraudStepUp: &cfg.FraudStepUp, CreditMax: cfg.CreditMax, StaleHoldAge: cfg.HoldMaxAge,
		Logger: d.log, Registerer: d.reg, MetricsDB: d.metricsDB,
	})
	if err != nil {
		return nil, err
	}
	purger := &callbacks.Purger{DB: d.db, Retention: cfg.IdempotencyRetention, Logger: d.log}
	if err := purger.Start(ctx); err != nil {
		return nil, err
	}
	d.stops = append(d.stops, purger.Stop)
	serviceAPI, err := serviceClient(cfg)
	if err != nil {
		return nil, err
	}
	reconciler, err := reconciliation.New(reconciliation.Config{DB: d.reconDB, Provider: serviceAPI,
		HoldMaxAge: cfg.HoldMaxAge, Every: cfg.ReconcileEvery, FullEvery: cfg.ReconcileFullEvery,
		ProviderConcurrency: cfg.ReconcileProviderConcurrency, Logger: d.log})
	if err != nil {
		return nil, err
	}
	if err := reconciler.Start(ctx); err != nil {
		return nil, err
	}
	d.stops = append(d.stops, reconciler.Stop)
	return admin.New(admin.Config{
		DB: d.db, Secrets: d.secrets, Reconciler: reconciler, Token: cfg.AdminToken, Logger: d.log,
		ApprovalOver: cfg.ApprovalOver, ApprovalTTL: cfg.ApprovalTTL,
		// On a non-loopback listener /metrics (holds outstanding per
		// currency, key fingerprints) needs the token unless made public.
		PublicMetrics: cfg.MetricsPublic || loopback(cfg.AdminListen),
		Metrics:       d.metricsHandler(),
		Ready:         d.ready,
	}), nil
}

// serviceClient is the service's provider API client, when configured.
func serviceClient(cfg Config) (*provider.Client, error) {
	if cfg.ServiceBaseURL == "" {
		return nil, nil
	}
	opts := []provider.Option{provider.WithProviderID(cfg.ProviderID),
		provider.WithAPIKey(cfg.ServiceAPIKeyID, cfg.ServiceAPIKeySecret), provider.WithUserAgent("ledgerd")}
	if cfg.ServiceVersion != "" {
		opts = append(opts, provider.WithVersion(cfg.ServiceVersion))
	}
	c, err := provider.NewClient(cfg.ServiceBaseURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("invalid SERVICE_BASE_URL: %w", err)
	}
	return c, nil
}

// serve listens until ctx ends or a listener fails, then drains.
func (d *daemon) serve(ctx context.Context, adminAPI *admin.Handler, hooks Hooks) error {
	adminLn, cbLn, err := d.listen()
	if err != nil {
		return err
	}
	adminSrv := newHTTPServer(adminAPI, d.log, adminLn)
	// A reconciliation run is answered when it is done, which may take a
	// while with many senders to compare against the provider API.
	adminSrv.WriteTimeout = admin.RunTimeout + time.Minute
	cbSrv := newHTTPServer(d.cb, d.log, cbLn)
	// A callback's own deadline is LEDGER_REQUEST_TIMEOUT; the write timeout
	// leaves room to answer after it, once the database has.
	cbSrv.WriteTimeout = d.cfg.RequestTimeout + store.CancelGrace + 5*time.Second

	errc := make(chan error, 2)
	go func() { errc <- listen(adminSrv, adminLn, "", "") }()
	go func() { errc <- listen(cbSrv, cbLn, d.cfg.TLSCert, d.cfg.TLSKey) }()
	d.log.Info("ledgerd listening", "callbacks", cbLn.Addr().String(), "prefix", d.cfg.CallbackPrefix,
		"admin", adminLn.Addr().String(), "tls", d.cfg.TLSCert != "", "providerID", d.cfg.ProviderID, "activeKeys", d.keys.Len(),
		"maxConnections", cbLn.max)
	if hooks.Started != nil {
		hooks.Started(cbLn.Addr().String(), adminLn.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
		d.log.Error("listener failed", "err", err)
	}
	d.log.Info("shutting down: draining callbacks")
	d.cb.Drain()
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if shutErr := cbSrv.Shutdown(shutCtx); shutErr != nil {
		d.log.Warn("callback listener did not drain", "err", shutErr)
	}
	if shutErr := adminSrv.Shutdown(shutCtx); shutErr != nil {
		d.log.Warn("admin listener did not drain", "err", shutErr)
	}
	return err
}

// listen opens the admin and callback listeners, each capped at
// LEDGER_MAX_CONNECTIONS open connections.
func (d *daemon) listen() (adminLn, cbLn *connLimit, err error) {
	a, err := net.Listen("tcp", d.cfg.AdminListen)
	if err != nil {
		return nil, nil, fmt.Errorf("admin listener: %w", err)
	}
	c, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		a.Close()
		return nil, nil, fmt.Errorf("callback listener: %w", err)
	}
	m := newConnMetrics(d.reg)
	return newConnLimit(a, "admin", d.maxConns, m, d.log), newConnLimit(c, "callbacks", d.maxConns, m, d.log), nil
}

// leeway maps a configured zero leeway to the callbacks' "none" (negative).
func leeway(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// idleTimeout is how long a keep-alive connection may wait for its next
// request: short, so that idle connections do not hold file descriptors
// (at the connection cap the idlest are closed anyway).
const idleTimeout = 30 * time.Second

func newHTTPServer(h http.Handler, log *slog.Logger, ln *connLimit) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    16 << 10,
		ConnState:         ln.track,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// listen serves ln, over TLS when cert is set, with net/http's own
// answers rewritten as problem+json (ownAnswerConn).
func listen(srv *http.Server, ln net.Listener, cert, key string) error {
	own := ownAnswerListener{Listener: ln}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return err
		}
		own.config = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	}
	err := srv.Serve(own)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// NewLogger returns ledgerd's logger at level: JSON lines when w is not a
// terminal, text otherwise.
func NewLogger(w *os.File, terminal bool, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if terminal {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
