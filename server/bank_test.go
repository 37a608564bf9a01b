package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
)

// bank plays a bank's operator (the admin API) and the service (callbacks)
// against one running ledgerd.
type bank struct {
	t        *testing.T
	admin    string // http://host:port
	token    string
	provider string
	cb       *caller.Client
}

// testSecret is a random signing secret (or KEK) for tests, and its Base64
// for LEDGER_SIGNING_SECRETS (built keys are refused as weak).
func testSecret() ([]byte, string) {
	s := make([]byte, 32)
	_, _ = rand.Read(s)
	return s, base64.StdEncoding.EncodeToString(s)
}

func newBank(t *testing.T, d *daemon, provider string, secret []byte, token string) *bank {
	return &bank{t: t, admin: "http://" + d.admin, token: token, provider: provider,
		cb: &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}}
}

// do calls the admin API and returns the status and the decoded body.
func (b *bank) do(method, path string, body any) (int, map[string]any) {
	b.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, b.admin+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// must calls the admin API and fails the test unless it answers want.
func (b *bank) must(want int, method, path string, body any) map[string]any {
	b.t.Helper()
	code, out := b.do(method, path, body)
	if code != want {
		b.t.Fatalf("%s %s = %d %v, want %d", method, path, code, out, want)
	}
	return out
}

// customer creates an open USD account of owner with balance, a source
// instrument src-<account> and a destination instrument dst-<account>.
func (b *bank) customer(account, owner, balance string) {
	b.t.Helper()
	b.must(201, "POST", "/v1/accounts", map[string]any{"accountID": account, "ownerExternalID": owner, "currency": "USD"})
	b.must(201, "POST", "/v1/accounts/"+account+"/adjustments", map[string]any{"amount": balance, "idempotencyKey": "open-" + account})
	b.must(201, "POST", "/v1/instruments", map[string]any{"token": "src-" + account, "kind": "source", "accountID": account})
	b.must(201, "POST", "/v1/instruments", map[string]any{"token": "dst-" + account, "kind": "destination", "accountID": account})
}

func usd(value string) map[string]any {
	return map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": value}
}

func (b *bank) authorize(ctx context.Context, payoutID, key, account, owner, value string) (*caller.Reply, error) {
	return b.cb.Send(ctx, claims.Authorize, map[string]any{"payoutID": payoutID, "providerID": b.provider,
		"externalID": owner, "fundingSource": "src-" + account, "fraudScore": 0.1, "idempotencyKey": key, "amount": usd(value)})
}

func (b *bank) capture(ctx context.Context, payoutID, key, holdReference string) (*caller.Reply, error) {
	return b.cb.Send(ctx, claims.Capture, map[string]any{"payoutID": payoutID, "providerID": b.provider,
		"holdReference": holdReference, "idempotencyKey": key})
}

func (b *bank) credit(ctx context.Context, requestID, key, account, owner, value string) (*caller.Reply, error) {
	return b.cb.Send(ctx, claims.CreditAccount, map[string]any{"requestID": requestID, "providerID": b.provider,
		"requesterExternalID": owner, "fundingDestination": "dst-" + account, "idempotencyKey": key, "amount": usd(value)})
}

// lifecycle runs authorize, capture and a credit with keys derived from id
// and fails the test unless each is approved.
func (b *bank) lifecycle(id, account, owner string) {
	b.t.Helper()
	ctx := context.Background()
	r, err := b.authorize(ctx, "p-"+id, "ka-"+id, account, owner, "1.00")
	if err != nil || r.Status != 200 || r.Outcome() != "approved" {
		b.t.Fatalf("authorize %s: %+v %v", id, r, err)
	}
	if r, err = b.capture(ctx, "p-"+id, "kc-"+id, r.Str("holdReference")); err != nil || r.Status != 200 || r.Outcome() != "approved" {
		b.t.Fatalf("capture %s: %+v %v", id, r, err)
	}
	if r, err = b.credit(ctx, "rq-"+id, "kr-"+id, account, owner, "0.50"); err != nil || r.Status != 200 || r.Outcome() != "approved" {
		b.t.Fatalf("credit %s: %+v %v", id, r, err)
	}
}
