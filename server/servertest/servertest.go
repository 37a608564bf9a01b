// Package servertest runs a real ledgerd in process for the tests of the
// packages around it (the load tester, the service simulator's driver),
// as storetest gives them a real database.
package servertest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/server"
)

// Start runs ledgerd in process until the test ends, with env as its whole
// environment (server.LoadConfig reads nothing else), and returns its
// callback and admin listeners' addresses (host:port). What env leaves
// unset of LEDGER_KEK (a random one), LEDGER_LISTEN and
// LEDGER_ADMIN_LISTEN (free loopback ports) and LEDGER_DATA_DIR (a
// directory of the test's own) is set for it. A ledgerd that does not
// start within a minute, or that ends in error when the test stops it,
// fails the test.
func Start(t testing.TB, env map[string]string) (callbacks, admin string) {
	t.Helper()
	full := map[string]string{"LEDGER_LISTEN": "127.0.0.1:0", "LEDGER_ADMIN_LISTEN": "127.0.0.1:0", "LEDGER_DATA_DIR": t.TempDir()}
	if env["LEDGER_KEK"] == "" {
		kek := make([]byte, 32) // required with DATABASE_URL
		if _, err := rand.Read(kek); err != nil {
			t.Fatal(err)
		}
		full["LEDGER_KEK"] = base64.StdEncoding.EncodeToString(kek)
	}
	for k, v := range env {
		full[k] = v
	}
	cfg, err := server.LoadConfig(nil, func(k string) string { return full[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, nil, server.Hooks{Started: func(cb, adm string) { started <- [2]string{cb, adm} }})
	}()
	select {
	case a := <-started:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ledgerd: %v", err)
			}
		})
		return a[0], a[1]
	case err := <-done:
		cancel()
		t.Fatalf("ledgerd did not start: %v", err)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("ledgerd did not start within a minute")
	}
	return "", ""
}
