package providertest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/provider/providertest"
)

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

type bundle struct {
	srv   *providertest.Server
	clock *providertest.ManualClock
}

func setup(t *testing.T, opts ...providertest.Option) bundle {
	t.Helper()
	clk := providertest.NewManualClock(t0)
	srv := providertest.NewServer(append([]providertest.Option{providertest.WithClock(clk)}, opts...)...)
	t.Cleanup(srv.Close)
	return bundle{srv: srv, clock: clk}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (b bundle) do(t *testing.T, method, path, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	id, secret := b.srv.APIKey()
	req.SetBasicAuth(id, secret)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(raw)}
}

func (a answer) want(t *testing.T, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	return a
}

// as decodes the answer's body as a T: one of the fake's types, or a body
// wrapping them.
func as[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("%v: %s", err, a.body)
	}
	return v
}

// The bodies the tests read, wrapping the fake's types.
type (
	groupBody struct {
		Group providertest.LimitGroup `json:"group"`
	}
	overrideBody struct {
		Override providertest.Override `json:"override"`
	}
	problemBody struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Status int    `json:"status"`
	}
	paymentsPage struct {
		Payments   []providertest.Payment `json:"payments"`
		HasMore    bool                   `json:"hasMore"`
		NextCursor string                 `json:"nextCursor"`
	}
)

const uuid1 = "6f1c8a52-8a3e-4a59-9a43-5b1f2f6f0d11"

func participantJSON(ext string) string {
	return fmt.Sprintf(`{"externalID":%q,"givenName":"A","familyName":"B","address":{"addressLine1":"1 Main",`+
		`"city":"C","stateOrProvince":"IL","postalCode":"1","country":"US"},"phoneNumbers":[]}`, ext)
}

func (b bundle) register(t *testing.T, ext string) string {
	t.Helper()
	a := b.do(t, "POST", "/providers/local/participants", participantJSON(ext)).want(t, 201)
	return as[providertest.Participant](t, a).ParticipantID
}

func TestServiceSignupCheckLandsAfterItsDelayOnTheClock(t *testing.T) {
	t.Parallel()
	b := setup(t, providertest.WithSignupCheck(providertest.SandboxSignupCheck(time.Second)))
	b.register(t, "alice")
	b.register(t, "deny-bob")
	status := func(ext string) string {
		return as[providertest.Participant](t, b.do(t, "GET", "/providers/local/participants/"+ext, "").want(t, 200)).Status
	}
	if status("alice") != "pending" || status("deny-bob") != "pending" {
		t.Fatal("not pending before the delay")
	}
	b.do(t, "POST", "/provider-participant-token", `{"externalID":"alice"}`).want(t, 403)
	b.clock.Advance(time.Second)
	if status("alice") != "active" || status("deny-bob") != "denied" {
		t.Fatalf("after the delay: %v, %v", status("alice"), status("deny-bob"))
	}
	b.do(t, "POST", "/provider-participant-token", `{"externalID":"alice","clientType":"service"}`).want(t, 200)
	toks := b.srv.Tokens()
	if len(toks) != 1 || toks[0].ExternalID != "alice" || toks[0].ClientType != "service" ||
		!toks[0].ExpiresOn.Equal(t0.Add(time.Second+time.Hour)) {
		t.Fatalf("tokens: %+v", toks)
	}
}

func TestServiceParticipantIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.do(t, "POST", "/providers/local/participants", participantJSON("carol"), "Idempotency-Key", uuid1).want(t, 201)
	again := b.do(t, "POST", "/providers/local/participants", participantJSON("carol"), "Idempotency-Key", uuid1).want(t, 201)
	if as[providertest.Participant](t, first).ParticipantID != as[providertest.Participant](t, again).ParticipantID {
		t.Fatalf("replay: %s vs %s", first.body, again.body)
	}
	b.do(t, "POST", "/providers/local/participants", participantJSON("dave"), "Idempotency-Key", uuid1).want(t, 400)
	b.do(t, "POST", "/providers/local/participants", participantJSON("erin"), "Idempotency-Key", "not-a-uuid").want(t, 400)
	b.do(t, "POST", "/providers/local/participants", participantJSON("carol"), "Idempotency-Key", "").want(t, 409)
}

