package provider_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// basePath is where the fake is mounted, so every test also proves the
// client keeps a non-root base path.
const basePath = "/api/v1"

type bundle struct {
	c      *provider.Client
	svc    *providertest.Service
	clock  *providertest.ManualClock
	url    string
	sleeps *sleepLog
}

type sleepLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepLog) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func setup(t *testing.T, opts ...providertest.Option) bundle {
	t.Helper()
	clk := providertest.NewManualClock(t0)
	svc := providertest.NewService(append([]providertest.Option{providertest.WithClock(clk)}, opts...)...)
	mux := http.NewServeMux()
	mux.Handle(basePath+"/", http.StripPrefix(basePath, svc))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	sl := &sleepLog{}
	id, secret := svc.APIKey()
	c, err := provider.NewClient(ts.URL+basePath,
		provider.WithProviderID(svc.ProviderID()),
		provider.WithAPIKey(id, secret),
		provider.WithHTTPClient(ts.Client()),
		provider.WithUserAgent("adapter-test/1"),
		provider.WithRetryPolicy(provider.RetryPolicy{Sleep: sl.sleep}))
	if err != nil {
		t.Fatal(err)
	}
	return bundle{c: c, svc: svc, clock: clk, url: ts.URL + basePath, sleeps: sl}
}

// client returns another client of the same fake with other options.
func (b bundle) client(t *testing.T, opts ...provider.Option) *provider.Client {
	t.Helper()
	id, secret := b.svc.APIKey()
	c, err := provider.NewClient(b.url, append([]provider.Option{provider.WithProviderID(b.svc.ProviderID()),
		provider.WithAPIKey(id, secret), provider.WithRetryPolicy(provider.RetryPolicy{MaxAttempts: 1})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b bundle) last(t *testing.T, route string) providertest.RecordedRequest {
	t.Helper()
	r, ok := b.svc.LastRequest(route)
	if !ok {
		t.Fatalf("no request on %s", route)
	}
	return r
}

func newParticipant(ext string) *provider.ParticipantCreateRequest {
	return &provider.ParticipantCreateRequest{ExternalID: ext, GivenName: "Pat", FamilyName: "Payer",
		Address:      provider.Address{AddressLine1: "1 Main St", City: "Springfield", StateOrProvince: "IL", PostalCode: "62701", Country: "US"},
		PhoneNumbers: []string{"+15555550100"}}
}

func (b bundle) register(t *testing.T, ext string) *provider.Participant {
	t.Helper()
	p, _, err := b.c.Participants.Create(context.Background(), newParticipant(ext))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func wantIs(t *testing.T, err error, target error) *provider.Error {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
	var e *provider.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is no *provider.Error", err)
	}
	return e
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "sandbox.example", "ftp://x", "http://", "://"} {
		if _, err := provider.NewClient(bad); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
	if _, err := provider.NewClient("http://x", provider.WithHTTPClient(nil)); err == nil {
		t.Error("nil http client accepted")
	}
	c, err := provider.NewClient("https://sandbox.example/api/")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.LimitGroups.List(context.Background(), nil); !errors.Is(err, provider.ErrNoProviderID) {
		t.Fatalf("no provider ID: %v", err)
	}
}

func TestWire(t *testing.T) {
	t.Parallel()
	t.Run("HeadersOnEveryRequest", testWireHeadersOnEveryRequest)
	t.Run("IdempotencyKeyGeneratedOrGiven", testWireIdempotencyKeyGeneratedOrGiven)
	t.Run("PathIDsAreEscaped", testWirePathIDsAreEscaped)
	t.Run("LimitGroupUpdateBodyIsExact", testWireLimitGroupUpdateBodyIsExact)
	t.Run("OverrideBodyIsExact", testWireOverrideBodyIsExact)
	t.Run("BothSigningSecretBodies", testWireBothSigningSecretBodies)
}

// testWireHeadersOnEveryRequest checks the headers every request carries: Basic
// authorization with the API key, X-Service-Version (the client's, a call's
// own, or none with WithVersion("")), the User-Agent, and the provider's path.
func testWireHeadersOnEveryRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	if _, _, err := b.c.LimitGroups.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	r := b.last(t, "GET /providers/{providerID}/limit-groups")
	id, secret := b.svc.APIKey()
	if got, want := r.Header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)); got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
	if v := r.Header.Get("X-Service-Version"); v != "v2026.10.00" {
		t.Errorf("X-Service-Version %q", v)
	}
	if ua := r.Header.Get("User-Agent"); ua != "adapter-test/1" {
		t.Errorf("User-Agent %q", ua)
	}
	if r.Path != "/providers/local/limit-groups" {
		t.Errorf("path %q", r.Path)
	}
	if _, _, err := b.c.LimitGroups.List(ctx, nil, provider.WithRequestVersion("v2026.07.00")); err != nil {
		t.Fatal(err)
	}
	if v := b.last(t, "").Header.Get("X-Service-Version"); v != "v2026.07.00" {
		t.Errorf("per-call version %q", v)
	}
	c := b.client(t, provider.WithVersion(""))
	if _, _, err := c.LimitGroups.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, sent := b.last(t, "").Header["X-Service-Version"]; sent {
		t.Error("WithVersion(\"\") still sent a version")
	}
}

