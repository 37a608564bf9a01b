package admin_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestAuditTrailOfWrites: every write, applied or refused, and every
// refused attempt is one record, with its actor, scope, route, target,
// status, the digest of its body and its source; reads are not recorded;
// the chain the API serves verifies offline.
func TestAuditTrailOfWrites(t *testing.T) {
	t.Parallel()
	c := setupControls(t)
	opsID, ops := c.token(t, "ops", ledger.ScopeOperate, ledger.ScopeAdjust, ledger.ScopeRead)
	create := `{"accountID":"au-1","ownerExternalID":"o","currency":"USD"}`
	steps := []struct {
		token, method, path, body string
		status                    int
	}{
		{ops, "POST", "/v1/accounts", create, 201},
		{ops, "GET", "/v1/accounts/au-1", "", 200},
		{ops, "POST", "/v1/accounts/au-1/adjustments", `{"amount":"10","idempotencyKey":"k1"}`, 201},
		{ops, "POST", "/v1/accounts/au-1/adjustments", `{"amount":"-50","idempotencyKey":"k2"}`, 422},
		{ops, "PATCH", "/v1/accounts/au-1", `{"status":"frozen"}`, 200},
		{ops, "POST", "/v1/tokens", `{"name":"x","scopes":["read"]}`, 403},
		{"lat_nobody", "POST", "/v1/accounts", create, 401},
	}
	for _, s := range steps {
		if a := c.as(t, s.token, s.method, s.path, s.body); a.status != s.status {
			t.Fatalf("%s %s: %d %s, want %d", s.method, s.path, a.status, a.raw, s.status)
		}
	}
	recs := c.audit(t)
	// The first record is the token's creation by break-glass.
	if len(recs) != 7 || recs[0].ActorID != ledger.BreakGlassID || recs[0].Route != "/v1/tokens" || recs[0].Target != "tokenID="+opsID {
		t.Fatalf("%d records: %+v", len(recs), recs)
	}
	want := []struct {
		actor, scope, route, target string
		status                      int
		body                        string
	}{
		{opsID, "operate", "/v1/accounts", "accountID=au-1", 201, create},
		{opsID, "adjust", "/v1/accounts/{accountID}/adjustments", "accountID=au-1,transactionID=", 201, `{"amount":"10","idempotencyKey":"k1"}`},
		{opsID, "adjust", "/v1/accounts/{accountID}/adjustments", "accountID=au-1", 422, `{"amount":"-50","idempotencyKey":"k2"}`},
		{opsID, "operate", "/v1/accounts/{accountID}", "accountID=au-1", 200, `{"status":"frozen"}`},
		{opsID, "admin", "/v1/tokens", "", 403, `{"name":"x","scopes":["read"]}`},
		{ledger.UnauthenticatedID, "operate", "/v1/accounts", "", 401, create},
	}
	for i, w := range want {
		r := recs[i+1]
		sum := sha256.Sum256([]byte(w.body))
		if r.ActorID != w.actor || r.Scope != w.scope || r.Route != w.route || !strings.HasPrefix(r.Target, w.target) || r.Status != w.status ||
			r.BodyDigest == nil || *r.BodyDigest != hex.EncodeToString(sum[:]) || r.Source != "192.0.2.1" || r.Seq != int64(i+2) {
			t.Errorf("record %d: %+v, want %+v", i+2, r, w)
		}
	}
}