func TestServiceProblemsAlwaysCarryDetail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.do(t, "POST", "/providers/local/limit-groups", `{"name":"`+strings.Repeat("x", 1<<20)+`"}`).want(t, 400)
	p := as[problemBody](t, a)
	if a.header.Get("Content-Type") != "application/problem+json" || p.Detail == "" || p.Title == "" ||
		p.Type == "" || p.Status != 400 {
		t.Fatalf("oversized body: %v %s", a.header, a.body)
	}
}

func TestServiceOverrideVersionClaims(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.register(t, "p1")
	b.do(t, "PUT", "/providers/local/participants/p1/limits", `{"dailySendCount":1,"expectedVersionID":"ver_x"}`).want(t, 409)
	v1 := as[overrideBody](t, b.do(t, "PUT", "/providers/local/participants/p1/limits", `{"dailySendCount":1,"weeklyAmount":`+
		`{"currency":{"code":"USD","decimalPlaces":2},"value":"70.00"}}`).want(t, 200)).Override.VersionID
	// Only a stale expectedVersionID conflicts; omitting it on a later
	// write sets no precondition (the spec's 409 is "on stale version"),
	// and absent fields still stay.
	o := b.do(t, "PUT", "/providers/local/participants/p1/limits", `{"dailySendCount":2}`).want(t, 200)
	if ov := as[overrideBody](t, o).Override; ov.DailySendCount == nil || *ov.DailySendCount != 2 ||
		ov.WeeklyAmount == nil || !ov.WeeklyAmount.Value.Equal(decimal.NewFromInt(70)) {
		t.Fatalf("update without expectedVersionID: %s", o.body)
	}
	b.do(t, "PUT", "/providers/local/participants/p1/limits", `{"dailySendCount":3,"expectedVersionID":"`+v1+`"}`).want(t, 409)
	b.do(t, "DELETE", "/providers/local/participants/p1/limits", "").want(t, 204)
	b.do(t, "DELETE", "/providers/local/participants/p1/limits", "").want(t, 204)
	if _, ok, _ := b.srv.Override("local", "p1"); ok {
		t.Fatal("override survived delete")
	}
}

func TestServiceResolutionOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, providertest.WithPlatformMaximum(providertest.Limits{MonthlyAmount: providertest.USDPtr("5000.00"), DailySendCount: providertest.Count(50)}))
	b.register(t, "p1")
	eff := func() providertest.Limits {
		l, err := b.srv.EffectiveLimits("local", "p1")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	val := func(m *providertest.Money) string {
		if m == nil {
			return "-"
		}
		return m.Value.StringFixed(2)
	}
	check := func(step string, per, daily, weekly, monthly string, count int64) {
		t.Helper()
		l := eff()
		c := int64(-1)
		if l.DailySendCount != nil {
			c = *l.DailySendCount
		}
		got := fmt.Sprint(val(l.PerTransactionAmount), val(l.DailyAmount), val(l.WeeklyAmount), val(l.MonthlyAmount), c)
		if want := fmt.Sprint(per, daily, weekly, monthly, count); got != want {
			t.Fatalf("%s: effective %s, want %s", step, got, want)
		}
	}
	check("platform maximum only", "-", "-", "-", "5000.00", 50)
	if _, err := b.srv.SetPolicy("local", providertest.Limits{PerTransactionAmount: providertest.USDPtr("100.00"),
		DailyAmount: providertest.USDPtr("500.00"), MonthlyAmount: providertest.USDPtr("9000.00"), DailySendCount: providertest.Count(100)}); err != nil {
		t.Fatal(err)
	}
	check("provider default, clamped", "100.00", "500.00", "-", "5000.00", 50)
	g1 := as[groupBody](t, b.do(t, "POST", "/providers/local/limit-groups", `{"name":"g1","dailyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"800.00"},"dailySendCount":10}`).want(t, 201)).Group.GroupID
	g2 := as[groupBody](t, b.do(t, "POST", "/providers/local/limit-groups", `{"name":"g2","dailyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"700.00"},"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"900.00"}}`).want(t, 201)).Group.GroupID
	check("not a member yet", "100.00", "500.00", "-", "5000.00", 50)
	b.do(t, "PUT", "/providers/local/limit-groups/"+g1+"/members/p1", "").want(t, 200)
	b.do(t, "PUT", "/providers/local/limit-groups/"+g2+"/members/p1", "").want(t, 200)
	check("groups beat the default; the tightest group wins", "100.00", "700.00", "900.00", "5000.00", 10)
	b.do(t, "PUT", "/providers/local/participants/p1/limits", `{"dailyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"2000.00"},"monthlyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"7000.00"},"expiresOn":"`+t0.Add(2*time.Hour).Format(time.RFC3339)+`"}`).want(t, 200)
	check("the override beats groups; the maximum clamps it", "100.00", "2000.00", "900.00", "5000.00", 10)
	b.clock.Advance(2 * time.Hour)
	check("an expired override no longer applies", "100.00", "700.00", "900.00", "5000.00", 10)
	if err := b.srv.DisableLimitGroup("local", g2); err != nil {
		t.Fatal(err)
	}
	check("a disabled group no longer applies", "100.00", "800.00", "-", "5000.00", 10)
}

