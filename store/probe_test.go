package store_test

import (
	"context"
	"testing"

	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestProbe: a direct connection is not taken for a pooler, and the pool
// learns the primary's identity from its first connection. (Behind
// pgbouncer: server/pgbouncer_test.go; across a promotion:
// server/failover_test.go.)
func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	srv, err := store.Probe(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Pooled || srv.ReadOnly || srv.Version == "" {
		t.Fatalf("direct connection to a primary: %+v", srv)
	}
	db, err := store.Open(ctx, url, store.Options{ExecMode: "cache_describe"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CheckPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if tp := db.Topology(); tp.Primary.SystemID == 0 || tp.Primary.Timeline == 0 || tp.PrimaryAddr == "" || tp.PrimaryChanges != 0 {
		t.Fatalf("topology after the first connection: %+v", tp)
	}
	if db.MultiHost() {
		t.Fatal("a one-host URL taken for several hosts")
	}
	if _, err := store.Open(ctx, url, store.Options{ExecMode: "prepared"}); err == nil {
		t.Fatal("an unknown exec mode was accepted")
	}
}
