package callbacks_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestProvenance: each decision is recorded with its provenance in the
// transaction of the effect: endpoint, subject, outcome, reason, key
// fingerprint, audit claims, received time, attempts.
func TestProvenance(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "pv-1", Owner: "alice", Funds: "5", Source: "src-pv"})
	before := time.Now().Add(-time.Second)
	c := authorizeRequest("pv-payout", "pv-key", "alice", "src-pv", "9", 0)
	c.CallerSubject, c.RequestID = "user-42", "trace-77"
	for range 3 {
		if r := b.send(t, claims.Authorize, claims.AuthorizeService(c)); r.Status != 200 || r.Str("reason") != "insufficient_funds" {
			t.Fatalf("%d %v", r.Status, r.Service)
		}
	}
	var endpoint, subject, outcome, reason, keyFP, caller, audit string
	var received time.Time
	var attempts int
	err := b.pool.QueryRow(context.Background(), `SELECT endpoint, subject, outcome, reason, key_fingerprint,
caller_subject, audit_request_id, received_at, attempts FROM callback_requests WHERE idempotency_key = 'pv-key'`).
		Scan(&endpoint, &subject, &outcome, &reason, &keyFP, &caller, &audit, &received, &attempts)
	if err != nil {
		t.Fatal(err)
	}
	if endpoint != "authorize" || subject != "pv-payout" || outcome != "denied" || reason != "insufficient_funds" ||
		keyFP != b.key.Fingerprint() || caller != "user-42" || audit != "trace-77" || attempts != 3 || received.Before(before) {
		t.Fatalf("provenance: %s %s %s %s %s %s %s %v %d", endpoint, subject, outcome, reason, keyFP, caller, audit, received, attempts)
	}
}

// TestLogsCarryNoClaimsOrSecrets: one JSON line per callback with endpoint,
// outcome, status, latency and request ID; never the claims (owner,
// instrument tokens, amounts, keys) or the signing secret, on success or
// failure.
func TestLogsCarryNoClaimsOrSecrets(t *testing.T) {
	t.Parallel()
	base := setup(t, opts{})
	var logs syncbuf.Buffer
	srv, err := callbacks.New(callbacks.Config{DB: base.db, Keyring: base.keyring, ProviderID: provider,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client := &caller.Client{BaseURL: hs.URL + "/ledger", Key: base.key}
	base.account(t, storetest.AccountOpts{AccountID: "acct-SECRETIVE", Owner: "owner-SECRETIVE", Funds: "10000", Source: "tok-SECRETIVE", Dest: "dtok-SECRETIVE"})
	ctx := context.Background()
	sends := []struct {
		endpoint string
		claims   any
	}{
		{claims.Authorize, authorizeClaims("payout-1", "idem-SECRETIVE-1", "owner-SECRETIVE", "tok-SECRETIVE", "4321.98", 0.1)},
		{claims.Authorize, authorizeClaims("payout-2", "idem-SECRETIVE-2", "owner-SECRETIVE", "tok-SECRETIVE", "4321.98", 2)},
		{claims.CreditAccount, creditClaims("req-1", "idem-SECRETIVE-3", "owner-SECRETIVE", "dtok-SECRETIVE", "4321.98")},
		{claims.CreditAccount, creditClaims("req-2", "idem-SECRETIVE-4", "intruder-SECRETIVE", "dtok-SECRETIVE", "4321.98")},
	}
	for _, s := range sends {
		if _, err := client.Send(ctx, s.endpoint, s.claims); err != nil {
			t.Fatal(err)
		}
	}
	stranger := &caller.Client{BaseURL: client.BaseURL, Key: newKey(t, "stranger")}
	if r, _ := stranger.Send(ctx, claims.Capture, captureClaims("p", "idem-SECRETIVE-5", "hold_SECRETIVE")); r == nil || r.Status != 400 {
		t.Fatalf("stranger: %+v", r)
	}
	out := logs.String()
	if strings.Count(out, `"msg":"callback"`) != len(sends)+1 {
		t.Fatalf("want one line per callback, got:\n%s", out)
	}
	for _, bad := range []string{"SECRETIVE", "4321.98", base64.StdEncoding.EncodeToString(base.key.Secret),
		base64.RawURLEncoding.EncodeToString(base.key.Secret), hex.EncodeToString(base.key.Secret)} {
		if strings.Contains(out, bad) {
			t.Fatalf("logs contain %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{`"endpoint":"authorize"`, `"outcome":"approved"`, `"status":200`, `"status":400`, `"requestID":`, `"latencyMs":`, `"payoutID":"payout-1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
}

// TestMetrics reads the callback metrics after known traffic.
func TestMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	b.account(t, storetest.AccountOpts{AccountID: "m-1", Owner: "alice", Funds: "100", Source: "src-m"})
	c := authorizeClaims("m-p1", "m-k1", "alice", "src-m", "12.50", 0)
	for range 3 {
		b.send(t, claims.Authorize, c)
	}
	b.send(t, claims.Authorize, authorizeClaims("m-p2", "m-k2", "alice", "src-m", "1000", 0))
	m := b.server.Metrics()
	for name, c := range map[string]struct {
		got  prometheus.Collector
		want float64
	}{
		"replays":          {m.Replays(claims.Authorize), 2},
		"approved 200":     {m.Requests(claims.Authorize, "approved", 200), 3},
		"denied 200":       {m.Requests(claims.Authorize, "denied", 200), 1},
		"opens by the key": {m.Opens(b.key.Fingerprint()), 4},
		"inflight at rest": {m.Inflight(), 0},
	} {
		if got := testutil.ToFloat64(c.got); got != c.want {
			t.Errorf("%s = %v, want %v", name, got, c.want)
		}
	}
	expected := `
# HELP ledgerd_holds_outstanding Holds in status held.
# TYPE ledgerd_holds_outstanding gauge
ledgerd_holds_outstanding{currency="USD"} 1
# HELP ledgerd_holds_outstanding_amount Sum of the amounts of holds in status held.
# TYPE ledgerd_holds_outstanding_amount gauge
ledgerd_holds_outstanding_amount{currency="USD"} 12.5
`
	// A scrape waits for the database at most dbgauge.Budget and then
	// serves the values read before: wait for one that read the hold.
	wait.UntilErr(t, "a scrape that read the hold", func() error {
		return testutil.GatherAndCompare(b.reg, strings.NewReader(expected), "ledgerd_holds_outstanding", "ledgerd_holds_outstanding_amount")
	})
}
