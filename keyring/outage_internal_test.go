package keyring

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestLoaderOutage: the database goes away (every connection cut, new ones
// refused, as a crashed primary), then answers again. With an Interval of
// an hour, only the loop's retries can reload the keyring: they go on while
// the database is away, and the keyring is fresh again about a second after
// the database answers, instead of an Interval later. The pool's connect
// hook kicks the loop, as ledgerd's does.
func TestLoaderOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	target := storetest.URL(t)
	p := startProxy(t, hostOf(t, target))
	var loader atomic.Pointer[Loader]
	cfg, err := pgxpool.ParseConfig(viaProxy(t, target, p.addr()) + "&connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(context.Context, *pgx.Conn) error {
		if l := loader.Load(); l != nil {
			l.Kick()
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	kek := make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	vault, err := NewVault(store.Wrap(pool, nil), kek, VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, envelope.SecretSize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vault.Add(ctx, secret); err != nil {
		t.Fatal(err)
	}
	keys := envelope.NewKeySet()
	l, err := NewLoader(Config{Vault: vault, Keyring: keys, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	loader.Store(l)
	if err := l.Reload(ctx); err != nil || keys.Len() != 1 {
		t.Fatalf("first load: %v, %d keys", err, keys.Len())
	}
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Stop)

	p.setUp(false)
	l.runOnce(ctx) // the load that notices the outage (an Interval's tick)
	l.Kick()
	waitUntil(t, "the loop to retry while the database is away", func() bool { return l.Failures() >= 3 })
	if keys.Len() != 1 {
		t.Fatalf("the keyring lost its keys during the outage: %d", keys.Len())
	}

	back := time.Now()
	p.setUp(true)
	waitUntil(t, "the keyring to reload once the database answers", func() bool {
		return l.Failures() == 0 && l.lastLoad.Load() > back.UnixNano()
	})
	t.Logf("keyring fresh %s after the database answered again", time.Unix(0, l.lastLoad.Load()).Sub(back).Round(time.Millisecond))
	if keys.Len() != 1 {
		t.Fatalf("after the outage the keyring holds %d keys, want 1", keys.Len())
	}
}

// TestLoaderRetrySchedule: after a failed load the next comes retryFirst
// later, doubling to retryMax, never past Interval; Interval once a load
// succeeds.
func TestLoaderRetrySchedule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		interval time.Duration
		failures int64
		want     time.Duration
	}{
		{defaultInterval, 0, defaultInterval},
		{defaultInterval, 1, retryFirst},
		{defaultInterval, 2, 2 * retryFirst},
		{defaultInterval, 3, retryMax},
		{defaultInterval, 1000, retryMax},
		{100 * time.Millisecond, 5, 100 * time.Millisecond},
	} {
		l := &Loader{cfg: Config{Interval: c.interval}}
		l.failures.Store(c.failures)
		if got := l.nextDelay(); got != c.want {
			t.Errorf("interval %s, %d failures: next load in %s, want %s", c.interval, c.failures, got, c.want)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func viaProxy(t *testing.T, raw, addr string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// proxy forwards TCP connections to a database; while down it cuts every
// connection and refuses new ones, as a crashed server would.
type proxy struct {
	ln     net.Listener
	target string
	up     atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.up.Store(true)
	t.Cleanup(func() { ln.Close(); p.setUp(false) })
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) setUp(up bool) {
	p.up.Store(up)
	if up {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.up.Load() {
			c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, s)
		p.mu.Unlock()
		c.Close()
		s.Close()
	}()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
}
