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
)

// defaultInterval is how often a Loader reloads the keyring by default. A
// change made through any replica reaches every replica's keyring within
// one interval plus one load (contract §1: within 5 s).
const defaultInterval = 2 * time.Second

// After a failed load the loop retries sooner than Interval: retryFirst
// after the first failure, doubling up to retryMax, so that once a primary
// answers again (a failover, a restart) the keyring is fresh within about
// retryMax plus one load, and the outage callbacks see is the database's
// and not the keyring's.
const (
	retryFirst = 250 * time.Millisecond
	retryMax   = time.Second
)

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
	// 2 s. Must not be negative.
	Interval time.Duration
	// LoadTimeout bounds one load, so that a load stuck behind a lock
	// fails (and is logged) instead of silently keeping old keys; 0 means
	// 2 s.
	LoadTimeout time.Duration
	// Logger receives key-set changes and load failures (IDs and
	// fingerprints only). Nil discards.
	Logger *slog.Logger
}

// defaultLoadTimeout bounds one load of the keyring.
const defaultLoadTimeout = 2 * time.Second

// Loader keeps an envelope.KeySet equal to the active secrets of a Vault:
// Reload loads once; Start runs Reload every Interval in the background
// (sooner after a failure, and on Kick) until Stop or the
// context ends.
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
	failures atomic.Int64 // consecutive failed loads of the background loop

	kick chan struct{} // Kick's wake-up of the loop; capacity 1

	runMu  sync.Mutex
	cancel context.CancelFunc // of the running loop; nil when stopped
	done   chan struct{}      // closed when the running loop returns
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
		cfg.Interval = defaultInterval
	}
	if cfg.LoadTimeout <= 0 {
		cfg.LoadTimeout = defaultLoadTimeout
	}
	l := &Loader{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
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
// called or ctx ends; after a failed load, retries after 250 ms,
// doubling up to 1 s (never later than Interval), until one succeeds.
// A failed load is logged and the keyring keeps its last good keys; a
// cancelled context is not an error. It does not load at once: call Reload
// first. Start on a running Loader is an error.
func (l *Loader) Start(ctx context.Context) error {
	l.runMu.Lock()
	defer l.runMu.Unlock()
	if l.cancel != nil {
		return errors.New("keyring: Loader: already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	l.cancel, l.done = cancel, done
	go func() {
		defer close(done)
		l.run(ctx)
	}()
	return nil
}

// Stop ends the background loop and waits for it to return. It is a no-op
// when the loop is not running; the Loader may be started again.
func (l *Loader) Stop() {
	l.runMu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.runMu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Kick tells the running loop that the database may answer again (a new
// connection succeeded): while loads are failing, the loop loads at once
// instead of waiting for its next retry. It never blocks, and does nothing
// while loads succeed, so calling it on every new connection costs nothing.
// ledgerd calls it from its pools' connect hook.
func (l *Loader) Kick() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// run is the background loop: load, wait (Interval, or the retry delay
// after a failure, cut short by Kick while failing), load again.
func (l *Loader) run(ctx context.Context) {
	t := time.NewTimer(l.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
			if l.failures.Load() == 0 {
				continue // healthy: the timer's load is soon enough
			}
			t.Stop()
		case <-t.C:
		}
		l.runOnce(ctx)
		t.Reset(l.nextDelay())
	}
}

// nextDelay is the wait before the next load: Interval while loads
// succeed, else retryFirst doubled per consecutive failure up to retryMax,
// and never more than Interval.
func (l *Loader) nextDelay() time.Duration {
	n := l.failures.Load()
	if n == 0 {
		return l.cfg.Interval
	}
	d := retryFirst << min(n-1, 8)
	return min(d, retryMax, l.cfg.Interval)
}

// Failures is the number of consecutive failed loads of the background
// loop (0 once one succeeds).
func (l *Loader) Failures() int { return int(l.failures.Load()) }

// runOnce is one load of the loop: a Reload whose failure is logged, not
// returned.
func (l *Loader) runOnce(ctx context.Context) {
	err := l.Reload(ctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	if err == nil {
		if n := l.failures.Swap(0); n > 0 {
			l.log.Info("keyring reload recovered", "failedLoads", n)
		}
		return
	}
	n := l.failures.Add(1)
	if n%failureLogEvery == 1 {
		l.log.Warn("keyring reload failed; keeping the last loaded keys; retrying",
			"err", err, "failedLoads", n, "active", l.cfg.Keyring.Len(), "retryIn", l.nextDelay())
	}
}
