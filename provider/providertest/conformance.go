package providertest

// RunConformance, its Target and Hooks, and the helpers the scenarios share;
// the scenarios themselves are in the conformance_*.go files by group.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
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
	// SeedPayout records a payout of amount from senderExternalID in status.
	SeedPayout func(senderExternalID string, amount Money, status string) (payoutID string, err error)
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
		SeedPayout: func(sender string, amount Money, status string) (string, error) {
			p, err := s.SeedPayout(pid, Payout{SenderExternalID: sender, Amount: amount, Status: status,
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
func expectProblem(t *testing.T, r reply, status int) wireProblem {
	t.Helper()
	expect(t, r, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	p := decode[wireProblem](t, r)
	if p.Type == "" || p.Title == "" || p.Status == nil || *p.Status != status || p.Detail == nil {
		t.Fatalf("problem lacks type, title, detail or status %d: %s", status, r.Body)
	}
	if p.Errors.IsSpecified() {
		list, ok := value(p.Errors)
		for _, e := range list {
			if e.Pointer == "" || e.Detail == "" {
				t.Fatalf("errors member lacks pointer or detail: %s", r.Body)
			}
		}
		if !ok || list == nil {
			t.Fatalf("errors is not an array: %s", r.Body)
		}
	}
	return p
}

func expectCode(t *testing.T, r reply, code string) {
	t.Helper()
	if p := expectProblem(t, r, http.StatusConflict); p.Code != code {
		t.Fatalf("code %q, want %q", p.Code, code)
	}
}

// expectPointer checks a validation problem names pointer.
func expectPointer(t *testing.T, r reply, status int, pointer string) {
	t.Helper()
	errs, _ := value(expectProblem(t, r, status).Errors)
	for _, e := range errs {
		if e.Pointer == pointer {
			return
		}
	}
	t.Fatalf("no error with pointer %s in %s", pointer, r.Body)
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
	id := decode[wireParticipant](t, r).ParticipantID
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
		st := decode[wireParticipant](t, r).Status
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
