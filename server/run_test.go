package server_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/server/servertest"
	"github.com/provider-ledger/adapter/store/storetest"
)

// daemon is a ledgerd run in process until the test ends.
type daemon struct {
	callbacks, admin string
	stop             func() error
}

func start(t *testing.T, cfg server.Config) *daemon {
	t.Helper()
	d := servertest.Run(t, cfg)
	return &daemon{callbacks: d.Callbacks, admin: d.Admin, stop: d.Stop}
}

// config is ledgerd's configuration from the pairs kv (name, value), with
// the test's own KEK, one for every ledgerd of the test.
func config(t *testing.T, kv ...string) server.Config {
	t.Helper()
	env := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	if env["DATABASE_URL"] != "" && env["LEDGER_KEK"] == "" && env["LEDGER_KEK_FILE"] == "" {
		env["LEDGER_KEK"] = testKEK(t) // required with DATABASE_URL
	}
	return servertest.Config(t, env)
}

// testKEKs holds each test's KEK, so that every ledgerd a test starts on
// its database reads the secrets the others stored.
var testKEKs sync.Map // *testing.T → Base64

// testKEK returns the test's KEK (Base64), made at its first use.
func testKEK(t *testing.T) string {
	t.Helper()
	k, _ := testKEKs.LoadOrStore(t, base64.StdEncoding.EncodeToString(randomKey(t)))
	return k.(string)
}

// randomKey returns 32 random bytes: a signing secret or KEK that ledgerd
// takes (a built one, such as all zero, it refuses as weak).
func randomKey(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func post(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRunWithDatabaseURL(t *testing.T) {
	t.Parallel()
	secret := randomKey(t)
	b64 := base64.StdEncoding.EncodeToString(secret)
	d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-9",
		"LEDGER_SIGNING_SECRETS", b64, "LEDGER_ADMIN_TOKEN", "tok"))
	if code := get(t, "http://"+d.admin+"/readyz", nil); code != 200 {
		t.Fatalf("readyz = %d", code)
	}
	if code := post(t, "http://"+d.admin+"/v1/accounts", `{}`); code != 401 {
		t.Fatalf("admin without token = %d", code)
	}
	// A callback through the real listeners.
	req, _ := http.NewRequest("POST", "http://"+d.admin+"/v1/accounts", strings.NewReader(`{"accountID":"r-1","ownerExternalID":"alice","currency":"USD"}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create account: %v %v", resp, err)
	}
	resp.Body.Close()
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	r, err := c.Send(context.Background(), claims.CreditAccount, map[string]any{"providerID": "bank-9",
		"idempotencyKey": "k1", "requesterExternalID": "alice", "fundingDestination": "none", "requestID": "rq-1",
		"amount": map[string]any{"currency": map[string]any{"code": "USD", "decimalPlaces": 2}, "value": "1.00"}})
	if err != nil || r.Status != 200 || r.Outcome() != "destination_unavailable" {
		t.Fatalf("callback: %+v %v", r, err)
	}
	req, _ = http.NewRequest("POST", "http://"+d.admin+"/v1/reconciliation/runs", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		RunID    string `json:"runID"`
		Findings []any  `json:"findings"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&report)
	resp.Body.Close()
	if resp.StatusCode != 201 || report.RunID == "" || report.Findings == nil || len(report.Findings) != 0 {
		t.Fatalf("reconciliation run: %d %+v", resp.StatusCode, report)
	}
	var metrics strings.Builder
	resp, err = http.Get("http://" + d.admin + "/metrics")
	if err == nil {
		_, _ = io.Copy(&metrics, resp.Body)
		resp.Body.Close()
	}
	for _, m := range []string{`ledgerd_callback_requests_total{endpoint="credit-account",outcome="destination_unavailable",status="200"} 1`,
		"ledgerd_db_pool_max_connections", "ledgerd_keyring_opens_total"} {
		if !strings.Contains(metrics.String(), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	if err := d.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get("http://" + d.callbacks + "/ledger/authorize"); err == nil {
		t.Fatal("the callback listener still answers after shutdown")
	}
}

// TestRunEmbedded: with nothing set, ledgerd runs its own Postgres; data
// survives a restart; the embedded Postgres is gone after shutdown.
func TestRunEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := config(t, "LEDGER_DATA_DIR", dir)
	d := start(t, cfg)
	if code := get(t, "http://"+d.admin+"/readyz", nil); code != 200 {
		t.Fatalf("readyz = %d", code)
	}
	if code := post(t, "http://"+d.admin+"/v1/accounts", `{"accountID":"emb-1","ownerExternalID":"alice","currency":"EUR"}`); code != 201 {
		t.Fatalf("create = %d", code)
	}
	secretFile := filepath.Join(dir, "signing-secret")
	fi, err := os.Stat(secretFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev signing secret file: %v %v", fi, err)
	}
	raw, _ := os.ReadFile(secretFile)
	secret, err := envelope.ParseSecret(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	c := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	r, err := c.Send(context.Background(), claims.Capture, map[string]any{"providerID": "local", "payoutID": "p",
		"holdReference": "hold_x", "idempotencyKey": "k"})
	if err != nil || r.Status != 200 {
		t.Fatalf("callback with the dev secret: %+v %v", r, err)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if pids := postgresOf(t, dir); len(pids) > 0 {
		t.Fatalf("embedded Postgres still running after shutdown: %v", pids)
	}

	d = start(t, cfg)
	var acct map[string]any
	if code := get(t, "http://"+d.admin+"/v1/accounts/emb-1", &acct); code != 200 || acct["currency"] != "EUR" {
		t.Fatalf("after restart: %d %v", code, acct)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if pids := postgresOf(t, dir); len(pids) > 0 {
		t.Fatalf("embedded Postgres still running after the second shutdown: %v", pids)
	}
}

// postgresOf lists the PIDs of postgres processes whose command line names
// a directory under dir.
func postgresOf(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		s := strings.ReplaceAll(string(cmd), "\x00", " ")
		if strings.Contains(s, "postgres") && strings.Contains(s, dir) {
			pids = append(pids, fmt.Sprintf("%s: %s", e.Name(), s))
		}
	}
	return pids
}
