package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// readyz returns /readyz's status and the names of its reasons.
func readyz(t *testing.T, d *daemon) (int, []string) {
	t.Helper()
	var body struct {
		Reasons []struct{ Reason, Detail string }
	}
	code := get(t, "http://"+d.admin+"/readyz", &body)
	var names []string
	for _, r := range body.Reasons {
		if r.Detail == "" {
			t.Errorf("reason %s without a detail", r.Reason)
		}
		names = append(names, r.Reason)
	}
	return code, names
}

// wantReady fails unless /readyz answers 200, or 503 with exactly the
// reasons given.
func wantReady(t *testing.T, d *daemon, reasons ...string) {
	t.Helper()
	code, got := readyz(t, d)
	want := http.StatusOK
	if len(reasons) > 0 {
		want = http.StatusServiceUnavailable
	}
	if code != want || !slices.Equal(got, reasons) {
		t.Fatalf("readyz = %d %v, want %d %v", code, got, want, reasons)
	}
}

// readinessDaemon starts ledgerd on a fresh database and returns it with
// the database's URL, a superuser connection to another database of the
// server (one may not refuse connections to the database one is connected
// to) and the database's name.
func readinessDaemon(t *testing.T) (*daemon, string, *pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	url := storetest.URL(t)
	secret := base64.StdEncoding.EncodeToString(randomKey(t))
	d := start(t, config(t, "DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-r",
		"LEDGER_SIGNING_SECRETS", secret, "LEDGER_RECONCILE_EVERY", "0"))
	cfg, err := pgx.ParseConfig(storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	return d, url, admin, dbName(t, url)
}

// mustExec runs sql on c.
func mustExec(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// TestReadiness: /readyz says the truth, naming each reason: not ready on
// a database that refuses new connections, turns read-only or does not
// finish a read in time, nor without an active signing secret
// (TestReadinessWhenOnlyThePoolIsBusy: ready when only the pool is busy).
func TestReadiness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("StatementsTimingOut", func(t *testing.T) {
		t.Parallel()
		d, url, _, _ := readinessDaemon(t)
		locker, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer locker.Close(ctx)
		tx, err := locker.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, locker, `LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE`)
		wantReady(t, d, "statements-timing-out")
		_ = tx.Rollback(ctx)
		wantReady(t, d)
	})

	t.Run("ReadOnly", func(t *testing.T) {
		t.Parallel()
		// The pool's sessions stay read-write: only new ones are read-only,
		// which is what the pool gets when it reconnects.
		d, _, admin, name := readinessDaemon(t)
		mustExec(t, admin, fmt.Sprintf(`ALTER DATABASE %q SET default_transaction_read_only = on`, name))
		wantReady(t, d, "database-read-only")
		mustExec(t, admin, fmt.Sprintf(`ALTER DATABASE %q RESET default_transaction_read_only`, name))
		wantReady(t, d)
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		// New connections are refused; the pool's stay open.
		d, _, admin, name := readinessDaemon(t)
		mustExec(t, admin, fmt.Sprintf(`ALTER DATABASE %q WITH ALLOW_CONNECTIONS false`, name))
		wantReady(t, d, "database-unreachable")
		mustExec(t, admin, fmt.Sprintf(`ALTER DATABASE %q WITH ALLOW_CONNECTIONS true`, name))
		wantReady(t, d)
	})

	t.Run("NoActiveSigningSecret", func(t *testing.T) {
		t.Parallel()
		url := storetest.URL(t)
		d := start(t, config(t, "DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-r", "LEDGER_RECONCILE_EVERY", "0"))
		wantReady(t, d, "no-active-signing-secret")
	})
}

// TestReadinessWhenOnlyThePoolIsBusy: with every pooled connection waiting
// on a lock, ledgerd is still ready, and the callbacks that waited are
// answered once the lock is released.
func TestReadinessWhenOnlyThePoolIsBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := randomKey(t)
	url := storetest.URL(t)
	// (LEDGER_MIGRATION_DATABASE_URL: the migrations do not take
	// pool_max_conns. Two lanes of group commit: one callback on each
	// pooled connection.)
	d := start(t, config(t, "DATABASE_URL", url+"&pool_max_conns=2", "LEDGER_MIGRATION_DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-r",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret), "LEDGER_REQUEST_TIMEOUT", "60s",
		"LEDGER_RECONCILE_EVERY", "0", "LEDGER_GROUP_COMMIT", "2"))
	for _, b := range []struct{ path, json string }{
		{"/v1/accounts", `{"accountID":"busy-1","ownerExternalID":"alice","currency":"USD"}`},
		{"/v1/accounts/busy-1/adjustments", `{"amount":"10","idempotencyKey":"f1"}`},
		{"/v1/instruments", `{"token":"src-busy","kind":"source","accountID":"busy-1"}`},
	} {
		if code := post(t, "http://"+d.admin+b.path, b.json); code != 201 {
			t.Fatalf("%s: %d", b.path, code)
		}
	}
	// Both pooled connections wait behind a lock on the account.
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, locker, `SELECT 1 FROM accounts WHERE account_id = 'busy-1' FOR UPDATE`)
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	answers := make(chan int, 2)
	for i := range 2 {
		go func() {
			r, err := c.Send(ctx, claims.Authorize, map[string]any{"payoutID": fmt.Sprintf("busy-p%d", i), "providerID": "bank-r",
				"externalID": "alice", "fundingSource": "src-busy", "fraudScore": 0.1, "idempotencyKey": fmt.Sprintf("busy-k%d", i),
				"amount": map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": "1.00"}})
			if err != nil {
				t.Error(err)
				answers <- 0
				return
			}
			answers <- r.Status
		}()
	}
	admin, err := pgx.Connect(ctx, storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := dbName(t, url)
	wait.Until(t, "both pooled connections to wait on a lock", func() bool {
		var waiting int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == 2
	})
	wantReady(t, d)
	_ = tx.Rollback(ctx)
	for range 2 {
		if code := <-answers; code != 200 {
			t.Fatalf("a callback that waited: %d", code)
		}
	}
}
