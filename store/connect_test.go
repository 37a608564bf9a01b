package store_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// hungHost accepts connections and never answers, as a hung server does.
func hungHost(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln.Addr().String()
}

// TestConnectTimeout: with a hung first host, Options.ConnectTimeout (what
// ledgerd sets when the URL has no connect_timeout) moves on to the next
// host; the pool then tries the primary's host first.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	real := u.Host
	u.Host = hungHost(t) + "," + real
	multi := u.String()
	// Bounds the test, not the code: without a connect timeout the first
	// host would hold every attempt until this.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	srv, err := store.Probe(ctx, multi, store.Options{ConnectTimeout: 200 * time.Millisecond})
	if err != nil || srv.Pooled {
		t.Fatalf("Probe past a hung first host: %+v %v", srv, err)
	}
	db, err := store.Open(ctx, multi, store.Options{ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("first connection past a hung first host: %v", err)
	}
	if got := db.Topology().PrimaryAddr; got != real && !sameAddr(got, real) {
		t.Fatalf("primary at %s, want %s", got, real)
	}
	if !db.MultiHost() {
		t.Fatal("a two-host URL is not multi-host")
	}
	db.ProbeHosts(ctx) // the hung host is skipped after its timeout
	if tp := db.Topology(); tp.PrimaryChanges != 0 || tp.SplitBrains != 0 {
		t.Fatalf("one primary seen twice counted as a change: %+v", tp)
	}
}

func sameAddr(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	ia, ib := net.ParseIP(ha), net.ParseIP(hb)
	return pa == pb && (ha == hb || ia != nil && ib != nil && ia.Equal(ib) || hb == "localhost" && ia != nil && ia.IsLoopback())
}

// TestRefusedConnectionsAreUnavailable: a server that refuses the
// connection with an error of its own (here: the database does not exist;
// equally "not accepting connections" or "too many clients") is the
// database being unavailable, 503 to a callback, never a bug (500).
func TestRefusedConnectionsAreUnavailable(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database_here"
	db, err := store.Open(context.Background(), u.String(), store.Options{})
	if err == nil {
		defer db.Close()
		err = db.Ping(context.Background())
	}
	if ledger.CodeOf(err) != ledger.CodeUnavailable {
		t.Fatalf("connecting to a database that does not exist: %v (code %q), want unavailable", err, ledger.CodeOf(err))
	}
}
