package keyring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/loop"
)

// DefaultInterval is how often a Loader reloads the keyring by default. A
// change made through any replica reaches every replica's keyring within
// one interval plus one load (contract §1: within 5 s).
const DefaultInterval = 2 * time.Second

// failureLogEvery: while the database keeps failing, a Loader logs the first
// failure and then one in this many, so an outage does not flood the log.
const failureLogEvery = 30

// Config configures a Loader.
type Config struct {
	// Vault is where the secrets are kept. Required.
	Vault *Vault
	// Keyring is the in-memory keyring the callbacks open requests with;
	// every load replaces its keys. Required.
	Keyring *envelope.KeySet
	// Interval between loads of the background loop; 0 means
	// DefaultInterval. Must not be negative.
	Interval time.Duration
	// LoadTimeout bounds one load, so that a load stuck behind a lock
	// fails (and is logged) instead of silently keeping old keys; 0 means
	// DefaultLoadTimeout.
	LoadTimeout time.Duration
	// Logger receives key-set changes and load failures (IDs and
	// fingerprints only). Nil discards.
	Logger *slog.Logger
}

// DefaultLoadTimeout bounds one load of the keyring.
const DefaultLoadTimeout = 2 * time.Second

// Loader keeps an envelope.KeySet equal to the active secrets of a Vault:
// Reload loads once; Start runs Reload every Interval in the background
// until Stop or the context ends.
//
// Each load reads the whole (tiny) active set, decrypts it and hands it to
// Keyring.Set, which keeps the trial order learned for keys that stay. There
// is no change-detection query: the table holds a handful of rows, so a
// load is one small indexed read and a few AES-GCM opens every two seconds
// per replica, and a version check (count, max of timestamps) could miss a
// change, since the timestamps come from the clocks of different replicas.
// A retired secret therefore stops opening callbacks at the next load.
type Loader struct {
	cfg Config
	log *slog.Logger

	loadMu   sync.Mutex   // serialises loads, so an older result never overwrites a newer one
	lastLoad atomic.Int64 // UnixNano of the last successful load; 0 before the first
	lastSet  string       // the IDs and fingerprints of the last key set logged
	loaded   bool
	failures int // consecutive failed loads of the background loop

	loop loop.Loop
}

// NewLoader validates cfg, applies its defaults and returns a Loader.
func NewLoader(cfg Config) (*Loader, error) {
	switch {
	case cfg.Vault == nil:
		return nil, errors.New("keyring: Loader needs a Vault")
	case cfg.Keyring == nil:
		return nil, errors.New("keyring: Loader needs a Keyring")
	case cfg.Interval < 0:
		return nil, fmt.Errorf("keyring: Loader interval %s is negative", cfg.Interval)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.LoadTimeout <= 0 {
		cfg.LoadTimeout = DefaultLoadTimeout
	}
	l := &Loader{cfg: cfg, log: cfg.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// Reload loads the active secrets once and replaces the keyring's keys with
// them. On error the keyring keeps its keys. Call it before Start, so that
// start-up fails when the keyring cannot be loaded.
func (l *Loader) Reload(ctx context.Context) error {
	l.loadMu.Lock()
	defer l.loadMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.LoadTimeout)
	defer cancel()
	keys, err := l.cfg.Vault.Active(ctx)
	if err != nil {
		return err
	}
	defer func() {
		for _, k := range keys {
			clear(k.Secret) // Set keeps its own copies
		}
	}()
	if err := l.cfg.Keyring.Set(keys); err != nil {
		return fmt.Errorf("keyring: %w", err)
	}
	l.lastLoad.Store(time.Now().UnixNano())
	l.logChange(keys)
	return nil
}

// Age is the time since the keyring was last loaded successfully (a very
// long time when it never was). A replica whose keyring is much older than
// Interval may still open callbacks with a secret retired meanwhile: the
// caller should refuse callbacks (retryably) and report not ready past a
// bound.
func (l *Loader) Age() time.Duration {
	last := l.lastLoad.Load()
	if last == 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Since(time.Unix(0, last))
}

// logChange logs the key set when it differs from the last one logged.
func (l *Loader) logChange(keys []envelope.Key) {
	fps := make([]string, len(keys))
	desc := make([]string, len(keys))
	for i, k := range keys {
		fps[i] = k.Fingerprint()
		desc[i] = k.ID + ":" + fps[i]
	}
	slices.Sort(desc)
	set := strings.Join(desc, ",")
	if l.loaded && set == l.lastSet {
		return
	}
	l.loaded, l.lastSet = true, set
	if len(keys) == 0 {
		l.log.Warn("keyring loaded: no active signing secret; every callback will be refused until one is added")
		return
	}
	l.log.Info("keyring loaded", "active", len(keys), "fingerprints", fps)
}

// Start runs the background loop: a Reload every Interval until Stop is
// called or ctx ends. A failed load is logged and the keyring keeps its last
// good keys; a cancelled context is not an error. It does not load at once:
// call Reload first. Start on a running Loader is an error.
func (l *Loader) Start(ctx context.Context) error {
	if err := l.loop.Start(ctx, l.cfg.Interval, false, l.runOnce); err != nil {
		return fmt.Errorf("keyring: Loader: %w", err)
	}
	return nil
}

// Stop ends the background loop and waits for it to return. It is a no-op
// when the loop is not running; the Loader may be started again.
func (l *Loader) Stop() { l.loop.Stop() }

// runOnce is one tick of the loop: a Reload whose failure is logged, not
// returned.
func (l *Loader) runOnce(ctx context.Context) {
	err := l.Reload(ctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	if err == nil {
		if l.failures > 0 {
			l.log.Info("keyring reload recovered", "failedLoads", l.failures)
		}
		l.failures = 0
		return
	}
	l.failures++
	if l.failures%failureLogEvery == 1 {
		l.log.Warn("keyring reload failed; keeping the last loaded keys",
			"err", err, "failedLoads", l.failures, "active", l.cfg.Keyring.Len())
	}
}