func TestServiceFundingSourceOfAnotherParticipantIsConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.register(t, "p1")
	b.register(t, "p2")
	body := `{"fundingType":"card","providerSourceID":"tok_1","displayName":"Visa"}`
	b.do(t, "POST", "/providers/local/participants/p1/funding-sources", body).want(t, 201)
	b.do(t, "POST", "/providers/local/participants/p2/funding-sources", body).want(t, 409)
}

func TestServiceSigningSecretVersions(t *testing.T) {
	t.Parallel()
	b := setup(t, providertest.WithDefaultVersion("v2026.07.00"))
	// Before v2026.10.00 the key is optional and the body is flat.
	a := b.do(t, "POST", "/providers/local/signing-secrets", "").want(t, 201)
	if a.header.Get("X-Idempotency-Key") != "" || as[providertest.SigningSecret](t, a).Secret == "" {
		t.Fatalf("old-version create: %v %s", a.header, a.body)
	}
	b.do(t, "POST", "/providers/local/signing-secrets", "", "X-Service-Version", "v2026.10.00").want(t, 400)
	b.do(t, "POST", "/providers/local/signing-secrets", "", "X-Service-Version", "v2026.10.00", "X-Idempotency-Key", "bad key").want(t, 400)
	n := b.do(t, "POST", "/providers/local/signing-secrets", "", "X-Service-Version", "v2027.01.00", "X-Idempotency-Key", "k1").want(t, 201)
	if as[struct {
		SigningSecret providertest.SigningSecret `json:"signingSecret"`
	}](t, n).SigningSecret.Secret == "" {
		t.Fatalf("later version not nested: %s", n.body)
	}
	secrets, _ := b.srv.SigningSecrets("local")
	if len(secrets) != 2 {
		t.Fatalf("secrets: %+v", secrets)
	}
	if err := b.srv.RevokeSigningSecret("local", secrets[0].SecretID); err != nil {
		t.Fatal(err)
	}
	list := as[struct {
		SigningSecrets []providertest.SigningSecret `json:"signingSecrets"`
	}](t, b.do(t, "GET", "/providers/local/signing-secrets", "").want(t, 200)).SigningSecrets
	if len(list) != 1 || list[0].SecretID != secrets[1].SecretID {
		t.Fatalf("revoked secret listed: %v", list)
	}
}

func TestServiceInjectedFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	route := "GET /providers/{providerID}/limit-groups"
	b.srv.InjectFailure(providertest.Failure{Route: route, Status: 429, RetryAfter: "7", Times: 2})
	for range 2 {
		a := b.do(t, "GET", "/providers/local/limit-groups", "").want(t, 429)
		if a.header.Get("Retry-After") != "7" {
			t.Fatalf("Retry-After: %v", a.header)
		}
	}
	b.do(t, "GET", "/providers/local/limit-groups", "").want(t, 200)
	b.srv.InjectFailure(providertest.Failure{Disconnect: true})
	// A POST, so the transport does not silently retry it on a fresh connection.
	req, _ := http.NewRequest("POST", b.srv.URL+"/providers/local/limit-groups", strings.NewReader(`{"name":"x"}`))
	if resp, err := b.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("disconnect answered %d", resp.StatusCode)
	}
	if got := len(b.srv.Requests()); got != 4 {
		t.Fatalf("recorded %d requests", got)
	}
	last, _ := b.srv.LastRequest(route)
	if last.Method != "GET" || last.Path != "/providers/local/limit-groups" || last.Header.Get("Authorization") == "" {
		t.Fatalf("last request: %+v", last)
	}
}

func TestServiceReleaseHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []providertest.Release
	b := setup(t, providertest.WithReleaseHook(func(r providertest.Release) { mu.Lock(); got = append(got, r); mu.Unlock() }))
	b.register(t, "p1")
	p, err := b.srv.SeedPayout("local", providertest.Payout{SenderExternalID: "p1", Amount: providertest.USD("9.00")})
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := b.srv.SeedReview("local", p.PayoutID, "velocity")
	b.do(t, "POST", "/providers/local/reviews/"+rv.ReviewID+"/resolutions", `{"resolution":"rejected"}`).want(t, 200)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].PayoutID != p.PayoutID || got[0].Reason != "review_rejected" || !got[0].At.Equal(t0) {
		t.Fatalf("releases: %+v", got)
	}
}

func TestServiceConcurrentRegistrationsOfOneExternalID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var wg sync.WaitGroup
	codes := make(chan int, 16)
	for range 16 {
		wg.Go(func() {
			codes <- b.do(t, "POST", "/providers/local/participants", participantJSON("race")).status
		})
	}
	wg.Wait()
	close(codes)
	created := 0
	for c := range codes {
		if c == 201 {
			created++
		} else if c != 409 {
			t.Fatalf("status %d", c)
		}
	}
	if created != 1 {
		t.Fatalf("%d registrations won", created)
	}
}

