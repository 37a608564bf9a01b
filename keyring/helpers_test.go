package keyring_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// logBuffer collects the log lines of every vault, loader and bootstrap of
// a test, safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testBundle is one test's database and the helpers around it. Every secret
// a test makes through it is remembered, and when the test ends the logs
// are checked to hold none of them in any encoding.
type testBundle struct {
	url     string
	pool    *pgxpool.Pool
	kek     []byte
	clock   *clock
	logs    *logBuffer
	log     *slog.Logger
	vault   *keyring.Vault
	mu      sync.Mutex
	secrets [][]byte
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{
		url:   storetest.URL(t),
		clock: &clock{now: time.Date(2026, 11, 2, 9, 30, 0, 123456000, time.UTC)},
		logs:  &logBuffer{},
	}
	b.pool = storetest.PoolURL(t, b.url)
	b.log = slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.kek = randomBytes(t, keyring.KEKSize)
	b.vault = b.newVault(t, b.pool, b.kek)
	t.Cleanup(func() { b.assertNoSecretLogged(t) })
	return b
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	if _, err := rand.Read(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// newSecret returns a fresh random secret and remembers it.
func (b *testBundle) newSecret(t *testing.T) []byte {
	s := randomBytes(t, envelope.SecretSize)
	b.remember(s)
	return s
}

func (b *testBundle) remember(secret []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.secrets = append(b.secrets, append([]byte(nil), secret...))
}

func (b *testBundle) newVault(t *testing.T, pool *pgxpool.Pool, kek []byte) *keyring.Vault {
	t.Helper()
	return b.rotatingVault(t, pool, kek, nil)
}

// rotatingVault is a Vault reading under kek and previous (nil: none), as
// a replica given LEDGER_KEK and LEDGER_KEK_PREVIOUS.
func (b *testBundle) rotatingVault(t *testing.T, pool *pgxpool.Pool, kek, previous []byte) *keyring.Vault {
	t.Helper()
	s, err := keyring.NewVault(store.Wrap(pool, nil), kek, keyring.VaultOptions{Now: b.clock.Now, Logger: b.log, PreviousKEK: previous})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replica is one ledgerd replica: its own pool on the shared database, its
// own Vault, keyring and Loader.
type replica struct {
	vault   *keyring.Vault
	keyring *envelope.KeySet
	loader  *keyring.Loader
	pool    *pgxpool.Pool
}

func (b *testBundle) replica(t *testing.T, kek []byte, interval time.Duration) *replica {
	t.Helper()
	return b.rotatingReplica(t, kek, nil, interval)
}

// rotatingReplica is a replica given kek and, when not nil, previous.
func (b *testBundle) rotatingReplica(t *testing.T, kek, previous []byte, interval time.Duration) *replica {
	t.Helper()
	r := &replica{pool: storetest.PoolURL(t, b.url), keyring: envelope.NewKeySet()}
	r.vault = b.rotatingVault(t, r.pool, kek, previous)
	l, err := keyring.NewLoader(keyring.Config{Vault: r.vault, Keyring: r.keyring, Interval: interval, Logger: b.log})
	if err != nil {
		t.Fatal(err)
	}
	r.loader = l
	t.Cleanup(l.Stop)
	return r
}

func (r *replica) reload(t *testing.T) {
	t.Helper()
	if err := r.loader.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
}

// opens reports whether the replica's keyring opens a request sealed with
// secret.
func (r *replica) opens(t *testing.T, secret []byte) bool {
	t.Helper()
	_, err := r.keyring.Open(sealRequest(t, secret))
	return err == nil
}

func sealRequest(t *testing.T, secret []byte) string {
	t.Helper()
	claims, err := claims.BuildRequest(time.Now(), "authorize", map[string]any{"providerID": "local", "idempotencyKey": "k-1"})
	if err != nil {
		t.Fatal(err)
	}
	jwe, err := envelope.Seal(envelope.Key{ID: "test", Secret: secret}, envelope.FormClaims, claims)
	if err != nil {
		t.Fatal(err)
	}
	return jwe
}

// encodings are the forms in which a secret could leak into text.
func encodings(secret []byte) []string {
	return []string{
		base64.StdEncoding.EncodeToString(secret),
		base64.RawStdEncoding.EncodeToString(secret),
		base64.URLEncoding.EncodeToString(secret),
		base64.RawURLEncoding.EncodeToString(secret),
		hex.EncodeToString(secret),
		string(secret),
	}
}

func (b *testBundle) assertNoSecretLogged(t *testing.T) {
	t.Helper()
	logs := b.logs.String()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.secrets {
		for _, enc := range encodings(s) {
			if strings.Contains(logs, enc) {
				t.Errorf("the logs contain a secret (fingerprint %s)", envelope.Key{Secret: s}.Fingerprint())
			}
		}
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline. It asserts an eventual state, not a duration.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fingerprint(secret []byte) string { return envelope.Key{Secret: secret}.Fingerprint() }