// testWireIdempotencyKeyGeneratedOrGiven checks that a participant create sends a
// generated UUID Idempotency-Key or the given one, and that a signing-secret
// create sends X-Idempotency-Key (given or generated) and no Idempotency-Key,
// each reported back in the response.
func testWireIdempotencyKeyGeneratedOrGiven(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	_, resp, err := b.c.Participants.Create(ctx, newParticipant("ik-1"))
	if err != nil {
		t.Fatal(err)
	}
	sent := b.last(t, "POST /providers/{providerID}/participants").Header.Get("Idempotency-Key")
	if _, err := uuid.Parse(sent); err != nil || sent != resp.IdempotencyKey {
		t.Fatalf("Idempotency-Key %q (response says %q)", sent, resp.IdempotencyKey)
	}
	key := uuid.NewString()
	if _, resp, err = b.c.Participants.Create(ctx, newParticipant("ik-2"), provider.WithIdempotencyKey(key)); err != nil {
		t.Fatal(err)
	}
	if got := b.last(t, "").Header.Get("Idempotency-Key"); got != key || resp.IdempotencyKey != key {
		t.Fatalf("given key: sent %q, response %q", got, resp.IdempotencyKey)
	}
	_, resp, err = b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rotation-2026-11"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.last(t, "").Header.Get("X-Idempotency-Key"); got != "rotation-2026-11" || resp.IdempotencyKey != got {
		t.Fatalf("X-Idempotency-Key %q", got)
	}
	if _, resp, err = b.c.SigningSecrets.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.last(t, "").Header.Get("X-Idempotency-Key"); uuid.Validate(got) != nil || resp.IdempotencyKey != got {
		t.Fatalf("generated X-Idempotency-Key %q", got)
	}
	if h := b.last(t, "").Header.Get("Idempotency-Key"); h != "" {
		t.Fatalf("secret create also sent Idempotency-Key %q", h)
	}
}

// testWirePathIDsAreEscaped checks that an external ID with a slash, a space and a
// question mark reaches the service as one path segment.
func testWirePathIDsAreEscaped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	ext := "team/a b?c"
	b.register(t, ext)
	p, _, err := b.c.Participants.Get(ctx, ext)
	if err != nil {
		t.Fatal(err)
	}
	if p.ExternalID != ext {
		t.Fatalf("got %+v", p)
	}
	if r := b.last(t, "GET /providers/{providerID}/participants/{participantID}"); r.Path != "/providers/local/participants/team/a b?c" {
		t.Fatalf("decoded path %q", r.Path)
	}
}

