// Package servertest runs a real ledgerd in process for tests, as storetest
// gives them a real database: server's own tests and those of the packages
// around it (the load tester, the service simulator's driver).
package servertest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/server"
)

// startWithin bounds a ledgerd's start (its migrations on a busy machine).
const startWithin = 90 * time.Second

// Daemon is a ledgerd running in process.
type Daemon struct {
	// Callbacks and Admin are its listeners' addresses (host:port).
	Callbacks, Admin string
	stop             func() error
}

// Stop stops ledgerd and returns what server.Run returned; a second call
// returns the same without stopping anything.
func (d *Daemon) Stop() error { return d.stop() }

// Run runs ledgerd with cfg until the test ends or Stop. A ledgerd that
// does not start within 90 seconds fails the test.
func Run(t testing.TB, cfg server.Config) *Daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, nil, server.Hooks{Started: func(cb, adm string) { started <- [2]string{cb, adm} }})
	}()
	select {
	case a := <-started:
		d := &Daemon{Callbacks: a[0], Admin: a[1], stop: sync.OnceValue(func() error { cancel(); return <-done })}
		t.Cleanup(func() { _ = d.Stop() })
		return d
	case err := <-done:
		cancel()
		t.Fatalf("ledgerd did not start: %v", err)
	case <-time.After(startWithin):
		cancel()
		t.Fatalf("ledgerd did not start within %s", startWithin)
	}
	return nil
}

// Config is ledgerd's configuration from env, its whole environment
// (server.LoadConfig reads nothing else), with what env leaves unset of
// LEDGER_LISTEN and LEDGER_ADMIN_LISTEN (free loopback ports),
// LEDGER_DATA_DIR (a directory of the test's own) and, with DATABASE_URL,
// LEDGER_KEK (a random one, unless LEDGER_KEK_FILE is set) set for it.
func Config(t testing.TB, env map[string]string) server.Config {
	t.Helper()
	full := map[string]string{"LEDGER_LISTEN": "127.0.0.1:0", "LEDGER_ADMIN_LISTEN": "127.0.0.1:0", "LEDGER_DATA_DIR": t.TempDir()}
	for k, v := range env {
		full[k] = v
	}
	if full["DATABASE_URL"] != "" && full["LEDGER_KEK"] == "" && full["LEDGER_KEK_FILE"] == "" {
		kek := make([]byte, 32)
		if _, err := rand.Read(kek); err != nil {
			t.Fatal(err)
		}
		full["LEDGER_KEK"] = base64.StdEncoding.EncodeToString(kek)
	}
	cfg, err := server.LoadConfig(nil, func(k string) string { return full[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Start runs ledgerd with Config(t, env) until the test ends, and returns
// its listeners' addresses (host:port). A ledgerd that ends in error when
// the test stops it fails the test.
func Start(t testing.TB, env map[string]string) (callbacks, admin string) {
	t.Helper()
	d := Run(t, Config(t, env))
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("ledgerd: %v", err)
		}
	})
	return d.Callbacks, d.Admin
}
