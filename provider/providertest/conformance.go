package providertest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider"
)

// Target is an implementation of the provider API to run RunConformance
// against: the fake (Server.Target) or a real sandbox.
type Target struct {
	BaseURL      string
	ProviderID   string
	APIKeyID     string
	APIKeySecret string
	// Version, when set, is sent as X-Service-Version on every request that
	// does not test the header itself.
	Version    string
	HTTPClient *http.Client
	// SignupWait bounds how long a scenario polls for the signup check to
	// land when Hooks.SetParticipantStatus is nil (default 30s).
	SignupWait time.Duration
	Hooks      Hooks
}

// Hooks do what the public API cannot. A scenario that needs a nil hook is
// skipped, so a real sandbox runs the subset its credentials allow.
type Hooks struct {
	// Now is the target's clock (default time.Now).
	Now func() time.Time
	// Advance moves the target's clock forward.
	Advance func(d time.Duration)
	// SetParticipantStatus forces a participant's status (pending, active,
	// denied, disabled); disabled is the operator's disabling call.
	SetParticipantStatus func(externalID, status string) error
	// DenyPrefix says the signup check denies externalIDs starting "deny-".
	DenyPrefix bool
	// NoScopeKey returns credentials of this provider lacking transfers.write.
	NoScopeKey func() (id, secret string, err error)
	// OtherProvider returns another provider account and its credentials.
	OtherProvider func() (providerID, keyID, secret string, err error)
	// ParticipantLogin returns Basic credentials of a participant login.
	ParticipantLogin func(externalID string) (user, pass string, err error)
	// SetPolicy sets the provider default limit policy.
	SetPolicy func(l Limits) error
	// SeedPayout records a payout from senderExternalID in status.
	SeedPayout func(senderExternalID, amount, status string) (payoutID string, err error)
	// SeedReview puts a payout into manual review.
	SeedReview func(payoutID string) (reviewID string, err error)
	// PayoutStatus reads a payout's status.
	PayoutStatus func(payoutID string) (string, error)
	// Released reports whether a release callback was sent for the payout.
	Released func(payoutID string) bool
	// RemoveFundingSource removes a funding source.
	RemoveFundingSource func(fundingSourceID string) error
	// GateSecretCreates holds signing-secret creates until open is called;
	// entered delivers each held request's key.
	GateSecretCreates func() (entered <-chan string, open func())
}

func (s *Service) hooks() Hooks {
	pid := s.ProviderID()
	return Hooks{
		Now: s.Now,
		Advance: func(d time.Duration) {
			if mc, ok := s.cfg.clock.(*ManualClock); ok {
				mc.Advance(d)
			}
		},
		SetParticipantStatus: func(ext, st string) error { return s.SetParticipantStatus(pid, ext, st) },
		DenyPrefix:           true,
		NoScopeKey: func() (string, string, error) {
			k := APIKey{ID: "noscope-" + randomString(6), Secret: randomString(12), ProviderID: pid}
			s.AddAPIKey(k)
			return k.ID, k.Secret, nil
		},
		OtherProvider: func() (string, string, string, error) {
			other := "other-" + randomString(6)
			k := APIKey{ID: "key-" + other, Secret: randomString(12), ProviderID: other,
				Scopes: []string{TransfersWriteScope(other)}}
			s.AddAPIKey(k)
			return other, k.ID, k.Secret, nil
		},
		ParticipantLogin: func(ext string) (string, string, error) { return s.ParticipantLogin(pid, ext) },
		SetPolicy:        func(l Limits) error { _, err := s.SetPolicy(pid, l); return err },
		SeedPayout: func(sender, amount, status string) (string, error) {
			p, err := s.SeedPayout(pid, Payout{SenderExternalID: sender, Amount: USD(amount), Status: status,
				RecipientName: "Rita Recipient"})
			return p.PayoutID, err
		},
		SeedReview: func(payoutID string) (string, error) {
			rv, err := s.SeedReview(pid, payoutID, "velocity")
			return rv.ReviewID, err
		},
		PayoutStatus: func(id string) (string, error) { p, err := s.Payout(pid, id); return p.Status, err },
		Released: func(id string) bool {
			return slices.ContainsFunc(s.Releases(), func(r Release) bool { return r.PayoutID == id })
		},
		RemoveFundingSource: func(id string) error { return s.RemoveFundingSource(pid, id) },
		GateSecretCreates: func() (<-chan string, func()) {
			g := s.GateSigningSecretCreates()
			return g.Entered(), g.Open
		},
	}
}

// RunConformance runs the provider-API scenarios against tg: every rule of
// the spec the fake implements, checked with raw HTTP requests. Run it against
// the fake (Server.Target) in CI and against a real sandbox when credentials
// are given. Scenarios needing a hook tg lacks are skipped. Each run registers
// participants with fresh random externalIDs, so it can be repeated against a
// long-lived sandbox.
func RunConformance(t *testing.T, tg Target) {
	if tg.HTTPClient == nil {
		tg.HTTPClient = http.DefaultClient
	}
	if tg.SignupWait == 0 {
		tg.SignupWait = 30 * time.Second
	}
	if tg.Hooks.Now == nil {
		tg.Hooks.Now = time.Now
	}
	c := &conformance{tg: tg, run: randomHex(4)}
	for _, sc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"Authentication", c.authentication},
		{"VersionHeader", c.versionHeader},
		{"Pagination", c.pagination},
		{"ParticipantRegistration", c.participantRegistration},
		{"ParticipantLifecycle", c.participantLifecycle},
		{"SenderTokens", c.senderTokens},
		{"LimitGroups", c.limitGroups},
		{"LimitGroupMembers", c.limitGroupMembers},
		{"ParticipantOverrides", c.overrides},
		{"ProviderPolicy", c.policy},
		{"Reviews", c.reviews},
		{"ParticipantPayments", c.payments},
		{"FundingSources", c.fundingSources},
		{"SigningSecrets", c.signingSecrets},
		{"ProviderRecord", c.providerRecord},
	} {
		t.Run(sc.name, sc.f)
	}
}

