package callbacks_test

import (
	"context"
	"crypto/rand"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

const provider = "bank-1"

type bundle struct {
	pool    *pgxpool.Pool
	db      *store.DB
	key     envelope.Key
	keyring *envelope.KeySet
	server  *callbacks.Handler
	http    *httptest.Server
	client  *caller.Client
	reg     *prometheus.Registry
}

type opts struct {
	pool           *pgxpool.Pool
	requestTimeout time.Duration
	maxInflight    int
	creditMax      string
	key            *envelope.Key
}

func newKey(t testing.TB, id string) envelope.Key {
	t.Helper()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return envelope.Key{ID: id, Secret: secret}
}

// setup starts a callback server on a real listener over a fresh database
// (or o.pool's) and returns a client that seals with its key.
func setup(t testing.TB, o opts) *bundle {
	t.Helper()
	pool := o.pool
	if pool == nil {
		pool = storetest.Pool(t)
	}
	b := &bundle{pool: pool, db: store.Wrap(pool, nil), keyring: envelope.NewKeySet(), reg: prometheus.NewRegistry()}
	if o.key != nil {
		b.key = *o.key
	} else {
		b.key = newKey(t, "k1")
	}
	if err := b.keyring.Set([]envelope.Key{b.key}); err != nil {
		t.Fatal(err)
	}
	cfg := callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider, RequestTimeout: o.requestTimeout,
		MaxInflight: o.maxInflight, Registerer: b.reg}
	if o.creditMax != "" {
		d := decimal.RequireFromString(o.creditMax)
		cfg.CreditMax = &d
	}
	var err error
	b.server, err = callbacks.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.http = httptest.NewServer(b.server)
	t.Cleanup(b.http.Close)
	b.client = &caller.Client{BaseURL: b.http.URL + "/ledger", Key: b.key}
	return b
}

func (b *bundle) send(t testing.TB, endpoint string, service map[string]any) *caller.Reply {
	t.Helper()
	r, err := b.client.Send(context.Background(), endpoint, service)
	if err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	return r
}

func usd(v string) map[string]any {
	return map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": v}
}

func authorizeClaims(payout, key, owner, source, amount string, fraud float64) map[string]any {
	return map[string]any{"payoutID": payout, "providerID": provider, "externalID": owner, "fundingSource": source,
		"amount": usd(amount), "fraudScore": fraud, "idempotencyKey": key, "callerSubject": "sdk-user", "requestID": "trace-1"}
}

func captureClaims(payout, key, hold string) map[string]any {
	return map[string]any{"payoutID": payout, "providerID": provider, "holdReference": hold, "idempotencyKey": key}
}

func releaseClaims(payout, key, hold string) map[string]any {
	m := map[string]any{"providerID": provider, "holdReference": hold, "idempotencyKey": key, "reason": "cancelled"}
	if payout != "" {
		m["payoutID"] = payout
	}
	return m
}

func creditClaims(request, key, requester, dest, amount string) map[string]any {
	return map[string]any{"providerID": provider, "idempotencyKey": key, "requesterExternalID": requester,
		"fundingDestination": dest, "amount": usd(amount), "requestID": request}
}

func (b *bundle) account(t testing.TB, o storetest.AccountOpts) ledger.Account {
	t.Helper()
	return storetest.Account(t, b.db, o)
}