// testWireLimitGroupUpdateBodyIsExact checks the exact JSON of a limit-group create
// and of a patch that clears a description and a limit and sets another, and
// the group the patch returns.
func testWireLimitGroupUpdateBodyIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	g, _, err := b.c.LimitGroups.Create(ctx, &provider.LimitGroupCreateRequest{Name: "gold",
		Limits: provider.Limits{DailyAmount: ptr(provider.MustUSD("100")), WeeklyAmount: ptr(provider.MustUSD("200"))}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.last(t, "POST /providers/{providerID}/limit-groups").Body); got !=
		`{"name":"gold","dailyAmount":{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":"100.00"},"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":"200.00"}}` {
		t.Fatalf("create body %s", got)
	}
	g2, _, err := b.c.LimitGroups.Update(ctx, g.GroupID, &provider.LimitGroupUpdate{
		Description:       provider.Null[string](),
		LimitsUpdate:      provider.LimitsUpdate{DailyAmount: provider.Null[provider.Money](), DailySendCount: provider.Value[int64](3)},
		ExpectedVersionID: g.VersionID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.last(t, "PATCH /providers/{providerID}/limit-groups/{groupID}").Body); got !=
		`{"description":null,"dailyAmount":null,"dailySendCount":3,"expectedVersionID":"`+g.VersionID+`"}` {
		t.Fatalf("patch body %s", got)
	}
	if g2.DailyAmount != nil || g2.WeeklyAmount == nil || !g2.WeeklyAmount.Value.Equal(provider.MustUSD("200").Value) ||
		*g2.DailySendCount != 3 || g2.VersionID == g.VersionID {
		t.Fatalf("after patch: %+v", g2)
	}
}

// testWireOverrideBodyIsExact checks the exact JSON of override puts: a set amount
// with a cleared expiry, a cleared amount with an expiry, reason and
// reference, and an empty update that sends only the expected version.
func testWireOverrideBodyIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "p1")
	o, _, err := b.c.Limits.PutOverride(ctx, "p1", &provider.OverrideUpdate{
		LimitsUpdate: provider.LimitsUpdate{MonthlyAmount: provider.Value(provider.MustUSD("12.5"))},
		ExpiresOn:    provider.Null[time.Time](),
	})
	if err != nil {
		t.Fatal(err)
	}
	route := "PUT /providers/{providerID}/participants/{participantID}/limits"
	if got := string(b.last(t, route).Body); got !=
		`{"monthlyAmount":{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":"12.50"},"expiresOn":null}` {
		t.Fatalf("first put %s", got)
	}
	exp := t0.Add(time.Hour)
	o2, _, err := b.c.Limits.PutOverride(ctx, "p1", &provider.OverrideUpdate{
		LimitsUpdate: provider.LimitsUpdate{MonthlyAmount: provider.Null[provider.Money]()},
		ExpiresOn:    provider.Value(exp), Reason: "vip", Reference: "T-9", ExpectedVersionID: o.VersionID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.last(t, route).Body); got !=
		`{"monthlyAmount":null,"expiresOn":"2026-11-02T10:00:00Z","reason":"vip","reference":"T-9","expectedVersionID":"`+o.VersionID+`"}` {
		t.Fatalf("second put %s", got)
	}
	if o2.MonthlyAmount != nil || o2.ExpiresOn == nil || !o2.ExpiresOn.Equal(exp) || o2.Reason != "vip" {
		t.Fatalf("override %+v", o2)
	}
	// An empty update sends an empty object: nothing changes.
	if _, _, err := b.c.Limits.PutOverride(ctx, "p1", &provider.OverrideUpdate{ExpectedVersionID: o2.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got := string(b.last(t, route).Body); got != `{"expectedVersionID":"`+o2.VersionID+`"}` {
		t.Fatalf("empty put %s", got)
	}
}

// testWireBothSigningSecretBodies checks that a signing secret is read from both the
// v2026.10.00 and the v2026.07.00 bodies as a 32-byte key, and that the
// service holds both.
func testWireBothSigningSecretBodies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	for _, v := range []string{"v2026.10.00", "v2026.07.00"} {
		sec, _, err := b.c.SigningSecrets.Create(ctx, provider.WithRequestVersion(v))
		if err != nil {
			t.Fatal(v, err)
		}
		key, err := sec.Key()
		if err != nil || len(key) != 32 || sec.SecretID == "" || sec.RevokedOn != nil || !sec.CreatedOn.Equal(t0) {
			t.Fatalf("%s: %+v %v", v, sec, err)
		}
	}
	secrets, _ := b.svc.SigningSecrets("local")
	if len(secrets) != 2 {
		t.Fatalf("fake has %d secrets", len(secrets))
	}
}

func ptr[T any](v T) *T { return &v }

func TestUnshownBodiesAreReadTolerantly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/participants/p1"):
			_, _ = w.Write([]byte(`{"participant":{"participantID":"par_1","status":"active","tier":"gold"},"links":{}}`))
		case strings.HasSuffix(r.URL.Path, "/resolutions"):
			w.WriteHeader(http.StatusNoContent)
		case strings.HasSuffix(r.URL.Path, "/limit-groups"):
			_, _ = w.Write([]byte(`{"groups":[{"groupID":"g1","name":"n","currency":"USD","versionID":"v","createdOn":"2026-11-02T09:00:00Z","colour":"red"}],"hasMore":true,"nextCursor":"c1","total":7}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	c, _ := provider.NewClient(ts.URL, provider.WithProviderID("x"), provider.WithRetryPolicy(provider.RetryPolicy{MaxAttempts: 1}))
	p, _, err := c.Participants.Get(ctx, "p1")
	if err != nil || p.ParticipantID != "par_1" || p.Status != "active" {
		t.Fatalf("nested participant: %+v %v", p, err)
	}
	rv, _, err := c.Reviews.Resolve(ctx, "rev_1", &provider.ReviewResolution{Resolution: provider.ReviewApproved})
	if err != nil || rv.ReviewID != "rev_1" || rv.Status != provider.ReviewApproved {
		t.Fatalf("bodiless resolve: %+v %v", rv, err)
	}
	groups, resp, err := c.LimitGroups.List(ctx, nil)
	if err != nil || len(groups) != 1 || !resp.HasMore || resp.NextCursor != "c1" {
		t.Fatalf("list: %v %+v %v", groups, resp, err)
	}
	// hasMore without a new cursor would loop: the iterator stops with an error.
	n := 0
	for g, err := range c.LimitGroups.ListIter(ctx, &provider.ListOptions{Cursor: "c1"}) {
		if err != nil {
			if n != 1 {
				t.Fatalf("error after %d items: %v", n, err)
			}
			return
		}
		_ = g
		n++
	}
	t.Fatal("iterator looped without an error")
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)

	t.Run("ProblemDecoded", func(t *testing.T) {
		_, _, err := b.c.LimitGroups.Create(ctx, &provider.LimitGroupCreateRequest{})
		e := wantIs(t, err, provider.ErrValidation)
		if e.Status != 422 || !strings.HasSuffix(e.Type, "#validation-failed") || e.Title == "" || e.Detail == "" {
			t.Fatalf("problem %+v", e)
		}
		if fe, ok := e.FieldError("/name"); !ok || fe.Detail == "" {
			t.Fatalf("field errors %+v", e.Errors)
		}
		if !strings.Contains(e.Error(), "422") || !strings.Contains(e.Error(), "/name") {
			t.Fatalf("message %q", e.Error())
		}
	})
	t.Run("BodilessStatusesAreTyped", func(t *testing.T) {
		_, _, err := b.c.Participants.Get(ctx, "nobody")
		if e := wantIs(t, err, provider.ErrNotFound); e.Status != 404 || len(e.Body) != 0 {
			t.Fatalf("%+v", e)
		}
		bad := b.client(t, provider.WithAPIKey("test-key", "wrong"))
		_, _, err = bad.LimitGroups.List(ctx, nil)
		wantIs(t, err, provider.ErrUnauthorized)
		other, _ := provider.NewClient(b.url, provider.WithProviderID("someone-else"), provider.WithAPIKey(b.svc.APIKey()))
		_, _, err = other.LimitGroups.List(ctx, nil)
		wantIs(t, err, provider.ErrForbidden)
	})
	t.Run("SentinelsAreExclusive", func(t *testing.T) {
		e := &provider.Error{Status: 409, Code: provider.CodeVersionConflict}
		if !errors.Is(e, provider.ErrConflict) || !errors.Is(e, provider.ErrVersionConflict) ||
			errors.Is(e, provider.ErrIdempotencyKeyReused) || errors.Is(e, provider.ErrNotFound) {
			t.Fatal("409 version_conflict matches the wrong sentinels")
		}
		if errors.Is(&provider.Error{Status: 400, Code: provider.CodeVersionConflict}, provider.ErrVersionConflict) {
			t.Fatal("a code on a non-409 matched")
		}
		if !errors.Is(&provider.Error{Status: 502}, provider.ErrServer) || !errors.Is(&provider.Error{Status: 429}, provider.ErrRateLimited) {
			t.Fatal("status sentinels")
		}
	})
	t.Run("CheckResponse", func(t *testing.T) {
		resp := &http.Response{StatusCode: 409, Body: http.NoBody, Header: http.Header{}}
		resp.Body = ioNopCloser(`{"type":"t","title":"x","status":409,"code":"idempotency-request-in-progress"}`)
		wantIs(t, provider.CheckResponse(resp), provider.ErrIdempotencyRequestInProgress)
		if err := provider.CheckResponse(&http.Response{StatusCode: 204, Body: http.NoBody}); err != nil {
			t.Fatal(err)
		}
		resp = &http.Response{StatusCode: 503, Body: ioNopCloser(`<html>busy</html>`)}
		if e := wantIs(t, provider.CheckResponse(resp), provider.ErrServer); e.Status != 503 || string(e.Body) != "<html>busy</html>" {
			t.Fatalf("%+v", e)
		}
	})
}

func TestTriStateRoundTrip(t *testing.T) {
	t.Parallel()
	type doc struct {
		F provider.Field[provider.Money] `json:"f,omitempty"`
	}
	for _, tc := range []struct {
		name string
		in   doc
		wire string
		test func(provider.Field[provider.Money]) bool
	}{
		{"Absent", doc{}, `{}`, func(f provider.Field[provider.Money]) bool { return !f.IsSpecified() }},
		{"Null", doc{F: provider.Null[provider.Money]()}, `{"f":null}`, func(f provider.Field[provider.Money]) bool { return f.IsNull() }},
		{"Value", doc{F: provider.Value(provider.MustUSD("1.5"))},
			`{"f":{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":"1.50"}}`,
			func(f provider.Field[provider.Money]) bool {
				m, err := f.Get()
				return err == nil && m.Value.String() == "1.5" && m.Currency.Code == "USD"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.in)
			if err != nil || string(b) != tc.wire {
				t.Fatalf("marshal %s %v, want %s", b, err, tc.wire)
			}
			var back doc
			if err := json.Unmarshal(b, &back); err != nil || !tc.test(back.F) {
				t.Fatalf("round trip lost the state: %v %v", back.F, err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tc.wire {
				t.Fatalf("second marshal %s", again)
			}
		})
	}
}

func TestMoney(t *testing.T) {
	t.Parallel()
	var m provider.Money
	if err := json.Unmarshal([]byte(`{"currency":{"code":"JPY","decimalPlaces":0},"value":"1500"}`), &m); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(m); string(b) != `{"currency":{"code":"JPY","decimalPlaces":0},"value":"1500"}` {
		t.Fatalf("JPY %s", b)
	}
	if m.String() != "1500 JPY" {
		t.Fatalf("String %q", m.String())
	}
	for _, bad := range []string{`{"currency":{"code":"USD","decimalPlaces":2},"value":12.5}`,
		`{"currency":{"code":"USD","decimalPlaces":2},"value":"12,5"}`,
		// more places than the currency has: refused, never rounded
		`{"currency":{"code":"USD","decimalPlaces":2},"value":"10.005"}`,
		`{"currency":{"code":"JPY","decimalPlaces":0},"value":"1500.5"}`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if _, err := provider.USD("ten"); err == nil {
		t.Error("USD accepted ten")
	}
	// More places than the currency has is refused, never rounded.
	twelveFifty, _ := provider.USD("12.5")
	for _, bad := range []provider.Money{provider.MustUSD("10.005"), {Value: twelveFifty.Value},
		{Currency: provider.Currency{Code: "JPY"}, Value: twelveFifty.Value}} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("%v marshalled as %s", bad.Value, b)
		}
	}
	if _, err := json.Marshal(provider.LimitsUpdate{DailyAmount: provider.Value(provider.MustUSD("0.001"))}); err == nil {
		t.Error("an update carrying a sub-cent limit was encoded")
	}
	if b, err := json.Marshal(provider.MustUSD("7.1")); err != nil || !strings.Contains(string(b), `"value":"7.10"`) {
		t.Errorf("7.1 USD: %s %v", b, err)
	}
}

func TestUSDCurrencyCannotBeChangedByACaller(t *testing.T) {
	t.Parallel()
	c := provider.USDCurrency()
	c.Code, c.DecimalPlaces = "EUR", 0
	if got := provider.USDCurrency(); got != (provider.Currency{Code: "USD", DecimalPlaces: 2, NumericCode: "840"}) {
		t.Fatalf("USDCurrency after a caller changed its copy: %+v", got)
	}
	m, err := provider.USD("12.50")
	if err != nil || m.String() != "12.50 USD" {
		t.Fatalf("USD after a caller changed its copy: %v %v", m, err)
	}
	// The fake answers limit records in the same currency the client sends.
	ctx := context.Background()
	srv := providertest.NewServer()
	defer srv.Close()
	id, secret := srv.APIKey()
	cl, _ := provider.NewClient(srv.URL, provider.WithProviderID(srv.ProviderID()), provider.WithAPIKey(id, secret))
	g, _, err := cl.LimitGroups.Create(ctx, &provider.LimitGroupCreateRequest{Name: "gold", Limits: provider.Limits{DailyAmount: new(provider.MustUSD("100"))}})
	if err != nil || g.Currency != provider.USDCurrency().Code {
		t.Fatalf("limit group currency: %+v %v", g, err)
	}
}