type conformance struct {
	tg  Target
	run string
	seq int
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reply is a raw HTTP answer.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// obj decodes the body as a JSON object.
func (r reply) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

type hdr map[string]string

// req sends a request with the target's Basic credentials unless h sets
// Authorization ("" removes it). body is sent verbatim ("" sends none).
func (c *conformance) req(t *testing.T, method, path, body string, h hdr) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(c.tg.BaseURL, "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(c.tg.APIKeyID, c.tg.APIKeySecret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.tg.Version != "" {
		req.Header.Set("X-Service-Version", c.tg.Version)
	}
	for k, v := range h {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.tg.HTTPClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

func (c *conformance) p(format string, args ...any) string {
	return "/providers/" + url.PathEscape(c.tg.ProviderID) + fmt.Sprintf(format, args...)
}

func expect(t *testing.T, r reply, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
}

func expectBodiless(t *testing.T, r reply, status int) {
	t.Helper()
	expect(t, r, status)
	if len(r.Body) != 0 {
		t.Fatalf("%d should have no body, got %s", status, r.Body)
	}
}

// expectProblem checks an RFC 9457 answer and returns it.
func expectProblem(t *testing.T, r reply, status int) map[string]any {
	t.Helper()
	expect(t, r, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	m := r.obj(t)
	_, isDetail := m["detail"].(string)
	if str(m, "type") == "" || str(m, "title") == "" || m["status"] != float64(status) || !isDetail {
		t.Fatalf("problem lacks type, title, detail or status %d: %s", status, r.Body)
	}
	if errs, ok := m["errors"]; ok {
		list, _ := errs.([]any)
		for _, e := range list {
			if em, _ := e.(map[string]any); str(em, "pointer") == "" || str(em, "detail") == "" {
				t.Fatalf("errors member lacks pointer or detail: %s", r.Body)
			}
		}
		if list == nil {
			t.Fatalf("errors is not an array: %s", r.Body)
		}
	}
	return m
}

func expectCode(t *testing.T, r reply, code string) {
	t.Helper()
	if m := expectProblem(t, r, http.StatusConflict); m["code"] != code {
		t.Fatalf("code %v, want %q", m["code"], code)
	}
}

// expectPointer checks a validation problem names pointer.
func expectPointer(t *testing.T, r reply, status int, pointer string) {
	t.Helper()
	m := expectProblem(t, r, status)
	errs, _ := m["errors"].([]any)
	for _, e := range errs {
		if em, _ := e.(map[string]any); em["pointer"] == pointer {
			return
		}
	}
	t.Fatalf("no error with pointer %s in %s", pointer, r.Body)
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, k := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[k]
	}
	s, _ := cur.(string)
	return s
}

func need(t *testing.T, ok bool, hook string) {
	t.Helper()
	if !ok {
		t.Skipf("target has no %s hook", hook)
	}
}

func (c *conformance) externalID(prefix string) string {
	c.seq++
	return fmt.Sprintf("%sconf-%s-%d", prefix, c.run, c.seq)
}

func participantBody(externalID string) string {
	return fmt.Sprintf(`{"externalID":%q,"givenName":"Pat","familyName":"Payer",`+
		`"address":{"addressLine1":"1 Main St","city":"Springfield","stateOrProvince":"IL","postalCode":"62701","country":"US"},`+
		`"phoneNumbers":["+15555550100"]}`, externalID)
}

// register creates a participant and returns its participantID.
func (c *conformance) register(t *testing.T, externalID string) string {
	t.Helper()
	r := c.req(t, "POST", c.p("/participants"), participantBody(externalID), hdr{"Idempotency-Key": newUUID()})
	expect(t, r, http.StatusCreated)
	id := str(r.obj(t), "participantID")
	if id == "" {
		t.Fatalf("no participantID in %s", r.Body)
	}
	return id
}

// settle waits for the participant's signup check to land (or forces status
// via the hook) and returns the status.
func (c *conformance) settle(t *testing.T, externalID, want string) string {
	t.Helper()
	if h := c.tg.Hooks.SetParticipantStatus; h != nil && want != "" {
		if err := h(externalID, want); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(c.tg.SignupWait)
	for {
		r := c.req(t, "GET", c.p("/participants/%s", url.PathEscape(externalID)), "", nil)
		expect(t, r, http.StatusOK)
		st := str(r.obj(t), "status")
		if st != StatusPending || want == StatusPending {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("participant %s still pending after %v", externalID, c.tg.SignupWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// active registers a participant and waits until it is active.
func (c *conformance) active(t *testing.T) (participantID, externalID string) {
	t.Helper()
	externalID = c.externalID("")
	participantID = c.register(t, externalID)
	if st := c.settle(t, externalID, StatusActive); st != StatusActive {
		t.Fatalf("participant %s is %s, want active", externalID, st)
	}
	return participantID, externalID
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (c *conformance) authentication(t *testing.T) {
	path := c.p("/limit-groups")
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": ""}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": basic(c.tg.APIKeyID, "wrong")}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": "Bearer " + c.tg.APIKeySecret}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "POST", c.p("/participants"), participantBody(c.externalID("")),
		hdr{"Authorization": ""}), http.StatusUnauthorized)
	expect(t, c.req(t, "GET", path, "", nil), http.StatusOK)

	t.Run("EveryEndpointNeedsTheAPIKey", func(t *testing.T) {
		for _, e := range providerEndpoints {
			path := c.p("%s", e.path)
			for _, auth := range []string{"", basic(c.tg.APIKeyID, c.tg.APIKeySecret+"x"), "Bearer " + c.tg.APIKeySecret} {
				if r := c.req(t, e.method, path, e.body, hdr{"Authorization": auth}); r.Status != http.StatusUnauthorized {
					t.Errorf("%s %s with Authorization %q: %v, want 401", e.method, e.path, auth, r)
				}
			}
		}
	})
	t.Run("OtherProvidersPathIsForbidden", func(t *testing.T) {
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		other, _, _, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		// Rule 3: for signing-secret and provider-update endpoints the
		// path providerID must be the caller's account.
		expect(t, c.req(t, "GET", "/providers/"+other+"/signing-secrets", "", nil), http.StatusForbidden)
		expect(t, c.req(t, "POST", "/providers/"+other+"/signing-secrets", "",
			hdr{"X-Idempotency-Key": "conf-" + randomHex(6)}), http.StatusForbidden)
		expect(t, c.req(t, "PATCH", "/providers/"+other, `{"shortName":"Other1"}`, nil), http.StatusForbidden)
		expect(t, c.req(t, "GET", "/providers/"+other+"/limit-groups", "", nil), http.StatusForbidden)
	})
}

// providerEndpoints is every {providerID}-scoped endpoint of the spec, with
// placeholder IDs and a well-formed body, relative to /providers/{providerID}.
var providerEndpoints = []struct{ method, path, body string }{
	{"PATCH", "", `{"shortName":"Acme01"}`},
	{"POST", "/participants", participantBody("auth-probe")},
	{"GET", "/participants/p-probe", ""},
	{"GET", "/limit-groups", ""},
	{"POST", "/limit-groups", `{"name":"probe"}`},
	{"PATCH", "/limit-groups/g-probe", `{"name":"probe"}`},
	{"GET", "/limit-groups/g-probe/members", ""},
	{"PUT", "/limit-groups/g-probe/members/p-probe", ""},
	{"DELETE", "/limit-groups/g-probe/members/p-probe", ""},
	{"PUT", "/participants/p-probe/limits", `{"dailySendCount":1}`},
	{"DELETE", "/participants/p-probe/limits", ""},
	{"GET", "/limits", ""},
	{"GET", "/reviews", ""},
	{"GET", "/reviews/r-probe", ""},
	{"POST", "/reviews/r-probe/resolutions", `{"resolution":"approved"}`},
	{"GET", "/participants/p-probe/payments", ""},
	{"POST", "/participants/p-probe/funding-sources", `{"fundingType":"card","providerSourceID":"s","displayName":"n"}`},
	{"GET", "/participants/p-probe/funding-sources/f-probe", ""},
	{"PATCH", "/participants/p-probe/funding-sources/f-probe", `{"displayName":"n"}`},
	{"GET", "/signing-secrets", ""},
	{"POST", "/signing-secrets", ""},
}

func (c *conformance) versionHeader(t *testing.T) {
	path := c.p("/signing-secrets")
	expect(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": "v2026.10.00"}), http.StatusOK)
	expect(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": ""}), http.StatusOK)
	expectProblem(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": "2026-10"}), http.StatusBadRequest)
}

func (c *conformance) pagination(t *testing.T) {
	var created []string
	for i := range 3 {
		r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(`{"name":"page %s %d"}`, c.run, i), nil)
		expect(t, r, http.StatusCreated)
		created = append(created, str(r.obj(t), "group", "groupID"))
	}
	for _, bad := range []string{"0", "101", "-1", "abc", ""} {
		expectProblem(t, c.req(t, "GET", c.p("/limit-groups?limit=%s", bad), "", nil), http.StatusBadRequest)
	}
	// Every list endpoint checks limit.
	pid := c.register(t, c.externalID(""))
	for _, list := range []string{"/limit-groups?", "/limit-groups/" + created[0] + "/members?",
		"/reviews?", "/reviews?status=approved&", "/participants/" + pid + "/payments?", "/signing-secrets?"} {
		for _, bad := range []string{"0", "101"} {
			expectProblem(t, c.req(t, "GET", c.p("%slimit=%s", list, bad), "", nil), http.StatusBadRequest)
		}
		expect(t, c.req(t, "GET", c.p("%slimit=1", list), "", nil), http.StatusOK)
		expect(t, c.req(t, "GET", c.p("%slimit=100", list), "", nil), http.StatusOK)
	}
	expectProblem(t, c.req(t, "GET", c.p("/limit-groups?cursor=not-a-cursor!"), "", nil), http.StatusBadRequest)
	expect(t, c.req(t, "GET", c.p("/limit-groups?limit=100"), "", nil), http.StatusOK)

	// Walk every page of one item; every group created is seen exactly once.
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("pagination does not end")
		}
		q := "?limit=1"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		m := c.req(t, "GET", c.p("/limit-groups%s", q), "", nil).obj(t)
		groups, ok := m["groups"].([]any)
		if !ok || len(groups) > 1 {
			t.Fatalf("page: %v", m)
		}
		for _, g := range groups {
			seen[str(g.(map[string]any), "groupID")]++
		}
		hasMore, ok := m["hasMore"].(bool)
		if !ok {
			t.Fatalf("hasMore missing: %v", m)
		}
		next, hasNext := m["nextCursor"].(string)
		if !hasMore {
			if hasNext && next != "" {
				t.Fatalf("last page carries nextCursor %q", next)
			}
			break
		}
		if next == "" {
			t.Fatal("hasMore without nextCursor")
		}
		cursor = next
	}
	for _, id := range created {
		if seen[id] != 1 {
			t.Fatalf("group %s seen %d times walking pages", id, seen[id])
		}
	}

	// An empty result is an empty list.
	m := c.req(t, "GET", c.p("/limit-groups/%s/members", created[0]), "", nil).obj(t)
	if l, ok := m["members"].([]any); !ok || len(l) != 0 || m["hasMore"] != false || m["nextCursor"] != nil {
		t.Fatalf("empty page: %v", m)
	}
}

func (c *conformance) participantRegistration(t *testing.T) {
	ext := c.externalID("")
	key := newUUID()
	r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": key})
	expect(t, r, http.StatusCreated)
	id := str(r.obj(t), "participantID")
	if id == "" {
		t.Fatalf("no participantID: %s", r.Body)
	}

	t.Run("DuplicateExternalIDIsConflict", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": newUUID()})
		expect(t, r, http.StatusConflict)
	})
	t.Run("ReplayedKeyCreatesNoSecondParticipant", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": key})
		if r.Status == http.StatusCreated && str(r.obj(t), "participantID") != id {
			t.Fatalf("replay created %s, first was %s", r.Body, id)
		} else if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
			t.Fatalf("replay answered %v", r)
		}
	})
	t.Run("MissingFieldsAreBadRequest", func(t *testing.T) {
		for _, body := range []string{`{}`, `{"externalID":"x"}`, `not json`,
			strings.Replace(participantBody(c.externalID("")), `"city":"Springfield",`, "", 1)} {
			r := c.req(t, "POST", c.p("/participants"), body, hdr{"Idempotency-Key": newUUID()})
			expect(t, r, http.StatusBadRequest)
		}
	})
	t.Run("PathTakesParticipantIDOrExternalID", func(t *testing.T) {
		a := c.req(t, "GET", c.p("/participants/%s", id), "", nil)
		b := c.req(t, "GET", c.p("/participants/%s", url.PathEscape(ext)), "", nil)
		expect(t, a, http.StatusOK)
		expect(t, b, http.StatusOK)
		if str(a.obj(t), "participantID") != id || str(b.obj(t), "participantID") != id {
			t.Fatalf("lookups disagree: %s / %s", a.Body, b.Body)
		}
		if st := str(a.obj(t), "status"); !slices.Contains([]string{StatusPending, StatusActive, StatusDenied, StatusDisabled}, st) {
			t.Fatalf("status %q", st)
		}
	})
	t.Run("UnknownParticipantIsNotFound", func(t *testing.T) {
		expect(t, c.req(t, "GET", c.p("/participants/%s", c.externalID("nobody-")), "", nil), http.StatusNotFound)
	})
}

func (c *conformance) token(t *testing.T, externalID string, h hdr) reply {
	t.Helper()
	body := ""
	if externalID != "" {
		body = fmt.Sprintf(`{"externalID":%q,"clientType":"device"}`, externalID)
	}
	return c.req(t, "POST", "/provider-participant-token", body, h)
}

func (c *conformance) participantLifecycle(t *testing.T) {
	t.Run("PendingCannotMint", func(t *testing.T) {
		need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus")
		ext := c.externalID("")
		c.register(t, ext)
		if st := c.settle(t, ext, StatusPending); st != StatusPending {
			t.Fatalf("status %s", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
	t.Run("ClearedBecomesActive", func(t *testing.T) {
		_, ext := c.active(t)
		expect(t, c.token(t, ext, nil), http.StatusOK)
	})
	t.Run("DeniedCannotMint", func(t *testing.T) {
		ext := c.externalID("deny-")
		c.register(t, ext)
		want := ""
		if !c.tg.Hooks.DenyPrefix {
			need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus or DenyPrefix")
			want = StatusDenied
		}
		if st := c.settle(t, ext, want); st != StatusDenied {
			t.Fatalf("status %s, want denied", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
	t.Run("DisabledCannotMint", func(t *testing.T) {
		need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus")
		_, ext := c.active(t)
		if st := c.settle(t, ext, StatusDisabled); st != StatusDisabled {
			t.Fatalf("status %s", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
}

func (c *conformance) senderTokens(t *testing.T) {
	_, ext := c.active(t)
	r := c.token(t, ext, nil)
	expect(t, r, http.StatusOK)
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Fatalf("cache headers: %v", r.Header)
	}
	m := r.obj(t)
	if str(m, "access_token") == "" || !strings.EqualFold(str(m, "token_type"), "bearer") {
		t.Fatalf("token: %s", r.Body)
	}
	if m["expires_in"] != float64(TokenLifetime) {
		t.Fatalf("expires_in %v, want 3600", m["expires_in"])
	}
	if _, ok := m["refresh_token"]; ok {
		t.Fatal("a refresh_token was returned")
	}

	expectBodiless(t, c.req(t, "POST", "/provider-participant-token", `{"clientType":"web"}`, nil), http.StatusBadRequest)
	expectBodiless(t, c.req(t, "POST", "/provider-participant-token",
		fmt.Sprintf(`{"externalID":%q,"clientType":"kiosk"}`, ext), nil), http.StatusBadRequest)
	expectBodiless(t, c.token(t, c.externalID("nobody-"), nil), http.StatusNotFound)
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": ""}), http.StatusUnauthorized)
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(c.tg.APIKeyID, "wrong")}), http.StatusUnauthorized)
	// Only Basic works: the key is never exchanged for a bearer token.
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": "Bearer " + str(m, "access_token")}), http.StatusUnauthorized)
	// clientType defaults to web.
	expect(t, c.req(t, "POST", "/provider-participant-token", fmt.Sprintf(`{"externalID":%q}`, ext), nil), http.StatusOK)

	t.Run("KeyWithoutTransfersWriteIsForbidden", func(t *testing.T) {
		need(t, c.tg.Hooks.NoScopeKey != nil, "NoScopeKey")
		id, secret, err := c.tg.Hooks.NoScopeKey()
		if err != nil {
			t.Fatal(err)
		}
		expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(id, secret)}), http.StatusForbidden)
	})
	t.Run("OtherProvidersParticipantIsForbidden", func(t *testing.T) {
		// Authentication rule 7: a participant belonging to another
		// provider returns 403, bodiless like every token error.
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		_, id, secret, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(id, secret)}), http.StatusForbidden)
	})
	t.Run("ParticipantLoginWithEmptyBody", func(t *testing.T) {
		need(t, c.tg.Hooks.ParticipantLogin != nil, "ParticipantLogin")
		user, pass, err := c.tg.Hooks.ParticipantLogin(ext)
		if err != nil {
			t.Fatal(err)
		}
		r := c.req(t, "POST", "/provider-participant-token", "", hdr{"Authorization": basic(user, pass)})
		expect(t, r, http.StatusOK)
		if r.obj(t)["expires_in"] != float64(TokenLifetime) || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("login token: %v %s", r.Header, r.Body)
		}
	})
}

func money(v string) string {
	return fmt.Sprintf(`{"currency":{"code":"USD","decimalPlaces":2},"value":%q}`, v)
}

func moneyValue(m map[string]any, dim string) string { return str(m, dim, "value") }

func (c *conformance) limitGroups(t *testing.T) {
	r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(
		`{"name":"gold %s","description":"d","dailyAmount":%s,"weeklyAmount":%s,"dailySendCount":5}`,
		c.run, money("100.00"), money("200.00")), nil)
	expect(t, r, http.StatusCreated)
	g := r.obj(t)["group"].(map[string]any)
	id, v1 := str(g, "groupID"), str(g, "versionID")
	if id == "" || v1 == "" || str(g, "currency") != provider.USDCurrency().Code || str(g, "createdOn") == "" {
		t.Fatalf("group: %v", g)
	}
	if moneyValue(g, "dailyAmount") != "100.00" || g["dailySendCount"] != float64(5) {
		t.Fatalf("dimensions not echoed: %v", g)
	}

	t.Run("CreateValidation", func(t *testing.T) {
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"), `{"description":"no name"}`, nil), 422, "/name")
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"),
			`{"name":"eur","dailyAmount":{"currency":{"code":"EUR","decimalPlaces":2},"value":"1.00"}}`, nil),
			422, "/dailyAmount/currency/code")
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"), `{"name":"neg","dailySendCount":-1}`, nil),
			422, "/dailySendCount")
		expectProblem(t, c.req(t, "POST", c.p("/limit-groups"), `{"name":`, nil), http.StatusBadRequest)
	})

	path := c.p("/limit-groups/%s", id)
	var v2 string
	t.Run("PatchAbsentKeepsNullClearsValueSets", func(t *testing.T) {
		r := c.req(t, "PATCH", path, fmt.Sprintf(`{"dailyAmount":null,"perTransactionAmount":%s,"expectedVersionID":%q}`,
			money("50.00"), v1), nil)
		expect(t, r, http.StatusOK)
		g := r.obj(t)["group"].(map[string]any)
		if _, ok := g["dailyAmount"]; ok {
			t.Fatalf("null did not clear dailyAmount: %v", g)
		}
		if moneyValue(g, "weeklyAmount") != "200.00" || moneyValue(g, "perTransactionAmount") != "50.00" ||
			str(g, "description") != "d" || g["dailySendCount"] != float64(5) {
			t.Fatalf("absent fields changed or value not set: %v", g)
		}
		v2 = str(g, "versionID")
		if v2 == "" || v2 == v1 {
			t.Fatalf("versionID %q after patch (was %q)", v2, v1)
		}
	})
	t.Run("StaleVersionIsConflict", func(t *testing.T) {
		expectCode(t, c.req(t, "PATCH", path, fmt.Sprintf(`{"name":"x","expectedVersionID":%q}`, v1), nil), "version_conflict")
	})
	t.Run("NullClearsNameAndDescription", func(t *testing.T) {
		r := c.req(t, "PATCH", path, fmt.Sprintf(`{"name":null,"description":null,"dailySendCount":null,"expectedVersionID":%q}`, v2), nil)
		expect(t, r, http.StatusOK)
		g := r.obj(t)["group"].(map[string]any)
		if str(g, "name") != "" || str(g, "description") != "" || g["dailySendCount"] != nil {
			t.Fatalf("not cleared: %v", g)
		}
	})
	t.Run("PatchValidationAndMissing", func(t *testing.T) {
		expectPointer(t, c.req(t, "PATCH", path, `{"weeklyAmount":`+money("1.001")+`}`, nil), 422, "/weeklyAmount/value")
		expect(t, c.req(t, "PATCH", c.p("/limit-groups/%s", "grp-missing-"+c.run), `{"name":"x"}`, nil), http.StatusNotFound)
	})
}

