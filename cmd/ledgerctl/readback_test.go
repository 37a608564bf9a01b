package main

import (
	"encoding/csv"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/store/storetest"
)

// setupReadbackCLI is an admin CLI over accounts rb-1 (funded, adjusted,
// a hold captured and one held), rb-2 (EUR, frozen) and rb-3.
func setupReadbackCLI(t *testing.T) adminCLI {
	t.Helper()
	c := newAdminCLI(t)
	storetest.Account(t, c.db, storetest.AccountOpts{AccountID: "rb-1", Owner: "rita", Funds: "100.10", Source: "src-rb-1"})
	storetest.Account(t, c.db, storetest.AccountOpts{AccountID: "rb-2", Owner: "rita", Currency: "EUR", Status: "frozen"})
	storetest.Account(t, c.db, storetest.AccountOpts{AccountID: "rb-3", Owner: "ron", Funds: "7"})
	if code, _, errs := c.run(t, "adjust", "rb-1", "-0.35", "--key", "fee-1", "--memo", "fee, \"monthly\""); code != 0 {
		t.Fatalf("adjust: %s", errs)
	}
	d := storetest.Hold(t, c.db, "rb-p1", "rita", "src-rb-1", "20")
	if !d.Approved() || !storetest.Settle(t, c.db, "rb-p1", d.Reference, true).Approved() {
		t.Fatal("hold and capture")
	}
	if !storetest.Hold(t, c.db, "rb-p2", "rita", "src-rb-1", "5").Approved() {
		t.Fatal("hold")
	}
	return c
}

// TestReadbackCommands drives accounts list, holds list --account, journal
// and statement against the real admin API.
func TestReadbackCommands(t *testing.T) {
	t.Parallel()

	t.Run("AccountsList", func(t *testing.T) {
		t.Parallel()
		c := setupReadbackCLI(t)
		code, out, errs := c.run(t, "accounts", "list", "--limit", "2")
		if code != 0 || !strings.Contains(out, "rb-1") || !strings.Contains(out, "rb-2") || strings.Contains(out, "rb-3") ||
			!strings.Contains(errs, "more accounts: --cursor ") {
			t.Fatalf("one page: %d %q %q", code, out, errs)
		}
		m := c.json(t, "accounts", "list", "--limit", "1", "--all", "--owner", "rita")
		as, _ := m["accounts"].([]any)
		if len(as) != 2 || m["hasMore"] != false {
			t.Fatalf("--all --owner rita: %v", m)
		}
		m = c.json(t, "accounts", "list", "--status", "frozen")
		if as, _ := m["accounts"].([]any); len(as) != 1 || as[0].(map[string]any)["currency"] != "EUR" {
			t.Fatalf("--status frozen: %v", m)
		}
		if code, _, errs := c.run(t, "accounts", "list", "--currency", "usd"); code != 1 || !strings.Contains(errs, "/currency") {
			t.Fatalf("bad currency: %d %q", code, errs)
		}
	})

	t.Run("HoldsOfAnAccount", func(t *testing.T) {
		t.Parallel()
		c := setupReadbackCLI(t)
		m := c.json(t, "holds", "list", "--account", "rb-1", "--status", "held")
		if hs, _ := m["holds"].([]any); len(hs) != 1 || hs[0].(map[string]any)["payoutID"] != "rb-p2" {
			t.Fatalf("held holds of rb-1: %v", m)
		}
		if m := c.json(t, "holds", "list", "--account", "rb-3"); len(m["holds"].([]any)) != 0 {
			t.Fatalf("holds of rb-3: %v", m)
		}
	})

	t.Run("Journal", func(t *testing.T) {
		t.Parallel()
		c := setupReadbackCLI(t)
		m := c.json(t, "journal", "entries", "--account", "rb-1", "--all", "--limit", "1")
		es, _ := m["entries"].([]any)
		sum := decimal.Zero
		for _, e := range es {
			sum = sum.Add(decimal.RequireFromString(e.(map[string]any)["amount"].(string)))
		}
		if len(es) != 3 || !sum.Equal(decimal.RequireFromString("79.75")) {
			t.Fatalf("entries of rb-1 sum to %s: %v", sum, es)
		}
		code, out, errs := c.run(t, "journal", "transactions", "--from", "2000-01-01", "--to", "2100-01-01T00:00:00Z")
		if code != 0 || strings.Count(out, "settlement:USD") != 1 || strings.Count(out, "core:USD") != 3 || !strings.Contains(out, "-20.00") {
			t.Fatalf("transactions: %d %q %q", code, out, errs)
		}
		if code, _, errs := c.run(t, "journal", "entries", "--from", "last week"); code != 2 || !strings.Contains(errs, "--from") {
			t.Fatalf("a bad --from is a usage error: %d %q", code, errs)
		}
		if code, _, errs := c.run(t, "journal", "entries", "--from", "2026-02-01", "--to", "2026-01-01"); code != 1 || !strings.Contains(errs, "/to") {
			t.Fatalf("to before from: %d %q", code, errs)
		}
	})

	t.Run("StatementToStdout", func(t *testing.T) {
		t.Parallel()
		c := setupReadbackCLI(t)
		// The period is not over: its last row is the interim balance.
		code, out, errs := c.run(t, "statement", "rb-1", "--from", "2000-01-01", "--to", "2100-01-01")
		if code != 0 {
			t.Fatalf("%d %q", code, errs)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 6 || rows[1][10] != "0.00" || rows[5][0] != "interim" || rows[5][10] != "79.75" {
			t.Fatalf("statement %q %v", out, err)
		}
		if rows[3][6] != `fee, "monthly"` || rows[3][9] != "-0.35" {
			t.Fatalf("the fee row %v", rows[3])
		}
	})

	t.Run("StatementToAFile", func(t *testing.T) { readbackStatementToAFile(t) })
}

// readbackStatementToAFile: -o writes the camt.053 statement to a file only
// its owner reads; a refused one leaves no file, and no --to is a usage
// error.
func readbackStatementToAFile(t *testing.T) {
	t.Parallel()
	c := setupReadbackCLI(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rb-1.xml")
	code, out, errs := c.run(t, "statement", "--account-id", "rb-1", "--from", "2000-01-01", "--to", "2100-01-01", "--format", "camt053", "-o", file)
	if code != 0 || out != "" {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Bal []struct {
			Code string `xml:"Tp>CdOrPrtry>Cd"`
			Amt  string `xml:"Amt"`
		} `xml:"BkToCstmrStmt>Stmt>Bal"`
		Ntry []struct{} `xml:"BkToCstmrStmt>Stmt>Ntry"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || len(doc.Bal) != 2 || doc.Bal[1].Amt != "79.75" || len(doc.Ntry) != 3 {
		t.Fatalf("camt.053 %+v %v", doc, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi, err)
	}
	// A refused statement leaves no file, partial or whole.
	bad := filepath.Join(dir, "none.csv")
	if code, _, errs := c.run(t, "statement", "nobody", "--from", "2000-01-01", "--to", "2100-01-01", "-o", bad); code != 1 || !strings.Contains(errs, "account-not-found") {
		t.Fatalf("unknown account: %d %q", code, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left behind: %v", entries)
	}
	if code, _, _ := c.run(t, "statement", "rb-1", "--from", "2000-01-01"); code != 2 {
		t.Fatalf("no --to: exit %d, want 2", code)
	}
}
