package callbacks_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
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
	logger         *slog.Logger
	groupCommit    int // store.DB.SetGroupCommit's lanes; 0: off
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
	b.db.SetGroupCommit(o.groupCommit)
	if o.key != nil {
		b.key = *o.key
	} else {
		b.key = newKey(t, "k1")
	}
	if err := b.keyring.Set([]envelope.Key{b.key}); err != nil {
		t.Fatal(err)
	}
	cfg := callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider, RequestTimeout: o.requestTimeout,
		MaxInflight: o.maxInflight, Registerer: b.reg, Logger: o.logger}
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

// send sends service (claims.AuthorizeService, …, or a map for claims
// the typed builders cannot express) and requires an answer.
func (b *bundle) send(t testing.TB, endpoint string, service any) *caller.Reply {
	t.Helper()
	r, err := b.client.Send(context.Background(), endpoint, service)
	if err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	return r
}

// usd is a Money claim written by hand, for the values ledger.Money
// refuses to marshal (too many decimals, negative).
func usd(v string) map[string]any {
	return map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": v}
}

// asMap is the service claims of s as a map, for a test to break one claim.
func asMap(t testing.TB, s any) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// keyOf is the idempotencyKey claim of service claims, for messages.
func keyOf(service any) string {
	b, _ := json.Marshal(service)
	var c struct {
		IdempotencyKey string `json:"idempotencyKey"`
	}
	_ = json.Unmarshal(b, &c)
	return c.IdempotencyKey
}

// authorizeRequest is an authorize request of this provider, with the audit
// claims callerSubject sdk-user and requestID trace-1.
func authorizeRequest(payout, key, owner, source, amount string, fraud float64) holds.AuthorizeRequest {
	return holds.AuthorizeRequest{PayoutID: payout, ProviderID: provider, ExternalID: owner, FundingSource: source,
		Amount: storetest.USD(amount), FraudScore: fraud, IdempotencyKey: key, CallerSubject: "sdk-user", RequestID: "trace-1"}
}

func authorizeClaims(payout, key, owner, source, amount string, fraud float64) claims.AuthorizeService {
	return claims.AuthorizeService(authorizeRequest(payout, key, owner, source, amount, fraud))
}

func captureClaims(payout, key, hold string) claims.CaptureService {
	return claims.CaptureService(holds.CaptureRequest{PayoutID: payout, ProviderID: provider, HoldReference: hold, IdempotencyKey: key})
}

// releaseClaims is a release with reason cancelled; payout "" leaves
// payoutID out.
func releaseClaims(payout, key, hold string) claims.ReleaseService {
	return claims.ReleaseService(holds.ReleaseRequest{HoldReference: hold, IdempotencyKey: key, PayoutID: payout,
		ProviderID: provider, Reason: "cancelled"})
}

func creditClaims(request, key, requester, dest, amount string) claims.CreditService {
	return claims.CreditService(ledger.CreditRequest{ProviderID: provider, IdempotencyKey: key, RequesterExternalID: requester,
		FundingDestination: dest, Amount: storetest.USD(amount), RequestID: request})
}

func (b *bundle) account(t testing.TB, o storetest.AccountOpts) ledger.Account {
	t.Helper()
	return storetest.Account(t, b.db, o)
}