func (c *conformance) newGroup(t *testing.T) string {
	t.Helper()
	r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(`{"name":"members %s"}`, c.run), nil)
	expect(t, r, http.StatusCreated)
	return str(r.obj(t), "group", "groupID")
}

func (c *conformance) limitGroupMembers(t *testing.T) {
	gid := c.newGroup(t)
	pid, ext := c.active(t)
	member := func(ref string) string { return c.p("/limit-groups/%s/members/%s", gid, url.PathEscape(ref)) }

	r := c.req(t, "PUT", member(ext), "", nil)
	expect(t, r, http.StatusOK)
	m1 := r.obj(t)["member"].(map[string]any)
	if str(m1, "externalID") != ext || str(m1, "addedOn") == "" {
		t.Fatalf("member: %v", m1)
	}
	if c.tg.Hooks.Advance != nil {
		c.tg.Hooks.Advance(time.Minute)
	}
	r = c.req(t, "PUT", member(pid), "", nil)
	expect(t, r, http.StatusOK)
	if m2 := r.obj(t)["member"].(map[string]any); str(m2, "addedOn") != str(m1, "addedOn") {
		t.Fatalf("second PUT changed the membership: %v then %v", m1, m2)
	}
	list := c.req(t, "GET", c.p("/limit-groups/%s/members", gid), "", nil).obj(t)
	if ms, _ := list["members"].([]any); len(ms) != 1 || str(ms[0].(map[string]any), "externalID") != ext {
		t.Fatalf("members: %v", list)
	}
	expectProblem(t, c.req(t, "GET", c.p("/limit-groups/%s/members?limit=101", gid), "", nil), http.StatusBadRequest)

	expect(t, c.req(t, "DELETE", member(pid), "", nil), http.StatusNoContent)
	expect(t, c.req(t, "DELETE", member(ext), "", nil), http.StatusNoContent)
	list = c.req(t, "GET", c.p("/limit-groups/%s/members", gid), "", nil).obj(t)
	if ms, _ := list["members"].([]any); len(ms) != 0 {
		t.Fatalf("members after delete: %v", list)
	}

	expect(t, c.req(t, "PUT", member(c.externalID("nobody-")), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "PUT", c.p("/limit-groups/%s/members/%s", "grp-missing-"+c.run, pid), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "DELETE", c.p("/limit-groups/%s/members/%s", "grp-missing-"+c.run, pid), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "GET", c.p("/limit-groups/%s/members", "grp-missing-"+c.run), "", nil), http.StatusNotFound)
}

