package provider_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
)

// listRoute is the route the retry tests fail: a GET, safe to retry.
const listRoute = "GET /providers/{providerID}/limit-groups"

func TestRetries(t *testing.T) {
	t.Parallel()

	t.Run("GetRetriedOn5xxWithJitteredBackoff", testRetriesGetRetriedOn5xxWithJitteredBackoff)
	t.Run("RetryAfterHonored", testRetriesRetryAfterHonored)
	t.Run("RetryAfterAsHTTPDate", testRetriesRetryAfterAsHTTPDate)
	t.Run("RetryAfterBeyondTheCapEndsTheCall", testRetriesRetryAfterBeyondTheCapEndsTheCall)
	t.Run("AttemptsAreBounded", testRetriesAttemptsAreBounded)
	t.Run("TransportErrorsRetried", testRetriesTransportErrorsRetried)
	t.Run("IdempotentWritesRetriedWithTheSameKey", testRetriesIdempotentWritesRetriedWithTheSameKey)
	t.Run("SecretCreateWithAKeyTheServerMayIgnoreIsNotRetried", testRetriesSecretCreateWithAKeyTheServerMayIgnoreIsNotRetried)
	t.Run("WritesWithoutAKeyAreNotRetried", testRetriesWritesWithoutAKeyAreNotRetried)
	t.Run("ClientErrorsAreNotRetried", testRetriesClientErrorsAreNotRetried)
	t.Run("ContextEndsTheWait", testRetriesContextEndsTheWait)
}

// testRetriesGetRetriedOn5xxWithJitteredBackoff checks that a GET failing with 503 twice is retried to success in 3 attempts,
// sleeping a full jitter under a doubling ceiling (at most 200ms, then 400ms).
func testRetriesGetRetriedOn5xxWithJitteredBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 503, Times: 2})
	_, resp, err := b.c.LimitGroups.List(ctx, nil)
	if err != nil || resp.Attempts != 3 {
		t.Fatalf("attempts %v, err %v", resp, err)
	}
	s := b.sleeps.all()
	// Full jitter under a doubling ceiling: 0 < d <= 200ms, then <= 400ms.
	if len(s) != 2 || s[0] <= 0 || s[0] > 200*time.Millisecond || s[1] <= 0 || s[1] > 400*time.Millisecond {
		t.Fatalf("sleeps %v", s)
	}
}

// testRetriesRetryAfterHonored checks that a 429's Retry-After in seconds is the wait before the retry.
func testRetriesRetryAfterHonored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 429, RetryAfter: "7"})
	if _, _, err := b.c.LimitGroups.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if s := b.sleeps.all(); len(s) != 1 || s[0] != 7*time.Second {
		t.Fatalf("sleeps %v", s)
	}
}

// testRetriesRetryAfterAsHTTPDate checks that a Retry-After given as an HTTP date in the past retries at once.
func testRetriesRetryAfterAsHTTPDate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 503, RetryAfter: "Wed, 21 Oct 2015 07:28:00 GMT"})
	if _, _, err := b.c.LimitGroups.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if s := b.sleeps.all(); len(s) != 1 || s[0] != 0 {
		t.Fatalf("a date in the past should retry at once: %v", s)
	}
}

// testRetriesRetryAfterBeyondTheCapEndsTheCall checks that a Retry-After beyond the policy's cap ends the call with
// ErrServer after one attempt and no sleep.
func testRetriesRetryAfterBeyondTheCapEndsTheCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 503, RetryAfter: "3600"})
	_, resp, err := b.c.LimitGroups.List(ctx, nil)
	wantIs(t, err, provider.ErrServer)
	if resp.Attempts != 1 || len(b.sleeps.all()) != 0 {
		t.Fatalf("attempts %d sleeps %v", resp.Attempts, b.sleeps.all())
	}
}

// testRetriesAttemptsAreBounded checks that a route that keeps failing with 500 gets exactly 4 attempts,
// then ErrServer.
func testRetriesAttemptsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 500, Times: 10})
	_, resp, err := b.c.LimitGroups.List(ctx, nil)
	wantIs(t, err, provider.ErrServer)
	if resp.Attempts != 4 || len(b.svc.Requests()) != 4 {
		t.Fatalf("attempts %d, requests %d", resp.Attempts, len(b.svc.Requests()))
	}
}

// testRetriesTransportErrorsRetried checks that a dropped connection on a participant create is retried once,
// with the same Idempotency-Key, and creates the participant.
func testRetriesTransportErrorsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: "POST /providers/{providerID}/participants", Disconnect: true})
	p, resp, err := b.c.Participants.Create(ctx, newParticipant("alice"))
	if err != nil || resp.Attempts != 2 || p.ParticipantID == "" {
		t.Fatalf("%+v %+v %v", p, resp, err)
	}
	reqs := b.svc.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Idempotency-Key") != reqs[1].Header.Get("Idempotency-Key") {
		t.Fatal("the retry did not reuse the idempotency key")
	}
}

