package main

import (
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/store/storetest"
)

// TestMigrate: `ledgerd migrate` applies the schema with ledgerd's own
// settings, LEDGER_MIGRATION_DATABASE_URL winning over DATABASE_URL as
// when ledgerd migrates at start, and `ledgerd migrate status` exits 1
// while something is pending, 0 once applied, 2 on an error. Not parallel:
// it sets the environment.
func TestMigrate(t *testing.T) {
	url := storetest.EmptyURL(t)
	t.Setenv("LEDGER_MIGRATION_DATABASE_URL", "")
	t.Setenv("DATABASE_URL", url)
	if code, out, errs := runLedgerd("migrate", "status"); code != 1 || !strings.Contains(out, "apply with: ledgerd migrate") {
		t.Fatalf("status of an empty database: exit %d %q %q; want 1", code, out, errs)
	}
	// The migration URL wins: DATABASE_URL now points nowhere.
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
	t.Setenv("LEDGER_MIGRATION_DATABASE_URL", url)
	if code, out, errs := runLedgerd("migrate"); code != 0 || !strings.Contains(out, "schema at version") || !strings.Contains(errs, "applying migration") {
		t.Fatalf("ledgerd migrate: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := runLedgerd("migrate", "status"); code != 0 || !strings.Contains(out, "up to date") {
		t.Fatalf("status after migrate: exit %d %q %q; want 0", code, out, errs)
	}
	t.Setenv("LEDGER_MIGRATION_DATABASE_URL", "")
	if code, _, errs := runLedgerd("migrate", "status"); code != 2 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Fatalf("status of an unreachable database: exit %d %q; want 2", code, errs)
	}
	t.Setenv("DATABASE_URL", "")
	if code, _, errs := runLedgerd("migrate", "status"); code != 2 || !strings.Contains(errs, "no database: set LEDGER_MIGRATION_DATABASE_URL") {
		t.Fatalf("status without a database: exit %d %q; want 2", code, errs)
	}
}