func (c *conformance) overrides(t *testing.T) {
	_, ext := c.active(t)
	path := c.p("/participants/%s/limits", url.PathEscape(ext))
	r := c.req(t, "PUT", path, fmt.Sprintf(`{"dailyAmount":%s,"monthlyAmount":%s,"expiresOn":null}`,
		money("10.00"), money("300.00")), nil)
	expect(t, r, http.StatusOK)
	o := r.obj(t)["override"].(map[string]any)
	v1 := str(o, "versionID")
	if v1 == "" || str(o, "currency") != provider.USDCurrency().Code || str(o, "createdOn") == "" || o["expiresOn"] != nil {
		t.Fatalf("override: %v", o)
	}

	r = c.req(t, "PUT", path, fmt.Sprintf(`{"weeklyAmount":%s,"monthlyAmount":null,"expectedVersionID":%q}`, money("20.00"), v1), nil)
	expect(t, r, http.StatusOK)
	o = r.obj(t)["override"].(map[string]any)
	if moneyValue(o, "dailyAmount") != "10.00" || moneyValue(o, "weeklyAmount") != "20.00" || o["monthlyAmount"] != nil {
		t.Fatalf("absent must keep, value set, null clear: %v", o)
	}
	v2 := str(o, "versionID")

	expectCode(t, c.req(t, "PUT", path, fmt.Sprintf(`{"dailySendCount":3,"expectedVersionID":%q}`, v1), nil), "version_conflict")
	expectPointer(t, c.req(t, "PUT", path, `{"dailyAmount":{"currency":{"code":"EUR","decimalPlaces":2},"value":"1.00"}}`, nil),
		422, "/dailyAmount/currency/code")

	t.Run("SupportOverrideRules", func(t *testing.T) {
		soon := c.tg.Hooks.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		late := c.tg.Hooks.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
		body := func(extra string) string {
			return fmt.Sprintf(`{"dailyAmount":%s,%s,"expectedVersionID":%q}`, money("999.00"), extra, v2)
		}
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":"`+late+`"`), nil), 422, "/expiresOn")
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":null`), nil), 422, "/expiresOn")
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","expiresOn":"`+soon+`"`), nil), 422, "/reference")
		expectPointer(t, c.req(t, "PUT", path, body(`"reference":"T-1","expiresOn":"`+soon+`"`), nil), 422, "/reason")
		r := c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":"`+soon+`"`), nil)
		expect(t, r, http.StatusOK)
		o := r.obj(t)["override"].(map[string]any)
		if str(o, "reason") != "vip" || str(o, "reference") != "T-1" || str(o, "expiresOn") == "" {
			t.Fatalf("support override: %v", o)
		}
	})

	t.Run("DeleteThenFirstWriteAgain", func(t *testing.T) {
		r := c.req(t, "DELETE", path, "", nil)
		if r.Status/100 != 2 {
			t.Fatalf("delete: %v", r)
		}
		expect(t, c.req(t, "PUT", path, `{"dailySendCount":2}`, nil), http.StatusOK)
	})
	expect(t, c.req(t, "PUT", c.p("/participants/%s/limits", c.externalID("nobody-")), `{"dailySendCount":1}`, nil), http.StatusNotFound)
}

