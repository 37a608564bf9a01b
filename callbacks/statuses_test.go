package callbacks_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

func problemType(r *caller.Reply) string {
	return strings.TrimPrefix(r.ProblemType(), "urn:provider-ledger:problem:")
}

func hasPointer(r *caller.Reply, pointer string) bool {
	return slices.Contains(r.ProblemPointers(), pointer)
}

// sealClaims is a callback of typ with service's claims, issued at now,
// sealed with key.
func sealClaims(t *testing.T, key envelope.Key, typ string, service any, now time.Time) string {
	t.Helper()
	c, err := claims.BuildRequest(now, typ, service)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := envelope.Seal(key, envelope.FormClaims, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// sealTimedClaims seals an authorize whose iat and exp are given.
func sealTimedClaims(t *testing.T, key envelope.Key, service any, iat, exp time.Time) string {
	t.Helper()
	c, err := claims.BuildRequest(iat, "authorize", service)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(c, &m); err != nil {
		t.Fatal(err)
	}
	m["exp"] = exp.Unix()
	if c, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	tok, err := envelope.Seal(key, envelope.FormClaims, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// withJWEHeader is tok with its protected header replaced by header.
func withJWEHeader(tok, header string) string {
	parts := strings.SplitN(tok, ".", 2)
	return base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + parts[1]
}

// statusClaimsWithout and statusClaimsWith are TestStatuses' authorize
// claims without the member name, or with it set to v.
func statusClaimsWithout(t *testing.T, name string) map[string]any {
	c := asMap(t, authorizeClaims("ps-1", "ks-1", "alice", "src-s1", "10", 0))
	delete(c, name)
	return c
}

func statusClaimsWith(t *testing.T, name string, v any) map[string]any {
	c := asMap(t, authorizeClaims("ps-1", "ks-1", "alice", "src-s1", "10", 0))
	c[name] = v
	return c
}

// TestStatuses covers the terminal statuses of contract §2.1 and 2.7, each
// through a real listener; none of them changes the ledger.
func TestStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "s-1", Owner: "alice", Funds: "100", Source: "src-s1"})
	ctx := context.Background()
	good := authorizeClaims("ps-1", "ks-1", "alice", "src-s1", "10", 0)
	valid := sealClaims(t, b.key, "authorize", good, time.Now())
	// A JSON-escaped line break inside the ciphertext segment: Go's Base64
	// decoder would skip it.
	ct := strings.LastIndex(valid, ".") - 8
	newline := valid[:ct] + `\n` + valid[ct:]
	without := func(name string) map[string]any { return statusClaimsWithout(t, name) }
	with := func(name string, v any) map[string]any { return statusClaimsWith(t, name, v) }

	for _, c := range []struct {
		name    string
		body    string
		token   string
		status  int
		slug    string
		pointer string
	}{
		{name: "NotJSON", body: `not json`, status: 400, slug: "malformed-body"},
		{name: "NoRequest", body: `{"req":"x"}`, status: 400, slug: "malformed-body"},
		{name: "RequestNotString", body: `{"request":42}`, status: 400, slug: "malformed-body"},
		{name: "TooLarge", body: `{"request":"` + strings.Repeat("a", callbacks.MaxBody) + `"}`, status: 413, slug: "payload-too-large"},
		{name: "NotAJWE", token: "a.b.c", status: 400, slug: "malformed-jwe"},
		{name: "NewlineInSegment", token: newline, status: 400, slug: "malformed-jwe"},
		{name: "AlgDir", token: withJWEHeader(valid, `{"alg":"dir","enc":"A256GCM","typ":"JWT","cty":"JWT"}`), status: 400, slug: "unsupported-jwe-header"},
		{name: "EncA128GCM", token: withJWEHeader(valid, `{"alg":"A256KW","enc":"A128GCM","typ":"JWT","cty":"JWT"}`), status: 400, slug: "unsupported-jwe-header"},
		{name: "Zip", token: withJWEHeader(valid, `{"alg":"A256KW","enc":"A256GCM","zip":"DEF","typ":"JWT","cty":"JWT"}`), status: 400, slug: "unsupported-jwe-header"},
		{name: "OtherKey", token: sealClaims(t, newKey(t, "stranger"), "authorize", good, time.Now()), status: 400, slug: "undecryptable"},
		{name: "Expired", token: sealClaims(t, b.key, "authorize", good, time.Now().Add(-400*time.Second)), status: 400, slug: "invalid-claims", pointer: "/exp"},
		{name: "FromTheFuture", token: sealClaims(t, b.key, "authorize", good, time.Now().Add(2*time.Minute)), status: 400, slug: "invalid-claims", pointer: "/iat"},
		{name: "WrongTyp", token: sealClaims(t, b.key, "capture", good, time.Now()), status: 400, slug: "invalid-claims", pointer: "/typ"},
		// exp - iat over LEDGER_MAX_TOKEN_LIFETIME (10m by default), and exp
		// before iat (within the leeway, so not expired): step 5, before
		// the provider is read.
		{name: "TenYearLifetime", token: sealTimedClaims(t, b.key, good, time.Now(), time.Now().AddDate(10, 0, 0)), status: 400, slug: "invalid-claims", pointer: "/exp"},
		{name: "LifetimeOverTheDefault", token: sealTimedClaims(t, b.key, good, time.Now(), time.Now().Add(callbacks.DefaultMaxTokenLifetime+2*time.Second)), status: 400, slug: "invalid-claims", pointer: "/exp"},
		{name: "ExpBeforeIat", token: sealTimedClaims(t, b.key, good, time.Now(), time.Now().Add(-30*time.Second)), status: 400, slug: "invalid-claims", pointer: "/exp"},
		{name: "TenYearLifetimeOtherProvider", token: sealTimedClaims(t, b.key, statusClaimsWith(t, "providerID", "other-bank"), time.Now(), time.Now().AddDate(10, 0, 0)), status: 400, slug: "invalid-claims", pointer: "/exp"},
		{name: "WrongProvider", token: sealClaims(t, b.key, "authorize", with("providerID", "other-bank"), time.Now()), status: 403, slug: "wrong-provider"},
		{name: "MissingPayoutID", token: sealClaims(t, b.key, "authorize", without("payoutID"), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/payoutID"},
		{name: "MissingIdempotencyKey", token: sealClaims(t, b.key, "authorize", without("idempotencyKey"), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/idempotencyKey"},
		{name: "PayoutIDNotString", token: sealClaims(t, b.key, "authorize", with("payoutID", 7), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/payoutID"},
		{name: "FraudScoreString", token: sealClaims(t, b.key, "authorize", with("fraudScore", "0.1"), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/fraudScore"},
		{name: "AmountInexact", token: sealClaims(t, b.key, "authorize", with("amount", usd("10.505")), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/amount/value"},
		{name: "AmountNegative", token: sealClaims(t, b.key, "authorize", with("amount", usd("-1")), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/amount/value"},
		{name: "AmountWrongPlaces", token: sealClaims(t, b.key, "authorize", with("amount", map[string]any{"currency": map[string]any{"code": "JPY", "decimalPlaces": 2}, "value": "1"}), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/amount/currency/decimalPlaces"},
		{name: "NULInPayoutID", token: sealClaims(t, b.key, "authorize", with("payoutID", "p\x00"), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/payoutID"},
		{name: "NULInIdempotencyKey", token: sealClaims(t, b.key, "authorize", with("idempotencyKey", "k\x00"), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/idempotencyKey"},
		{name: "FraudOutOfRange", token: sealClaims(t, b.key, "authorize", with("fraudScore", 1.5), time.Now()), status: 400, slug: "invalid-claims", pointer: "/service/fraudScore"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			if c.token != "" {
				body = []byte(`{"request":"` + c.token + `"}`)
			}
			r, err := b.client.PostBody(ctx, claims.Authorize, body)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != c.status || problemType(r) != c.slug || (c.pointer != "" && !hasPointer(r, c.pointer)) {
				t.Fatalf("got %d %v, want %d %s at %q", r.Status, r.Problem, c.status, c.slug, c.pointer)
			}
		})
	}
	storetest.AssertBalances(t, b.db, "s-1", "100", "0", "100")
	if n := testutil.ToFloat64(b.server.Metrics().Undecryptable(claims.Authorize)); n != 1 {
		t.Errorf("undecryptable counter = %v, want 1", n)
	}

}

// TestRoutesAndRecovery: unknown routes and methods answer problem+json,
// every answer is no-store, and a panic in a handler is a 500.
func TestRoutesAndRecovery(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "s-1", Owner: "alice", Funds: "100", Source: "src-s1"})
	valid := sealClaims(t, b.key, "authorize", authorizeClaims("ps-1", "ks-1", "alice", "src-s1", "10", 0), time.Now())
	t.Run("Routing", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			status       int
		}{{"GET", "/ledger/authorize", 405}, {"POST", "/ledger/refund", 404}, {"POST", "/authorize", 404}} {
			req, _ := http.NewRequest(c.method, b.http.URL+c.path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s %s = %d %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
	})
	t.Run("EveryAnswerIsNoStore", func(t *testing.T) {
		resp, err := http.Post(b.http.URL+"/ledger/authorize", "application/json", strings.NewReader(`{"request":"`+valid+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%d, Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	})
	t.Run("PanicIsRecoveredAs500", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/ledger/authorize", nil)
		req.Body = nil // a nil body makes the handler panic
		rec := httptest.NewRecorder()
		b.server.ServeHTTP(rec, req)
		if rec.Code != 500 || !strings.Contains(rec.Body.String(), "urn:provider-ledger:problem:internal") {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	})
}

// lockAccount holds a row lock on the account until the returned function
// is called, so that callbacks touching it block.
func lockAccount(t *testing.T, pool *pgxpool.Pool, accountID string) func() {
	t.Helper()
	tx, err := pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `SELECT 1 FROM accounts WHERE account_id = $1 FOR UPDATE`, accountID); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(context.Background()) }
}

// TestRetryableStatuses covers 408, 429 and 503: each is answered only when
// nothing was committed, and the same request succeeds when retried.
func TestRetryableStatuses(t *testing.T) {
	t.Parallel()

	t.Run("DeadlineRollsBackAnd408", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{requestTimeout: 300 * time.Millisecond})
		b.account(t, storetest.AccountOpts{AccountID: "t-1", Owner: "alice", Funds: "100", Source: "src-t1"})
		unlock := lockAccount(t, b.pool, "t-1")
		r := b.send(t, claims.Authorize, authorizeClaims("pt-1", "kt-1", "alice", "src-t1", "10", 0))
		unlock()
		if r.Status != 408 || problemType(r) != "request-timeout" {
			t.Fatalf("got %d %v", r.Status, r.Problem)
		}
		storetest.AssertBalances(t, b.db, "t-1", "100", "0", "100")
		var n int
		if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM callback_requests`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a timed-out callback left %d idempotency rows (%v)", n, err)
		}
		if r := b.send(t, claims.Authorize, authorizeClaims("pt-1", "kt-1", "alice", "src-t1", "10", 0)); r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("retry: %d %v", r.Status, r.Service)
		}
		storetest.AssertBalances(t, b.db, "t-1", "100", "10", "90")
	})

	t.Run("InflightLimit429", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{maxInflight: 1, requestTimeout: 5 * time.Second})
		b.account(t, storetest.AccountOpts{AccountID: "t-2", Owner: "alice", Funds: "100", Source: "src-t2"})
		unlock := lockAccount(t, b.pool, "t-2")
		var first *caller.Reply
		var wg sync.WaitGroup
		wg.Go(func() {
			first = b.send(t, claims.Authorize, authorizeClaims("pt-2", "kt-2", "alice", "src-t2", "10", 0))
		})
		wait.Until(t, "the first callback in flight", func() bool { return testutil.ToFloat64(b.server.Metrics().Inflight()) >= 1 })
		r := b.send(t, claims.Authorize, authorizeClaims("pt-3", "kt-3", "alice", "src-t2", "10", 0))
		unlock()
		wg.Wait()
		if r.Status != 429 || r.RetryAfter == "" || problemType(r) != "too-many-requests" {
			t.Fatalf("second in flight: %d %v Retry-After %q", r.Status, r.Problem, r.RetryAfter)
		}
		if first.Status != 200 {
			t.Fatalf("first: %d %v", first.Status, first.Problem)
		}
		storetest.AssertBalances(t, b.db, "t-2", "100", "10", "90")
	})

	t.Run("DatabaseUnreachable503", func(t *testing.T) {
		t.Parallel()
		cfg, err := store.Config("postgres://nobody@127.0.0.1:1/none?connect_timeout=1", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		b := setup(t, opts{pool: pool})
		r := b.send(t, claims.Capture, captureClaims("pd-1", "kd-1", "hold_x"))
		if r.Status != 503 || r.RetryAfter == "" || problemType(r) != "database-unavailable" {
			t.Fatalf("got %d %v", r.Status, r.Problem)
		}
	})

	t.Run("Draining503", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		b.server.Drain()
		r := b.send(t, claims.Capture, captureClaims("pd-2", "kd-2", "hold_x"))
		if r.Status != 503 || problemType(r) != "shutting-down" {
			t.Fatalf("got %d %v", r.Status, r.Problem)
		}
	})
}

// TestCheckRefusesRetryably: while the server's Check fails (ledgerd: the
// keyring has not been refreshed for a while), callbacks answer 503 with
// Retry-After, never a terminal status, and change nothing.
func TestCheckRefusesRetryably(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	var stale atomic.Bool
	stale.Store(true)
	srv, err := callbacks.New(callbacks.Config{DB: b.db, Keyring: b.keyring, ProviderID: provider,
		Check: func() error {
			if stale.Load() {
				return errors.New("keyring stale")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := &caller.Client{BaseURL: hs.URL + "/ledger", Key: b.key}
	b.account(t, storetest.AccountOpts{AccountID: "chk", Owner: "alice", Funds: "10", Source: "src-chk"})
	r, err := c.Send(context.Background(), claims.Authorize, authorizeClaims("chk-p", "k", "alice", "src-chk", "1", 0))
	if err != nil || r.Status != 503 || problemType(r) != "keyring-stale" || r.RetryAfter == "" {
		t.Fatalf("stale: %+v %v", r, err)
	}
	storetest.AssertBalances(t, b.db, "chk", "10", "0", "10")
	stale.Store(false)
	if r, err := c.Send(context.Background(), claims.Authorize, authorizeClaims("chk-p", "k", "alice", "src-chk", "1", 0)); err != nil || r.Outcome() != "approved" {
		t.Fatalf("fresh again: %+v %v", r, err)
	}
}
