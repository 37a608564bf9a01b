package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestControlCommands: a token made with ledgerctl tokens opens what its
// scopes open; an adjustment over the threshold waits until another token
// approves it with ledgerctl adjustments approve; ledgerctl audit export
// writes the trail that ledgerctl audit verify accepts, and a record
// edited in the file is refused.
func TestControlCommands(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	over := decimal.RequireFromString("100")
	srv := httptest.NewServer(admintest.Handler(t, admin.New(admin.Config{DB: db, Token: "bg-token", ApprovalOver: &over})))
	t.Cleanup(srv.Close)
	c := adminCLI{url: srv.URL, db: db}
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "ctl-1", Funds: "500"})
	mk := c.json(t, "tokens", "create", "maker", "--scope", "adjust", "--admin-token", "bg-token")
	ck := c.json(t, "tokens", "create", "checker", "--scope", "approve", "--scope", "read", "--admin-token", "bg-token")
	maker, checker := mk["token"].(string), ck["token"].(string)
	if code, out, _ := c.run(t, "tokens", "list", "--admin-token", "bg-token"); code != 0 || !strings.Contains(out, "checker") || strings.Contains(out, checker) {
		t.Fatalf("tokens list: %d %s", code, out)
	}
	pending := c.json(t, "adjust", "ctl-1", "-250", "--key", "big", "--admin-token", maker)
	id, _ := pending["adjustmentID"].(string)
	if pending["status"] != "pending" || id == "" {
		t.Fatalf("adjust over the threshold: %v", pending)
	}
	storetest.AssertBalances(t, db, "ctl-1", "500", "0", "500")
	if code, _, errs := c.run(t, "adjustments", "approve", id, "--admin-token", maker); code != 1 || !strings.Contains(errs, "403") {
		t.Fatalf("approve by the maker (no approve scope): %d %s", code, errs)
	}
	if p := c.json(t, "adjustments", "approve", id, "--note", "ok", "--admin-token", checker); p["status"] != "posted" {
		t.Fatalf("approve: %v", p)
	}
	storetest.AssertBalances(t, db, "ctl-1", "250", "0", "250")
	if code, out, _ := c.run(t, "adjustments", "list", "--status", "posted", "--admin-token", checker); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("adjustments list: %d %s", code, out)
	}
	if code, _, _ := c.run(t, "tokens", "revoke", mk["tokenID"].(string), "--admin-token", "bg-token"); code != 0 {
		t.Fatalf("revoke: %d", code)
	}
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	if code, _, errs := c.run(t, "audit", "export", "--output", file, "--admin-token", "bg-token"); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	verify := func(path string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"audit", "verify", path}, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := verify(file)
	if code != 0 || !strings.Contains(out, "records 1 to 6 verify") {
		t.Fatalf("verify: %d %s %s", code, out, errs)
	}
	b, _ := os.ReadFile(file)
	tampered := filepath.Join(t.TempDir(), "tampered.jsonl")
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(b), `"status":201`, `"status":200`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := verify(tampered); code == 0 || !strings.Contains(errs, "broken") {
		t.Fatalf("a tampered file verifies: %d %s", code, errs)
	}
}