// testRetriesIdempotentWritesRetriedWithTheSameKey checks that a signing-secret create failing with 502 is retried with
// the same X-Idempotency-Key and returns the secret.
func testRetriesIdempotentWritesRetriedWithTheSameKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: "POST /providers/{providerID}/signing-secrets", Status: 502})
	sec, resp, err := b.c.SigningSecrets.Create(ctx)
	if err != nil || resp.Attempts != 2 || sec.Secret == "" {
		t.Fatalf("%+v %v", resp, err)
	}
	reqs := b.svc.Requests()
	if reqs[0].Header.Get("X-Idempotency-Key") != reqs[1].Header.Get("X-Idempotency-Key") {
		t.Fatal("key changed between attempts")
	}
}

// testRetriesSecretCreateWithAKeyTheServerMayIgnoreIsNotRetried checks that a signing-secret create is not retried
// before v2026.10.00 or with no version (the key is still sent), and is
// retried from v2026.10.00.
func testRetriesSecretCreateWithAKeyTheServerMayIgnoreIsNotRetried(t *testing.T) {
	t.Parallel()
	// Before v2026.10.00 (and with no version, where the server's
	// default is unknown) X-Idempotency-Key is not part of the
	// contract: a retry could create a second secret.
	ctx := context.Background()
	b := setup(t)
	route := "POST /providers/{providerID}/signing-secrets"
	for _, c := range []struct {
		name string
		c    *provider.Client
		opts []provider.RequestOption
	}{
		{"v2026.07.00", b.c, []provider.RequestOption{provider.WithRequestVersion("v2026.07.00")}},
		{"no version", b.c, []provider.RequestOption{provider.WithRequestVersion("")}},
		{"client default none", b.client(t, provider.WithVersion(""), provider.WithRetryPolicy(provider.RetryPolicy{Sleep: b.sleeps.sleep})), nil},
	} {
		b.svc.ResetRequests()
		b.svc.InjectFailure(providertest.Failure{Route: route, Status: 503})
		_, resp, err := c.c.SigningSecrets.Create(ctx, c.opts...)
		if !errors.Is(err, provider.ErrServer) || resp.Attempts != 1 || len(b.svc.Requests()) != 1 {
			t.Fatalf("%s: %v, attempts %d", c.name, err, resp.Attempts)
		}
		if b.svc.Requests()[0].Header.Get("X-Idempotency-Key") == "" {
			t.Fatalf("%s: the key is still sent", c.name)
		}
	}
	// From v2026.10.00 the same failure is retried.
	b.svc.InjectFailure(providertest.Failure{Route: route, Status: 503})
	if _, resp, err := b.c.SigningSecrets.Create(ctx, provider.WithRequestVersion("v2026.11.00")); err != nil || resp.Attempts != 2 {
		t.Fatalf("v2026.11.00: %v %+v", err, resp)
	}
}

// testRetriesWritesWithoutAKeyAreNotRetried checks that writes without an idempotency key (limit-group
// create, token create, review resolve, member removal, provider update) get
// one attempt each on a 503.
func testRetriesWritesWithoutAKeyAreNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "alice")
	b.svc.ResetRequests()
	b.svc.InjectFailure(providertest.Failure{Status: 503, Times: 5})
	calls := []func() (*provider.Response, error){
		func() (*provider.Response, error) {
			_, r, err := b.c.LimitGroups.Create(ctx, &provider.LimitGroupCreateRequest{Name: "x"})
			return r, err
		},
		func() (*provider.Response, error) {
			_, r, err := b.c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "alice"})
			return r, err
		},
		func() (*provider.Response, error) {
			_, r, err := b.c.Reviews.Resolve(ctx, "r", &provider.ReviewResolution{Resolution: "approved"})
			return r, err
		},
		func() (*provider.Response, error) { return b.c.LimitGroups.RemoveMember(ctx, "g", "alice") },
		func() (*provider.Response, error) {
			_, r, err := b.c.Provider.Update(ctx, &provider.ProviderUpdateRequest{ShortName: "Acme"})
			return r, err
		},
	}
	for i, call := range calls {
		resp, err := call()
		if !errors.Is(err, provider.ErrServer) || resp.Attempts != 1 {
			t.Fatalf("call %d: %v attempts %d", i, err, resp.Attempts)
		}
	}
	if n := len(b.svc.Requests()); n != len(calls) {
		t.Fatalf("%d requests for %d calls", n, len(calls))
	}
}

// testRetriesClientErrorsAreNotRetried checks that a 409 ends the call with ErrConflict after one attempt.
func testRetriesClientErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.svc.InjectFailure(providertest.Failure{Route: listRoute, Status: 409})
	_, resp, err := b.c.LimitGroups.List(ctx, nil)
	wantIs(t, err, provider.ErrConflict)
	if resp.Attempts != 1 {
		t.Fatalf("attempts %d", resp.Attempts)
	}
}

// testRetriesContextEndsTheWait checks that cancelling the context during a 20s Retry-After wait ends
// the call with context.Canceled after one request.
func testRetriesContextEndsTheWait(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(503)
	}))
	defer ts.Close()
	c, _ := provider.NewClient(ts.URL, provider.WithProviderID("p"))
	cctx, cancel := context.WithCancel(context.Background())
	go func() {
		for hits.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, _, err := c.LimitGroups.List(cctx, nil)
	if !errors.Is(err, context.Canceled) || hits.Load() != 1 {
		t.Fatalf("err %v after %d hits", err, hits.Load())
	}
}