func (c *conformance) policy(t *testing.T) {
	if h := c.tg.Hooks.SetPolicy; h != nil {
		if err := h(Limits{DailyAmount: USDPtr("1000.00"), DailySendCount: Count(20)}); err != nil {
			t.Fatal(err)
		}
	}
	r := c.req(t, "GET", c.p("/limits"), "", nil)
	if r.Status == http.StatusNotFound && c.tg.Hooks.SetPolicy == nil {
		t.Skip("the target has no policy and no SetPolicy hook")
	}
	expect(t, r, http.StatusOK)
	p := r.obj(t)["policy"].(map[string]any)
	if str(p, "versionID") == "" || str(p, "createdOn") == "" || str(p, "currency") != provider.USDCurrency().Code {
		t.Fatalf("policy: %v", p)
	}
	if c.tg.Hooks.SetPolicy != nil && (moneyValue(p, "dailyAmount") != "1000.00" || p["dailySendCount"] != float64(20)) {
		t.Fatalf("policy dimensions: %v", p)
	}
}

// seedReview seeds a payout of ext in status with one pending review.
func (c *conformance) seedReview(t *testing.T, ext, status string) (payoutID, reviewID string) {
	t.Helper()
	payoutID, err := c.tg.Hooks.SeedPayout(ext, "42.00", status)
	if err != nil {
		t.Fatal(err)
	}
	return payoutID, c.addReview(t, payoutID)
}

func (c *conformance) addReview(t *testing.T, payoutID string) string {
	t.Helper()
	if c.tg.Hooks.Advance != nil {
		c.tg.Hooks.Advance(time.Second)
	}
	reviewID, err := c.tg.Hooks.SeedReview(payoutID)
	if err != nil {
		t.Fatal(err)
	}
	return reviewID
}

func (c *conformance) resolve(t *testing.T, reviewID, resolution string) reply {
	t.Helper()
	return c.req(t, "POST", c.p("/reviews/%s/resolutions", reviewID),
		fmt.Sprintf(`{"resolution":%q,"notes":"checked"}`, resolution), nil)
}

func reviewIDs(t *testing.T, r reply) []string {
	t.Helper()
	expect(t, r, http.StatusOK)
	var ids []string
	for _, rv := range r.obj(t)["reviews"].([]any) {
		ids = append(ids, str(rv.(map[string]any), "reviewID"))
	}
	return ids
}

