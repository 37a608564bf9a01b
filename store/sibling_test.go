package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestSibling: a sibling pool answers while every connection of its
// parent is taken, holds at most its own cap, and its connections carry
// their application_name; the parent's are not renamed.
func TestSibling(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := storetest.URL(t)
	db, err := store.Open(ctx, url, store.Options{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sib, err := db.Sibling(ctx, 2, "ledgerd-test-sibling")
	if err != nil {
		t.Fatal(err)
	}
	defer sib.Close()
	if sib.MaxConns() != 2 || db.MaxConns() != 3 {
		t.Fatalf("caps: sibling %d (want 2), parent %d (want 3)", sib.MaxConns(), db.MaxConns())
	}

	// Every connection of the parent taken.
	var held []*pgxpool.Conn
	for range db.MaxConns() {
		c, err := db.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	busy, cancelBusy := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelBusy()
	if err := db.Ping(busy); err == nil {
		t.Fatal("the parent answered with every connection taken: the test holds nothing")
	}
	if err := sib.Ping(ctx); err != nil {
		t.Fatalf("the sibling waited for the parent's connections: %v", err)
	}

	// The sibling's own two connections, named; a third waits.
	var sibConns []*pgxpool.Conn
	for range 2 {
		c, err := sib.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sibConns = append(sibConns, c)
	}
	over, cancelOver := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelOver()
	if c, err := sib.Pool().Acquire(over); err == nil {
		c.Release()
		t.Fatal("the sibling gave a third connection over its cap of 2")
	}
	var named, parent int
	if err := sibConns[0].QueryRow(ctx, `SELECT count(*) FILTER (WHERE application_name = 'ledgerd-test-sibling'),
       count(*) FILTER (WHERE application_name <> 'ledgerd-test-sibling')
FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`).Scan(&named, &parent); err != nil {
		t.Fatal(err)
	}
	for _, c := range sibConns {
		c.Release()
	}
	if named != 2 || parent != 3 {
		t.Errorf("pg_stat_activity: %d sibling connections (want 2), %d others (want the parent's 3)", named, parent)
	}
}
