package server_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestShutdownDrainsInFlightCallbacks: a callback in flight when shutdown
// begins completes with its answer; Run returns after it.
func TestShutdownDrainsInFlightCallbacks(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	secret := randomKey(t)
	d := start(t, config(t, "DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-d",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret)))
	admin := "http://" + d.admin
	for _, body := range []struct{ path, json string }{
		{"/v1/accounts", `{"accountID":"dr-1","ownerExternalID":"alice","currency":"USD"}`},
		{"/v1/accounts/dr-1/adjustments", `{"amount":"10","idempotencyKey":"f1"}`},
		{"/v1/instruments", `{"token":"src-dr","kind":"source","accountID":"dr-1"}`},
	} {
		if code := post(t, admin+body.path, body.json); code != 201 {
			t.Fatalf("%s: %d", body.path, code)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE account_id = 'dr-1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	answered := make(chan *caller.Reply, 1)
	go func() {
		r, err := c.Send(ctx, claims.Authorize, map[string]any{"payoutID": "dr-p", "providerID": "bank-d", "externalID": "alice",
			"fundingSource": "src-dr", "fraudScore": 0.1, "idempotencyKey": "dr-k",
			"amount": map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": "4.00"}})
		if err != nil {
			t.Error(err)
		}
		answered <- r
	}()
	waitMetric(t, admin, "ledgerd_callback_inflight 1")
	stopped := make(chan error, 1)
	go func() { stopped <- d.stop() }()
	// The shutdown has begun once a new callback is refused (503 while
	// draining, or the listener closed); the one in flight still holds
	// Run.
	wait.Until(t, "the shutdown to begin (a new callback refused)", func() bool {
		r, err := c.PostBody(ctx, claims.Authorize, []byte(`{}`))
		return err != nil || r.Status == http.StatusServiceUnavailable
	})
	select {
	case err := <-stopped:
		t.Fatalf("Run returned while a callback was in flight: %v", err)
	default:
	}
	_ = tx.Rollback(ctx)
	select {
	case r := <-answered:
		if r == nil || r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("in-flight callback: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight callback got no answer")
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func waitMetric(t *testing.T, admin, line string) {
	t.Helper()
	wait.Until(t, "/metrics to show "+line, func() bool {
		resp, err := http.Get(admin + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), line)
	})
}
