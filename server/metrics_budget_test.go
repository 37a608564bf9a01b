package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store/storetest"
)

// busyLedgerd starts a ledgerd with a pool of two connections on a fresh
// database, with one USD hold of 5.00 held, and returns it with the
// database's URL and the signing secret. Group commit runs two lanes, so
// that two callbacks waiting on a lock hold both pooled connections.
func busyLedgerd(t *testing.T) (*daemon, string, []byte) {
	t.Helper()
	secret := randomKey(t)
	url := storetest.URL(t)
	d := start(t, config(t, "DATABASE_URL", url+"&pool_max_conns=2", "LEDGER_MIGRATION_DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-mb",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret), "LEDGER_REQUEST_TIMEOUT", "60s", "LEDGER_RECONCILE_EVERY", "0",
		"LEDGER_GROUP_COMMIT", "2"))
	for _, b := range []struct{ path, json string }{
		{"/v1/accounts", `{"accountID":"mb-1","ownerExternalID":"alice","currency":"USD"}`},
		{"/v1/accounts/mb-1/adjustments", `{"amount":"100","idempotencyKey":"f1"}`},
		{"/v1/instruments", `{"token":"src-mb","kind":"source","accountID":"mb-1"}`},
	} {
		if code := post(t, "http://"+d.admin+b.path, b.json); code != 201 {
			t.Fatalf("%s: %d", b.path, code)
		}
	}
	if status := authorize(t, d, secret, "mb-p0"); status != 200 {
		t.Fatalf("the first hold: %d", status)
	}
	return d, url, secret
}

// authorize sends an authorize of 5.00 USD for payoutID and returns the
// answer's status.
func authorize(t *testing.T, d *daemon, secret []byte, payoutID string) int {
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	r, err := c.Send(context.Background(), claims.Authorize, map[string]any{"payoutID": payoutID, "providerID": "bank-mb",
		"externalID": "alice", "fundingSource": "src-mb", "fraudScore": 0.1, "idempotencyKey": "k-" + payoutID,
		"amount": map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": "5.00"}})
	if err != nil {
		t.Error(err)
		return 0
	}
	return r.Status
}

// lockWith runs sql in a transaction of its own, held until the test ends
// or the returned function is called.
func lockWith(t *testing.T, url, sql string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(ctx) }
}

// TestMetricsWhileThePoolIsExhausted: with every pooled connection waiting
// behind a lock, /metrics answers with the holds and reconciliation series
// read during the scrape (they have a connection of their own), and shows
// the pool full. Before, their reads queued for the pool until their 2 s
// deadline and the series vanished.
func TestMetricsWhileThePoolIsExhausted(t *testing.T) {
	t.Parallel()
	d, url, secret := busyLedgerd(t)
	release := lockWith(t, url, `SELECT 1 FROM accounts WHERE account_id = 'mb-1' FOR UPDATE`)
	answers := make(chan int, 2)
	for i := range 2 {
		go func() { answers <- authorize(t, d, secret, fmt.Sprintf("mb-p%d", i+1)) }()
	}
	full := scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		return hasSeries(m["ledgerd_db_pool_acquired_connections"], map[string]string{"__value__": "2"})
	})
	// The scrape that saw the pool full read the holds and the last run
	// during it.
	for _, c := range []string{"holds", "reconciliation"} {
		if !hasSeries(full["ledgerd_collector_up"], map[string]string{"collector": c, "__value__": "1"}) {
			t.Errorf("with the pool full, collector %s is not up: %v", c, full["ledgerd_collector_up"])
		}
	}
	if !hasSeries(full["ledgerd_holds_outstanding"], map[string]string{"currency": "USD", "__value__": "1"}) {
		t.Errorf("with the pool full, the holds outstanding are %v, want USD 1", full["ledgerd_holds_outstanding"])
	}
	if !hasSeries(full["ledgerd_db_pool_max_connections"], map[string]string{"__value__": "2"}) {
		t.Errorf("pool size %v, want 2", full["ledgerd_db_pool_max_connections"])
	}
	release()
	for range 2 {
		if code := <-answers; code != 200 {
			t.Fatalf("a callback that waited for the pool: %d", code)
		}
	}
}

// TestMetricsKeepTheirLastValues: while the holds cannot be read (their
// table locked), a scrape answers with the values last read, marked stale
// (ledgerd_collector_up 0, the time of that read unchanged), rather than
// dropping the series; once they can, the scrape reads them again.
func TestMetricsKeepTheirLastValues(t *testing.T) {
	t.Parallel()
	d, url, _ := busyLedgerd(t)
	before := scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		return hasSeries(m["ledgerd_holds_outstanding"], map[string]string{"currency": "USD", "__value__": "1"})
	})
	readAt := func(m map[string][]map[string]string) float64 {
		for _, s := range m["ledgerd_collector_last_read_timestamp_seconds"] {
			if s["collector"] == "holds" {
				v, err := strconv.ParseFloat(s["__value__"], 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		return 0
	}
	release := lockWith(t, url, `LOCK TABLE open_holds IN ACCESS EXCLUSIVE MODE`)
	stale := scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		return hasSeries(m["ledgerd_collector_up"], map[string]string{"collector": "holds", "__value__": "0"})
	})
	if !hasSeries(stale["ledgerd_holds_outstanding"], map[string]string{"currency": "USD", "__value__": "1"}) {
		t.Errorf("while the holds cannot be read, ledgerd_holds_outstanding is %v, want the last value (USD 1)", stale["ledgerd_holds_outstanding"])
	}
	if got := readAt(stale); got == 0 || got < readAt(before) {
		t.Errorf("while the holds cannot be read, their read time is %v (it was %v)", got, readAt(before))
	}
	if !hasSeries(stale["ledgerd_collector_up"], map[string]string{"collector": "reconciliation", "__value__": "1"}) {
		t.Errorf("the reconciliation collector is not up while only the holds are locked: %v", stale["ledgerd_collector_up"])
	}
	release()
	scrapeUntil(t, d.admin, func(m map[string][]map[string]string) bool {
		return hasSeries(m["ledgerd_collector_up"], map[string]string{"collector": "holds", "__value__": "1"}) && readAt(m) > readAt(stale)
	})
}