func (c *conformance) reviews(t *testing.T) {
	expectProblem(t, c.req(t, "GET", c.p("/reviews?status=escalated"), "", nil), http.StatusBadRequest)
	expectProblem(t, c.req(t, "GET", c.p("/reviews?limit=0"), "", nil), http.StatusBadRequest)
	need(t, c.tg.Hooks.SeedPayout != nil && c.tg.Hooks.SeedReview != nil, "SeedPayout and SeedReview")
	_, ext := c.active(t)
	_, older := c.seedReview(t, ext, PayoutAuthorized)
	_, newer := c.seedReview(t, ext, PayoutAccepted)

	t.Run("PendingNewestFirst", func(t *testing.T) {
		ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews"), "", nil))
		i, j := slices.Index(ids, newer), slices.Index(ids, older)
		if i < 0 || j < 0 || i > j {
			t.Fatalf("pending reviews %v: want %s before %s", ids, newer, older)
		}
		if !slices.Equal(ids, reviewIDs(t, c.req(t, "GET", c.p("/reviews?status=pending"), "", nil))) {
			t.Fatal("status defaults to pending")
		}
	})
	t.Run("GetCarriesPayout", func(t *testing.T) {
		r := c.req(t, "GET", c.p("/reviews/%s", older), "", nil)
		expect(t, r, http.StatusOK)
		if !strings.Contains(string(r.Body), `"payoutID"`) {
			t.Fatalf("no payout: %s", r.Body)
		}
		expect(t, c.req(t, "GET", c.p("/reviews/%s", "rev-missing-"+c.run), "", nil), http.StatusNotFound)
	})
	t.Run("ResolveOnceThenConflict", func(t *testing.T) {
		expectProblem(t, c.req(t, "POST", c.p("/reviews/%s/resolutions", older), `{"resolution":"maybe"}`, nil), http.StatusBadRequest)
		r := c.resolve(t, older, ReviewApproved)
		expect(t, r, http.StatusOK)
		expectProblem(t, c.resolve(t, older, ReviewRejected), http.StatusConflict)
		expectProblem(t, c.resolve(t, older, ReviewApproved), http.StatusConflict)
		if ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews?status=approved"), "", nil)); !slices.Contains(ids, older) {
			t.Fatalf("approved list %v lacks %s", ids, older)
		}
		if ids := reviewIDs(t, c.req(t, "GET", c.p("/reviews"), "", nil)); slices.Contains(ids, older) {
			t.Fatalf("pending list %v still has %s", ids, older)
		}
	})
	t.Run("OtherProvidersReviewIsNotFound", func(t *testing.T) { c.otherProvidersReview(t, newer) })
	t.Run("RejectingLastPendingReviewCancels", func(t *testing.T) { c.rejectingLastReviewCancels(t, ext) })
	t.Run("RejectingWhileClaimingDoesNotCancel", func(t *testing.T) { c.rejectingWhileClaiming(t, ext) })
	t.Run("ApprovingLastReviewDoesNotCancel", func(t *testing.T) { c.approvingLastReview(t, ext) })
}

// otherProvidersReview checks that another provider can neither get,
// resolve nor list our review reviewID.
func (c *conformance) otherProvidersReview(t *testing.T, reviewID string) {
	need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
	other, id, secret, err := c.tg.Hooks.OtherProvider()
	if err != nil {
		t.Fatal(err)
	}
	auth := hdr{"Authorization": basic(id, secret)}
	expect(t, c.req(t, "GET", "/providers/"+other+"/reviews/"+reviewID, "", auth), http.StatusNotFound)
	expect(t, c.req(t, "POST", "/providers/"+other+"/reviews/"+reviewID+"/resolutions", `{"resolution":"approved"}`, auth), http.StatusNotFound)
	if ids := reviewIDs(t, c.req(t, "GET", "/providers/"+other+"/reviews", "", auth)); slices.Contains(ids, reviewID) {
		t.Fatal("another provider lists our review")
	}
}