// TestAuditOfSecretsKeepsNoDigest: a signing secret posted is recorded
// without a digest of its body (redacted), and its value is nowhere in
// the record.
func TestAuditOfSecretsKeepsNoDigest(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	kek := make([]byte, keyring.KEKSize)
	secret := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	vault, err := keyring.NewVault(db, kek, keyring.VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &controls{bundle: bundle{db: db, api: admin.New(admin.Config{DB: db, Token: breakGlass, Secrets: vault})}}
	b64 := base64.StdEncoding.EncodeToString(secret)
	if a := c.as(t, breakGlass, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`); a.status != 201 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	recs := c.audit(t)
	if len(recs) != 1 || recs[0].BodyDigest == nil || *recs[0].BodyDigest != ledger.DigestRedacted || !strings.HasPrefix(recs[0].Target, "secretID=sec_") {
		t.Fatalf("%+v", recs)
	}
	sum := sha256.Sum256([]byte(`{"secret":"` + b64 + `"}`))
	for _, v := range []string{b64, hex.EncodeToString(sum[:])} {
		if strings.Contains(recs[0].Target+recs[0].Hash+recs[0].PrevHash, v) {
			t.Fatal("the record holds the secret or its body's digest")
		}
	}
}

// TestDualControlAPI: over the threshold an adjustment waits (202, no
// money); its maker cannot approve it (403); another actor with approve
// posts it (201, then 200); a replay of the key answers the adjustment;
// the listing and every step's record say so.
func TestDualControlAPI(t *testing.T) {
	t.Parallel()
	c := setupControls(t)
	storetest.Account(t, c.db, storetest.AccountOpts{AccountID: "dc-1", Funds: "50"})
	_, maker := c.token(t, "maker", ledger.ScopeAdjust, ledger.ScopeApprove)
	_, checker := c.token(t, "checker", ledger.ScopeApprove, ledger.ScopeRead)
	if a := c.as(t, maker, "POST", "/v1/accounts/dc-1/adjustments", `{"amount":"100","idempotencyKey":"small"}`); a.status != 201 {
		t.Fatalf("at the threshold: %d %s", a.status, a.raw)
	}
	body := `{"amount":"-120.00","idempotencyKey":"big","memo":"wire recall"}`
	held := c.as(t, maker, "POST", "/v1/accounts/dc-1/adjustments", body)
	id, _ := held.body["adjustmentID"].(string)
	if held.status != 202 || held.body["status"] != adminapi.AdjustmentPending || held.body["amount"] != "-120.00" {
		t.Fatalf("over the threshold: %d %s", held.status, held.raw)
	}
	storetest.AssertBalances(t, c.db, "dc-1", "150", "0", "150")
	if again := c.as(t, maker, "POST", "/v1/accounts/dc-1/adjustments", body); again.status != 202 || again.body["adjustmentID"] != id {
		t.Fatalf("replay: %d %s", again.status, again.raw)
	}
	c.as(t, maker, "POST", "/v1/adjustments/"+id+"/approval", `{}`).problem(t, 403, "maker-cannot-approve", "")
	c.as(t, checker, "POST", "/v1/accounts/dc-1/adjustments", body).problem(t, 403, "insufficient-scope", "")
	posted := c.as(t, checker, "POST", "/v1/adjustments/"+id+"/approval", `{"note":"call-back verified"}`)
	if posted.status != 201 || posted.body["status"] != adminapi.AdjustmentPosted || posted.body["transactionID"] == nil {
		t.Fatalf("approval: %d %s", posted.status, posted.raw)
	}
	storetest.AssertBalances(t, c.db, "dc-1", "30", "0", "30")
	if a := c.as(t, checker, "POST", "/v1/adjustments/"+id+"/approval", `{}`); a.status != 200 || a.body["transactionID"] != posted.body["transactionID"] {
		t.Fatalf("second approval: %d %s", a.status, a.raw)
	}
	c.as(t, checker, "POST", "/v1/adjustments/"+id+"/rejection", `{}`).problem(t, 409, "adjustment-posted", "")
	if a := c.as(t, checker, "GET", "/v1/adjustments?status=posted&accountID=dc-1", ""); a.status != 200 || !strings.Contains(a.raw, id) {
		t.Fatalf("list: %d %s", a.status, a.raw)
	}
	storetest.AssertBalances(t, c.db, "dc-1", "30", "0", "30")
	storetest.AssertInvariants(t, c.db)
	var steps []string
	for _, r := range c.audit(t) {
		if strings.HasPrefix(r.Route, "/v1/adjustments/") || strings.HasSuffix(r.Route, "/adjustments") {
			steps = append(steps, r.Method+" "+r.Route[strings.LastIndex(r.Route, "/")+1:]+" "+r.ActorName+" "+strconv.Itoa(r.Status))
		}
	}
	if want := "POST adjustments maker 201|POST adjustments maker 202|POST adjustments maker 202|POST approval maker 403|" +
		"POST adjustments checker 403|POST approval checker 201|POST approval checker 200|POST rejection checker 409"; strings.Join(steps, "|") != want {
		t.Fatalf("audited steps:\n%s\nwant\n%s", strings.Join(steps, "|"), want)
	}
}
