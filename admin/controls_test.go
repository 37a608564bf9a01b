package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// breakGlass is the LEDGER_ADMIN_TOKEN of the controls' tests.
const breakGlass = "break-glass-token-of-the-tests"

// controls is an admin API with a break-glass token, a settable clock and
// dual control over 100.
type controls struct {
	bundle
	pool *pgxpool.Pool
	now  atomic.Pointer[time.Time]
}

func setupControls(t *testing.T) *controls {
	t.Helper()
	db, pool := storetest.DB(t)
	c := &controls{bundle: bundle{db: db}, pool: pool}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c.now.Store(&t0)
	over := decimal.RequireFromString("100")
	c.api = admin.New(admin.Config{DB: db, Token: breakGlass, ApprovalOver: &over, Now: func() time.Time { return *c.now.Load() }})
	return c
}

func (c *controls) advance(d time.Duration) {
	t := c.now.Load().Add(d)
	c.now.Store(&t)
}

// as sends a request with a bearer token.
func (c *controls) as(t *testing.T, token, method, path, body string) answer {
	t.Helper()
	return c.do(t, method, path, body, "Authorization", "Bearer "+token)
}

// token creates a named token with scopes and returns it.
func (c *controls) token(t *testing.T, name string, scopes ...string) (id, token string) {
	t.Helper()
	b, _ := json.Marshal(adminapi.TokenCreateRequest{Name: name, Scopes: scopes})
	a := c.as(t, breakGlass, "POST", "/v1/tokens", string(b))
	if a.status != 201 || !strings.HasPrefix(a.body["token"].(string), ledger.TokenPrefix) {
		t.Fatalf("create token %s: %d %s", name, a.status, a.raw)
	}
	return a.body["tokenID"].(string), a.body["token"].(string)
}

// audit reads the whole audit trail through the API and verifies its
// chain offline.
func (c *controls) audit(t *testing.T) []adminapi.AuditRecord {
	t.Helper()
	a := c.as(t, breakGlass, "GET", "/v1/audit?limit=100", "")
	var page adminapi.AuditList
	if err := json.Unmarshal([]byte(a.raw), &page); a.status != 200 || err != nil || page.HasMore {
		t.Fatalf("audit: %d %v %s", a.status, err, a.raw)
	}
	if err := adminapi.VerifyAuditChain(page.Records); err != nil {
		t.Fatalf("the chain the API serves does not verify: %v", err)
	}
	return page.Records
}

func TestTokensAndScopes(t *testing.T) {
	t.Parallel()
	c := setupControls(t)
	id, reader := c.token(t, "reader", ledger.ScopeRead)
	if a := c.as(t, reader, "GET", "/v1/accounts", ""); a.status != 200 {
		t.Fatalf("read with read: %d", a.status)
	}
	if a := c.do(t, "GET", "/v1/accounts", "", "Authorization", "bEaReR  "+reader); a.status != 200 {
		t.Fatalf("the scheme in another case: %d %s", a.status, a.raw)
	}
	a := c.as(t, reader, "POST", "/v1/accounts", `{"accountID":"t-1","ownerExternalID":"o","currency":"USD"}`)
	a.problem(t, 403, "insufficient-scope", "")
	if a.body["scope"] != "operate" || !strings.Contains(a.header.Get("WWW-Authenticate"), `scope="operate"`) {
		t.Fatalf("403 does not name the scope: %v %q", a.body, a.header.Get("WWW-Authenticate"))
	}
	if _, err := c.db.GetAccount(context.Background(), "t-1"); err == nil {
		t.Fatal("a refused write created the account")
	}
	list := c.as(t, breakGlass, "GET", "/v1/tokens", "")
	if list.status != 200 || strings.Contains(list.raw, reader) || !strings.Contains(list.raw, id) {
		t.Fatalf("list: %d %s", list.status, list.raw)
	}
	var stored []byte
	if err := c.pool.QueryRow(context.Background(), `SELECT token_hash FROM admin_tokens WHERE token_id = $1`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(reader)); hex.EncodeToString(stored) != hex.EncodeToString(sum[:]) {
		t.Fatal("the stored hash is not the token's SHA-256")
	}
	if a := c.as(t, breakGlass, "DELETE", "/v1/tokens/"+id, ""); a.status != 204 {
		t.Fatalf("revoke: %d", a.status)
	}
	c.as(t, reader, "GET", "/v1/accounts", "").problem(t, 401, "unauthorized", "")
	c.as(t, breakGlass, "DELETE", "/v1/tokens/tok_aaaaaaaaaaaaaaaaaaaaaaaaaa", "").problem(t, 404, "token-not-found", "")
	c.as(t, breakGlass, "POST", "/v1/tokens", `{"name":"x","scopes":["root"]}`).problem(t, 400, "invalid-request", "/scopes/0")
	c.as(t, breakGlass, "POST", "/v1/tokens", `{"name":"LEDGER_ADMIN_TOKEN","scopes":["read"]}`).problem(t, 400, "invalid-request", "/name")
	c.token(t, "twice", ledger.ScopeRead)
	c.as(t, breakGlass, "POST", "/v1/tokens", `{"name":"twice","scopes":["read"]}`).problem(t, 409, "token-name-taken", "")
	for _, r := range c.audit(t) {
		if strings.Contains(r.Target, reader) || strings.Contains(r.ActorName, reader) {
			t.Fatalf("a token in the audit trail: %+v", r)
		}
	}
}

func TestTokenExpiry(t *testing.T) {
	t.Parallel()
	c := setupControls(t)
	exp := c.now.Load().Add(time.Hour).Format(time.RFC3339)
	a := c.as(t, breakGlass, "POST", "/v1/tokens", `{"name":"temp","scopes":["read"],"expiresOn":"`+exp+`"}`)
	tok, _ := a.body["token"].(string)
	if a.status != 201 || a.body["expiresOn"] == nil {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if a := c.as(t, tok, "GET", "/v1/holds", ""); a.status != 200 {
		t.Fatalf("before expiry: %d", a.status)
	}
	c.advance(time.Hour)
	c.as(t, tok, "GET", "/v1/holds", "").problem(t, 401, "unauthorized", "")
	past := c.now.Load().Add(-time.Minute).Format(time.RFC3339)
	c.as(t, breakGlass, "POST", "/v1/tokens", `{"name":"late","scopes":["read"],"expiresOn":"`+past+`"}`).problem(t, 400, "invalid-request", "/expiresOn")
}