// rejectingLastReviewCancels checks that rejecting a review of an accepted
// payout of ext cancels and releases it only when no other review is
// pending.
func (c *conformance) rejectingLastReviewCancels(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil && c.tg.Hooks.Released != nil, "PayoutStatus and Released")
	payout, first := c.seedReview(t, ext, PayoutAccepted)
	second := c.addReview(t, payout)
	expect(t, c.resolve(t, first, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutAccepted || c.tg.Hooks.Released(payout) {
		t.Fatalf("a review is still pending, yet payout is %s (released %v)", st, c.tg.Hooks.Released(payout))
	}
	expect(t, c.resolve(t, second, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutCancelled || !c.tg.Hooks.Released(payout) {
		t.Fatalf("payout %s after its last review was rejected (released %v)", st, c.tg.Hooks.Released(payout))
	}
}

// rejectingWhileClaiming checks that rejecting the review of a payout of
// ext being claimed neither cancels nor releases it.
func (c *conformance) rejectingWhileClaiming(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil && c.tg.Hooks.Released != nil, "PayoutStatus and Released")
	payout, rv := c.seedReview(t, ext, PayoutClaiming)
	expect(t, c.resolve(t, rv, ReviewRejected), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutClaiming || c.tg.Hooks.Released(payout) {
		t.Fatalf("payout %s (released %v)", st, c.tg.Hooks.Released(payout))
	}
}

// approvingLastReview checks that approving the last review of an
// authorized payout of ext leaves it authorized.
func (c *conformance) approvingLastReview(t *testing.T, ext string) {
	need(t, c.tg.Hooks.PayoutStatus != nil, "PayoutStatus")
	payout, rv := c.seedReview(t, ext, PayoutAuthorized)
	expect(t, c.resolve(t, rv, ReviewApproved), http.StatusOK)
	if st, _ := c.tg.Hooks.PayoutStatus(payout); st != PayoutAuthorized {
		t.Fatalf("payout %s", st)
	}
}

func (c *conformance) payments(t *testing.T) {
	_, ext := c.active(t)
	path := c.p("/participants/%s/payments", url.PathEscape(ext))
	m := c.req(t, "GET", path, "", nil).obj(t)
	if l, ok := m["payments"].([]any); !ok || len(l) != 0 || m["hasMore"] != false {
		t.Fatalf("fresh participant's payments: %v", m)
	}
	expectProblem(t, c.req(t, "GET", path+"?limit=101", "", nil), http.StatusBadRequest)
	expect(t, c.req(t, "GET", c.p("/participants/%s/payments", c.externalID("nobody-")), "", nil), http.StatusNotFound)

	need(t, c.tg.Hooks.SeedPayout != nil, "SeedPayout")
	var want []string
	for range 3 {
		if c.tg.Hooks.Advance != nil {
			c.tg.Hooks.Advance(time.Second)
		}
		id, err := c.tg.Hooks.SeedPayout(ext, "5.00", PayoutCompleted)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...) // newest first
	}
	var got []string
	cursor := ""
	for {
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		m := c.req(t, "GET", path+q, "", nil).obj(t)
		for _, p := range m["payments"].([]any) {
			pm := p.(map[string]any)
			got = append(got, str(pm, "id"))
			if str(pm, "direction") != "sent" || moneyValue(pm, "amount") != "5.00" || str(pm, "status") != PayoutCompleted {
				t.Fatalf("payment item: %v", pm)
			}
		}
		if m["hasMore"] != true {
			break
		}
		cursor = str(m, "nextCursor")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("payments %v, want newest first %v", got, want)
	}
}

func (c *conformance) fundingSources(t *testing.T) {
	f := c.newFundingSource(t)
	base, id, src := f.base, f.id, f.src

	t.Run("CreateIsIdempotentOnParticipantTypeAndSource", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants/%s/funding-sources", f.pid), fundingSourceBody(FundingCard, src, "Visa again", "4242"), nil)
		expect(t, r, http.StatusCreated)
		if got := str(r.obj(t), "fundingSourceID"); got != id {
			t.Fatalf("resend gave %s, want %s", got, id)
		}
		r = c.req(t, "POST", base, fundingSourceBody(FundingBankAccount, src, "Checking", "0001"), nil)
		expect(t, r, http.StatusCreated)
		if str(r.obj(t), "fundingSourceID") == id {
			t.Fatal("another fundingType reused the ID")
		}
	})
	t.Run("Get", func(t *testing.T) {
		r := c.req(t, "GET", base+"/"+id, "", nil)
		expect(t, r, http.StatusOK)
		fs := r.obj(t)["fundingSource"].(map[string]any)
		if str(fs, "fundingSourceID") != id || str(fs, "fundingType") != FundingCard || str(fs, "providerSourceID") != src ||
			str(fs, "displayName") != "Visa" || str(fs, "last4") != "4242" || str(fs, "createdOn") == "" || fs["disabledOn"] != nil {
			t.Fatalf("funding source: %v", fs)
		}
		expect(t, c.req(t, "GET", base+"/fs-missing-"+c.run, "", nil), http.StatusNotFound)
		expect(t, c.req(t, "GET", c.p("/participants/%s/funding-sources/%s", c.externalID("nobody-"), id), "", nil), http.StatusNotFound)
		_, otherExt := c.active(t)
		expect(t, c.req(t, "GET", c.p("/participants/%s/funding-sources/%s", otherExt, id), "", nil), http.StatusNotFound)
	})
	t.Run("PatchKeepsIDAndImmutableFields", func(t *testing.T) { c.fundingSourcePatch(t, f) })
	t.Run("CreateValidation", func(t *testing.T) { c.fundingSourceValidation(t, base) })
	t.Run("OtherProvidersSourceIsNotFound", func(t *testing.T) {
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		other, kid, secret, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		auth := hdr{"Authorization": basic(kid, secret)}
		expect(t, c.req(t, "GET", "/providers/"+other+"/participants/"+f.pid+"/funding-sources/"+id, "", auth), http.StatusNotFound)
	})
	t.Run("ResendReactivatesRemovedSource", func(t *testing.T) { c.fundingSourceReactivation(t, f) })
}

// fundingSource is the funding source the FundingSources scenario creates:
// its participant, the collection's path, its providerSourceID and its ID.
type fundingSource struct {
	pid, base, src, id string
}

// newFundingSource registers an active participant and creates a card
// funding source for it.
func (c *conformance) newFundingSource(t *testing.T) fundingSource {
	t.Helper()
	pid, ext := c.active(t)
	f := fundingSource{pid: pid, base: c.p("/participants/%s/funding-sources", url.PathEscape(ext)), src: "card-" + c.run}
	r := c.req(t, "POST", f.base, fundingSourceBody(FundingCard, f.src, "Visa", "4242"), nil)
	expect(t, r, http.StatusCreated)
	f.id = str(r.obj(t), "fundingSourceID")
	if f.id == "" {
		t.Fatalf("no fundingSourceID: %s", r.Body)
	}
	return f
}

// fundingSourceBody is the JSON body that creates a funding source.
func fundingSourceBody(typ, src, name, last4 string) string {
	return fmt.Sprintf(`{"fundingType":%q,"providerSourceID":%q,"displayName":%q,"last4":%q}`, typ, src, name, last4)
}

// fundingSourcePatch checks that a PATCH changes the display fields, keeps
// the ID, and refuses the immutable fields and invalid values.
func (c *conformance) fundingSourcePatch(t *testing.T, f fundingSource) {
	base, id := f.base, f.id
	r := c.req(t, "PATCH", base+"/"+id, `{"displayName":"Work Visa","last4":"1111"}`, nil)
	expect(t, r, http.StatusOK)
	fs := r.obj(t)["fundingSource"].(map[string]any)
	if str(fs, "fundingSourceID") != id || str(fs, "displayName") != "Work Visa" || str(fs, "last4") != "1111" ||
		str(fs, "providerSourceID") != f.src || str(fs, "fundingType") != FundingCard {
		t.Fatalf("patched: %v", fs)
	}
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"providerSourceID":"other"}`, nil), 422, "/providerSourceID")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"fundingType":"bank_account"}`, nil), 422, "/fundingType")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"last4":""}`, nil), 422, "/last4")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"last4":"12345"}`, nil), 422, "/last4")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"displayName":""}`, nil), 422, "/displayName")
	expect(t, c.req(t, "PATCH", c.p("/participants/%s/funding-sources/%s", c.externalID("nobody-"), id), `{"displayName":"x"}`, nil), http.StatusNotFound)
}

// fundingSourceValidation checks the validation of a create, on the
// funding-sources collection at base.
func (c *conformance) fundingSourceValidation(t *testing.T, base string) {
	long := strings.Repeat("x", 257)
	expectPointer(t, c.req(t, "POST", base, fundingSourceBody(FundingCard, "s1-"+c.run, "", ""), nil), 422, "/displayName")
	expectPointer(t, c.req(t, "POST", base, fundingSourceBody(FundingCard, long, "n", ""), nil), 422, "/providerSourceID")
	expectPointer(t, c.req(t, "POST", base, fundingSourceBody(FundingCard, "s2-"+c.run, long, ""), nil), 422, "/displayName")
	expectPointer(t, c.req(t, "POST", base, fundingSourceBody("cash", "s3-"+c.run, "n", ""), nil), 422, "/fundingType")
	expectPointer(t, c.req(t, "POST", base, fundingSourceBody(FundingCard, "s4-"+c.run, "n", "12345"), nil), 422, "/last4")
	expect(t, c.req(t, "POST", base, fundingSourceBody(FundingCard, strings.Repeat("y", 256), strings.Repeat("n", 256), ""), nil), http.StatusCreated)
	expect(t, c.req(t, "POST", c.p("/participants/%s/funding-sources", c.externalID("nobody-")), fundingSourceBody(FundingCard, "s5", "n", ""), nil), http.StatusNotFound)
	expectProblem(t, c.req(t, "POST", base, `{"fundingType":`, nil), http.StatusBadRequest)
}

// fundingSourceReactivation checks that resending the create of a removed
// funding source reactivates it under the same ID.
func (c *conformance) fundingSourceReactivation(t *testing.T, f fundingSource) {
	need(t, c.tg.Hooks.RemoveFundingSource != nil, "RemoveFundingSource")
	base, id := f.base, f.id
	if err := c.tg.Hooks.RemoveFundingSource(id); err != nil {
		t.Fatal(err)
	}
	fs := c.req(t, "GET", base+"/"+id, "", nil).obj(t)["fundingSource"].(map[string]any)
	if str(fs, "disabledOn") == "" {
		t.Fatalf("removed source has no disabledOn: %v", fs)
	}
	r := c.req(t, "POST", base, fundingSourceBody(FundingCard, f.src, "Visa", "4242"), nil)
	expect(t, r, http.StatusCreated)
	if str(r.obj(t), "fundingSourceID") != id {
		t.Fatalf("reactivation gave a new ID: %s", r.Body)
	}
	fs = c.req(t, "GET", base+"/"+id, "", nil).obj(t)["fundingSource"].(map[string]any)
	if _, ok := fs["disabledOn"]; ok {
		t.Fatalf("reactivated source still disabled: %v", fs)
	}
}

func (c *conformance) createSecret(t *testing.T, version, key string) reply {
	t.Helper()
	h := hdr{"X-Service-Version": version}
	if key != "" {
		h["X-Idempotency-Key"] = key
	}
	return c.req(t, "POST", c.p("/signing-secrets"), "", h)
}

func checkSecret(t *testing.T, s map[string]any) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(str(s, "secret"))
	if err != nil || len(raw) != 32 {
		t.Fatalf("secret is not Base64 of 32 bytes: %v", s)
	}
	if str(s, "secretID") == "" || str(s, "createdOn") == "" {
		t.Fatalf("secret metadata: %v", s)
	}
	if v, ok := s["revokedOn"]; ok && v != nil {
		t.Fatalf("new secret revoked: %v", s)
	}
}

func (c *conformance) signingSecrets(t *testing.T) {
	key := "conf-" + c.run + "-" + randomHex(4)
	r := c.createSecret(t, "v2026.10.00", key)
	expect(t, r, http.StatusCreated)
	if r.Header.Get("X-Idempotency-Key") != key {
		t.Fatalf("key not echoed: %v", r.Header)
	}
	nested, ok := r.obj(t)["signingSecret"].(map[string]any)
	if !ok {
		t.Fatalf("v2026.10.00 body is not nested: %s", r.Body)
	}
	checkSecret(t, nested)
	plaintext := str(nested, "secret")

	t.Run("BeforeV20261000TheBodyIsTheSecret", func(t *testing.T) {
		r := c.createSecret(t, "v2026.07.00", "conf-old-"+randomHex(6))
		expect(t, r, http.StatusCreated)
		m := r.obj(t)
		if _, nested := m["signingSecret"]; nested {
			t.Fatalf("pre-v2026.10.00 body nested: %s", r.Body)
		}
		checkSecret(t, m)
	})
	t.Run("MissingOrMalformedKeyIsBadRequest", func(t *testing.T) {
		expectProblem(t, c.createSecret(t, "v2026.10.00", ""), http.StatusBadRequest)
		expectProblem(t, c.createSecret(t, "v2026.10.00", strings.Repeat("k", 256)), http.StatusBadRequest)
		expect(t, c.createSecret(t, "v2026.10.00", strings.Repeat("k", 250)+randomHex(2)), http.StatusCreated)
	})
	t.Run("ReplayIsConflictWithoutPlaintext", func(t *testing.T) {
		r := c.createSecret(t, "v2026.10.00", key)
		expectCode(t, r, "idempotency-key-reused")
		if strings.Contains(string(r.Body), plaintext) || strings.Contains(string(r.Body), `"secret"`) {
			t.Fatalf("replay leaks the secret: %s", r.Body)
		}
	})
	t.Run("ListIsMetadataNewestFirstSeveralActive", func(t *testing.T) { c.secretList(t, nested) })
	t.Run("ConcurrentRequestIsInProgress", c.secretCreateInProgress)
	t.Run("AfterTheRetentionWindowTheKeyCreatesANewSecret", func(t *testing.T) { c.secretKeyRetention(t, key, nested) })
}

// listsSecret reports whether a list of signing secrets holds the one of
// secretID.
func listsSecret(list []any, secretID string) bool {
	return slices.ContainsFunc(list, func(s any) bool { return str(s.(map[string]any), "secretID") == secretID })
}

// secretList checks that the list of signing secrets is metadata without
// values, newest first, and holds several active secrets, created among
// them.
func (c *conformance) secretList(t *testing.T, created map[string]any) {
	r := c.req(t, "GET", c.p("/signing-secrets?limit=100"), "", nil)
	expect(t, r, http.StatusOK)
	if strings.Contains(string(r.Body), str(created, "secret")) || strings.Contains(string(r.Body), `"secret"`) {
		t.Fatalf("list carries secret values: %s", r.Body)
	}
	list := r.obj(t)["signingSecrets"].([]any)
	if len(list) < 2 {
		t.Fatalf("want several active secrets, got %v", list)
	}
	var prev time.Time
	for i, s := range list {
		at, err := time.Parse(time.RFC3339Nano, str(s.(map[string]any), "createdOn"))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && at.After(prev) {
			t.Fatalf("not newest first: %v", list)
		}
		prev = at
	}
	if !listsSecret(list, str(created, "secretID")) {
		t.Fatal("created secret not listed")
	}
}

// secretCreateInProgress checks that a create sent while another with the
// same key is in flight is refused as in progress.
func (c *conformance) secretCreateInProgress(t *testing.T) {
	need(t, c.tg.Hooks.GateSecretCreates != nil, "GateSecretCreates")
	entered, open := c.tg.Hooks.GateSecretCreates()
	t.Cleanup(open)
	k := "conf-gate-" + randomHex(6)
	first := make(chan reply, 1)
	go func() { first <- c.createSecretNoFatal(k) }()
	if got := <-entered; got != k {
		t.Fatalf("gate saw %q", got)
	}
	expectCode(t, c.createSecret(t, "v2026.10.00", k), "idempotency-request-in-progress")
	open()
	expect(t, <-first, http.StatusCreated)
}

// secretKeyRetention checks that key, which created the secret created,
// is refused until the retention window ends and then creates a new
// secret, the earlier one staying active.
func (c *conformance) secretKeyRetention(t *testing.T, key string, created map[string]any) {
	need(t, c.tg.Hooks.Advance != nil, "Advance")
	c.tg.Hooks.Advance(IdempotencyRetention - time.Second)
	expectCode(t, c.createSecret(t, "v2026.10.00", key), "idempotency-key-reused")
	c.tg.Hooks.Advance(time.Second)
	r := c.createSecret(t, "v2026.10.00", key)
	expect(t, r, http.StatusCreated)
	again := r.obj(t)["signingSecret"].(map[string]any)
	if str(again, "secretID") == str(created, "secretID") || str(again, "secret") == str(created, "secret") {
		t.Fatal("a new key window returned the old secret")
	}
	list := c.req(t, "GET", c.p("/signing-secrets?limit=100"), "", nil).obj(t)["signingSecrets"].([]any)
	if !listsSecret(list, str(created, "secretID")) {
		t.Fatal("the earlier secret is no longer active")
	}
}

// createSecretNoFatal is createSecret for a goroutine (no t.Fatal there).
func (c *conformance) createSecretNoFatal(key string) reply {
	req, _ := http.NewRequest("POST", strings.TrimSuffix(c.tg.BaseURL, "/")+c.p("/signing-secrets"), nil)
	req.SetBasicAuth(c.tg.APIKeyID, c.tg.APIKeySecret)
	req.Header.Set("X-Service-Version", "v2026.10.00")
	req.Header.Set("X-Idempotency-Key", key)
	resp, err := c.tg.HTTPClient.Do(req)
	if err != nil {
		return reply{Body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

func (c *conformance) providerRecord(t *testing.T) {
	r := c.req(t, "PATCH", c.p(""), `{"shortName":"Acme01"}`, nil)
	expect(t, r, http.StatusOK)
	if str(r.obj(t), "shortName") != "Acme01" {
		t.Fatalf("shortName: %s", r.Body)
	}
	expect(t, c.req(t, "PATCH", c.p(""), `{"shortName":"AB"}`, nil), http.StatusOK)
	expect(t, c.req(t, "PATCH", c.p(""), `{"shortName":"ABCDEFGHIJ12"}`, nil), http.StatusOK)
	for _, bad := range []string{`{"shortName":"A"}`, `{"shortName":"ABCDEFGHIJ123"}`, `{"shortName":"ab-c"}`,
		`{"shortName":"ab c"}`, `{"shortName":"Café"}`, `{}`, `{"shortName":12}`} {
		expectPointer(t, c.req(t, "PATCH", c.p(""), bad, nil), http.StatusBadRequest, "/shortName")
	}
	expectProblem(t, c.req(t, "PATCH", c.p(""), `{"shortName":`, nil), http.StatusBadRequest)
}