func TestServiceSeedingAndInspection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.register(t, "p1")
	if p, err := b.srv.Participant("local", pid); err != nil || p.ExternalID != "p1" || p.GivenName != "A" || p.Status != "active" || !p.CreatedOn.Equal(t0) {
		t.Fatalf("participant %+v %v", p, err)
	}
	if _, err := b.srv.Participant("nowhere", "p1"); err == nil {
		t.Fatal("unknown provider accepted")
	}
	if err := b.srv.SetParticipantStatus("local", "p1", "asleep"); err == nil {
		t.Fatal("unknown status accepted")
	}
	gid := as[groupBody](t, b.do(t, "POST", "/providers/local/limit-groups", `{"name":"g","currency":"USD"}`).want(t, 201)).Group.GroupID
	b.do(t, "PUT", "/providers/local/limit-groups/"+gid+"/members/p1", "").want(t, 200)
	if g, ms, err := b.srv.LimitGroup("local", gid); err != nil || g.Name != "g" || len(ms) != 1 || ms[0].ParticipantID != pid {
		t.Fatalf("group %+v %+v %v", g, ms, err)
	}
	b.do(t, "POST", "/providers/local/limit-groups", `{"name":"g","currency":"EUR"}`).want(t, 422)
	po, _ := b.srv.SeedPayout("local", providertest.Payout{SenderExternalID: "p1", Amount: providertest.USD("5.00"), Status: providertest.PayoutAccepted})
	if _, err := b.srv.SeedPayout("local", providertest.Payout{PayoutID: po.PayoutID, SenderExternalID: "p1"}); err == nil {
		t.Fatal("duplicate payout accepted")
	}
	if _, err := b.srv.SeedPayout("local", providertest.Payout{SenderExternalID: "nobody"}); err == nil {
		t.Fatal("payout of an unknown sender accepted")
	}
	if err := b.srv.SetPayoutStatus("local", po.PayoutID, providertest.PayoutCompleted); err != nil {
		t.Fatal(err)
	}
	rv, _ := b.srv.SeedReview("local", po.PayoutID, "manual")
	if got, err := b.srv.Review("local", rv.ReviewID); err != nil || got.Payout.Status != providertest.PayoutCompleted || got.Reason != "manual" {
		t.Fatalf("review %+v %v", got, err)
	}
	// Requests for payment and received payments come from SeedPayment;
	// the list merges them with sent payouts, newest first.
	b.clock.Set(t0.Add(time.Hour))
	if err := b.srv.SeedPayment("local", "p1", providertest.Payment{ID: "req_1", Type: "request", Direction: "received",
		Status: "paid", Amount: providertest.USD("3.00")}); err != nil {
		t.Fatal(err)
	}
	items := as[paymentsPage](t, b.do(t, "GET", "/providers/local/participants/p1/payments", "").want(t, 200)).Payments
	if len(items) != 2 || items[0].ID != "req_1" || items[1].ID != po.PayoutID {
		t.Fatalf("payments %v", items)
	}
	fid := as[providertest.FundingSource](t, b.do(t, "POST", "/providers/local/participants/p1/funding-sources", `{"fundingType":"bank_account","providerSourceID":"acct","displayName":"Checking"}`).want(t, 201)).FundingSourceID
	if fs, err := b.srv.FundingSource("local", fid); err != nil || fs.ParticipantID != pid || fs.FundingType != "bank_account" {
		t.Fatalf("funding source %+v %v", fs, err)
	}
}

func TestServicePaymentsListsPageTheirOwnItemsAndStayCurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.register(t, "p1")
	b.register(t, "p2")
	for i := range 150 {
		for _, who := range []string{"p1", "p2"} {
			if _, err := b.srv.SeedPayout("local", providertest.Payout{PayoutID: fmt.Sprintf("%s-%03d", who, i), SenderExternalID: who,
				Amount: providertest.USD("1.00"), Status: providertest.PayoutAuthorized, CreatedOn: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := func() []string {
		t.Helper()
		var out []string
		path := "/providers/local/participants/p1/payments?limit=100"
		for {
			page := as[paymentsPage](t, b.do(t, "GET", path, "").want(t, 200))
			for _, p := range page.Payments {
				out = append(out, p.ID+" "+p.Status)
			}
			if !page.HasMore {
				return out
			}
			path = "/providers/local/participants/p1/payments?limit=100&cursor=" + page.NextCursor
		}
	}
	got := ids()
	if len(got) != 150 || got[0] != "p1-149 authorized" || got[149] != "p1-000 authorized" {
		t.Fatalf("first listing: %d items, %q … %q", len(got), got[0], got[len(got)-1])
	}
	if err := b.srv.SetPayoutStatus("local", "p1-000", providertest.PayoutCompleted); err != nil {
		t.Fatal(err)
	}
	if _, err := b.srv.SeedPayout("local", providertest.Payout{PayoutID: "p1-new", SenderExternalID: "p1",
		Amount: providertest.USD("1.00"), Status: providertest.PayoutAccepted, CreatedOn: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	got = ids()
	if len(got) != 151 || got[0] != "p1-new accepted" || got[150] != "p1-000 completed" {
		t.Fatalf("after a seed and a status change: %d items, %q … %q", len(got), got[0], got[len(got)-1])
	}
}

func TestServiceUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.do(t, "GET", "/nowhere", "").want(t, 404)
	b.do(t, "DELETE", "/providers/local/limit-groups", "").want(t, 405)
}
