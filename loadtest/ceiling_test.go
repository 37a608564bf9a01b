package loadtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestCeilingRefusesLedger: the ceiling's setup drops tables named like the
// ledger's, so a database holding the adapter's schema is refused, also one
// restored from the snapshot (no migrations bookkeeping); a scratch
// database is accepted.
func TestCeilingRefusesLedger(t *testing.T) {
	t.Parallel()
	tooltest.Require(t, "psql")
	ctx := context.Background()
	ledgerURL := storetest.URL(t)
	if err := refuseLedgerDatabase(ctx, ledgerURL); err == nil || !strings.Contains(err.Error(), "holds the adapter's schema") {
		t.Fatalf("a migrated ledger database: %v, want refused", err)
	}
	conn, err := pgx.Connect(ctx, ledgerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP TABLE schema_version, schema_functions`); err != nil {
		t.Fatal(err)
	}
	if err := refuseLedgerDatabase(ctx, ledgerURL); err == nil {
		t.Fatal("a ledger database without the migrations' bookkeeping was accepted")
	}
	if err := refuseLedgerDatabase(ctx, storetest.EmptyURL(t)); err != nil {
		t.Fatalf("a scratch database refused: %v", err)
	}
}

// TestQuoteIdent: the ceiling database's name is quoted exactly as the
// driver quotes identifiers.
func TestQuoteIdent(t *testing.T) {
	for _, name := range []string{"scratch", `a"b`, `"; DROP DATABASE postgres; --`, "nul\x00byte", ""} {
		if got, want := quoteIdent(name), (pgx.Identifier{name}).Sanitize(); got != want {
			t.Errorf("quoteIdent(%q) = %s, want %s", name, got, want)
		}
	}
}
