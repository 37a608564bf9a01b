package providertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of a Service built with no options.
const (
	DefaultProviderID   = "local"
	DefaultAPIKeyID     = "test-key"
	DefaultAPIKeySecret = "test-secret"
	// DefaultVersion is the version applied when a request carries no
	// X-Service-Version (the spec does not show the real default).
	DefaultVersion = "v2026.10.00"
	// NestedSecretVersion is the first version whose signing-secret create
	// nests the secret under signingSecret and requires X-Idempotency-Key.
	NestedSecretVersion = "v2026.10.00"
	// TokenLifetime is the expires_in of every sender token, in seconds.
	TokenLifetime = 3600
	// IdempotencyRetention is how long a signing-secret X-Idempotency-Key is
	// remembered after its create completes.
	IdempotencyRetention = 24 * time.Hour
	// SupportOverrideMaxTTL bounds the expiresOn of a support override.
	SupportOverrideMaxTTL = 24 * time.Hour
)

// TransfersWriteScope returns the scope an API key needs to mint sender tokens
// for providerID.
func TransfersWriteScope(providerID string) string {
	return "/accounts/" + providerID + "/transfers.write"
}

// SignupDecision is what the signup fraud check decides for a new participant:
// Outcome (StatusActive or StatusDenied) takes effect After the registration.
type SignupDecision struct {
	Outcome string
	After   time.Duration
}

// SignupCheck decides the signup fraud check of a new participant.
type SignupCheck func(p Participant) SignupDecision

// SandboxSignupCheck is the sandbox convention: an externalID starting with
// "deny-" is denied, every other participant is cleared; either way the
// decision lands delay after registration.
func SandboxSignupCheck(delay time.Duration) SignupCheck {
	return func(p Participant) SignupDecision {
		if strings.HasPrefix(p.ExternalID, "deny-") {
			return SignupDecision{Outcome: StatusDenied, After: delay}
		}
		return SignupDecision{Outcome: StatusActive, After: delay}
	}
}

// APIKey is an API key the fake accepts with HTTP Basic.
type APIKey struct {
	ID         string
	Secret     string
	ProviderID string
	Scopes     []string
}

// Option configures a Service.
type Option func(*config)

type config struct {
	providerID     string
	keyID, secret  string
	clock          Clock
	signup         SignupCheck
	defaultVersion string
	platformMax    Limits
	onRelease      func(Release)
}

// WithProviderID sets the ID of the provider created at start (default "local").
func WithProviderID(id string) Option { return func(c *config) { c.providerID = id } }

// WithAPIKey sets the credentials of the API key created at start; the key
// carries the transfers.write scope.
func WithAPIKey(id, secret string) Option {
	return func(c *config) { c.keyID, c.secret = id, secret }
}

// WithClock sets the clock (default: the wall clock, in UTC).
func WithClock(clk Clock) Option { return func(c *config) { c.clock = clk } }

// WithSignupCheck sets the signup fraud check (default SandboxSignupCheck(0):
// "deny-" externalIDs are denied, others cleared, both at once).
func WithSignupCheck(check SignupCheck) Option { return func(c *config) { c.signup = check } }

// WithDefaultVersion sets the version applied to requests without
// X-Service-Version (default DefaultVersion).
func WithDefaultVersion(v string) Option { return func(c *config) { c.defaultVersion = v } }

// WithPlatformMaximum sets the platform maximum that clamps every resolved
// ceiling (default: none).
func WithPlatformMaximum(l Limits) Option { return func(c *config) { c.platformMax = l } }

// WithReleaseHook registers f to be called, outside the fake's lock, for every
// release callback the service would send.
func WithReleaseHook(f func(Release)) Option { return func(c *config) { c.onRelease = f } }

// Service is an in-memory implementation of the provider API. It is an
// http.Handler; NewServer serves one on a loopback listener. It is safe for
// concurrent use.
type Service struct {
	cfg config
	mux *http.ServeMux

	mu         sync.Mutex
	seq        int
	providers  map[string]*providerState
	keys       map[string]APIKey
	logins     map[string]login
	tokens     []Token
	releases   []Release
	requests   []RecordedRequest
	failures   []*Failure
	secretGate *Gate
}

type login struct {
	password      string
	providerID    string
	participantID string
}

// NewService returns a Service with one provider and one API key (see the
// options for their defaults).
func NewService(opts ...Option) *Service {
	cfg := config{
		providerID:     DefaultProviderID,
		keyID:          DefaultAPIKeyID,
		secret:         DefaultAPIKeySecret,
		clock:          realClock{},
		signup:         SandboxSignupCheck(0),
		defaultVersion: DefaultVersion,
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Service{
		cfg:       cfg,
		providers: map[string]*providerState{},
		keys:      map[string]APIKey{},
		logins:    map[string]login{},
	}
	s.AddProvider(cfg.providerID)
	s.AddAPIKey(APIKey{ID: cfg.keyID, Secret: cfg.secret, ProviderID: cfg.providerID,
		Scopes: []string{TransfersWriteScope(cfg.providerID)}})
	s.routes()
	return s
}

// ProviderID is the provider created at start.
func (s *Service) ProviderID() string { return s.cfg.providerID }

// APIKey returns the id and secret of the key created at start.
func (s *Service) APIKey() (id, secret string) { return s.cfg.keyID, s.cfg.secret }

// Now is the fake's clock reading.
func (s *Service) Now() time.Time { return s.cfg.clock.Now().UTC() }

// AddProvider creates a provider account (a no-op if it exists).
func (s *Service) AddProvider(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.providers[id]; !ok {
		s.providers[id] = newProviderState(id)
	}
}

// AddAPIKey adds or replaces an API key. Its provider is created if needed.
// A key without TransfersWriteScope(ProviderID) cannot mint tokens.
func (s *Service) AddAPIKey(k APIKey) {
	s.AddProvider(k.ProviderID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k.ID] = k
}

func (s *Service) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s_%06d", prefix, s.seq)
}

// ServeHTTP implements http.Handler.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// RecordedRequest is a request the fake received, kept for inspection.
type RecordedRequest struct {
	Route  string // the route pattern, e.g. "POST /providers/{providerID}/participants"
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	At     time.Time
}

// Requests returns the requests received so far, oldest first.
func (s *Service) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// LastRequest returns the most recent request on route ("" for any route).
func (s *Service) LastRequest(route string) (RecordedRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if route == "" || s.requests[i].Route == route {
			return s.requests[i], true
		}
	}
	return RecordedRequest{}, false
}

// ResetRequests forgets the recorded requests.
func (s *Service) ResetRequests() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

// Failure is an injected failure: the next Times requests matching Route are
// answered with Status (and Retry-After when set) instead of being served, or,
// with Disconnect, the connection is closed with no answer.
type Failure struct {
	Route      string // route pattern as in RecordedRequest.Route; "" matches every route
	Status     int    // default 503
	RetryAfter string
	Disconnect bool
	Times      int // default 1
}

// InjectFailure arms f. Failures are matched in the order they were armed.
func (s *Service) InjectFailure(f Failure) {
	if f.Times <= 0 {
		f.Times = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusServiceUnavailable
	}
	s.mu.Lock()
	s.failures = append(s.failures, &f)
	s.mu.Unlock()
}

// takeFailure must be called with s.mu held.
func (s *Service) takeFailure(route string) *Failure {
	for i, f := range s.failures {
		if f.Route == "" || f.Route == route {
			f.Times--
			if f.Times == 0 {
				s.failures = append(s.failures[:i], s.failures[i+1:]...)
			}
			c := *f
			return &c
		}
	}
	return nil
}

type bodyKey struct{}

// rawBody is the request body as received (handle buffers it).
func rawBody(r *http.Request) []byte {
	b, _ := r.Context().Value(bodyKey{}).([]byte)
	return b
}

// handlerFunc serves one route for an authenticated provider.
type handlerFunc func(w http.ResponseWriter, r *http.Request, providerID string)

const maxBody = 1 << 20

var versionRe = regexp.MustCompile(`^v[0-9]{4}\.[0-9]{2}\.[0-9]{2}$`)

// handle registers route; providerScoped routes authenticate the API key and
// check the path's providerID against it.
func (s *Service) handle(route string, providerScoped bool, h handlerFunc) {
	s.mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			problem(w, r, http.StatusBadRequest, "invalid-request", "Invalid request",
				"request body unreadable or larger than "+strconv.Itoa(maxBody)+" bytes")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
		s.mu.Lock()
		s.requests = append(s.requests, RecordedRequest{Route: route, Method: r.Method, Path: r.URL.Path,
			Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: s.Now()})
		f := s.takeFailure(route)
		s.mu.Unlock()
		if f != nil {
			injectFailure(w, r, f)
			return
		}
		if v := r.Header.Get("X-Service-Version"); v != "" && !versionRe.MatchString(v) {
			problem(w, r, http.StatusBadRequest, "invalid-request", "Malformed X-Service-Version",
				"X-Service-Version must look like v2026.10.00")
			return
		}
		if !providerScoped {
			h(w, r, "")
			return
		}
		key, ok := s.authenticate(r)
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		pid := r.PathValue("providerID")
		if key.ProviderID != pid {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		h(w, r, pid)
	})
}

func injectFailure(w http.ResponseWriter, r *http.Request, f *Failure) {
	if f.Disconnect {
		if hj, ok := w.(http.Hijacker); ok {
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	problem(w, r, f.Status, "injected-failure", http.StatusText(f.Status), "failure injected by providertest")
}

// authenticate resolves HTTP Basic API-key credentials.
func (s *Service) authenticate(r *http.Request) (APIKey, bool) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		return APIKey{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok || k.Secret != secret {
		return APIKey{}, false
	}
	return k, true
}

// version is the request's effective API version.
func (s *Service) version(r *http.Request) string {
	if v := r.Header.Get("X-Service-Version"); v != "" {
		return v
	}
	return s.cfg.defaultVersion
}

func (s *Service) routes() {
	s.mux = http.NewServeMux()
	p := "/providers/{providerID}"
	s.handle("POST /provider-participant-token", false, s.createToken)
	s.handle("POST "+p+"/participants", true, s.createParticipant)
	s.handle("GET "+p+"/participants/{participantID}", true, s.getParticipant)
	s.handle("GET "+p+"/limit-groups", true, s.listGroups)
	s.handle("POST "+p+"/limit-groups", true, s.createGroup)
	s.handle("PATCH "+p+"/limit-groups/{groupID}", true, s.patchGroup)
	s.handle("GET "+p+"/limit-groups/{groupID}/members", true, s.listMembers)
	s.handle("PUT "+p+"/limit-groups/{groupID}/members/{participantID}", true, s.putMember)
	s.handle("DELETE "+p+"/limit-groups/{groupID}/members/{participantID}", true, s.deleteMember)
	s.handle("PUT "+p+"/participants/{participantID}/limits", true, s.putOverride)
	s.handle("DELETE "+p+"/participants/{participantID}/limits", true, s.deleteOverride)
	s.handle("GET "+p+"/limits", true, s.getPolicy)
	s.handle("GET "+p+"/reviews", true, s.listReviews)
	s.handle("GET "+p+"/reviews/{reviewID}", true, s.getReview)
	s.handle("POST "+p+"/reviews/{reviewID}/resolutions", true, s.resolveReview)
	s.handle("GET "+p+"/participants/{participantID}/payments", true, s.listPayments)
	s.handle("POST "+p+"/participants/{participantID}/funding-sources", true, s.createFundingSource)
	s.handle("GET "+p+"/participants/{participantID}/funding-sources/{fundingSourceID}", true, s.getFundingSource)
	s.handle("PATCH "+p+"/participants/{participantID}/funding-sources/{fundingSourceID}", true, s.patchFundingSource)
	s.handle("GET "+p+"/signing-secrets", true, s.listSecrets)
	s.handle("POST "+p+"/signing-secrets", true, s.createSecret)
	s.handle("PATCH "+p, true, s.patchProvider)
}

// ---- responses ----

type fieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

type problemBody struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"` // always sent: Errors, rule 1
	Code   string       `json:"code,omitempty"`
	Errors []fieldError `json:"errors,omitempty"`
}

func problemType(r *http.Request, slug string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/errors#" + slug
}

func writeProblem(w http.ResponseWriter, r *http.Request, p problemBody) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

func problem(w http.ResponseWriter, r *http.Request, status int, slug, title, detail string) {
	writeProblem(w, r, problemBody{Type: problemType(r, slug), Title: title, Status: status, Detail: detail})
}

func conflict(w http.ResponseWriter, r *http.Request, code, title, detail string) {
	writeProblem(w, r, problemBody{Type: problemType(r, code), Title: title, Status: http.StatusConflict,
		Detail: detail, Code: code})
}

func notFound(w http.ResponseWriter, r *http.Request, what string) {
	problem(w, r, http.StatusNotFound, "not-found", "Not found", what+" not found")
}

func invalid(w http.ResponseWriter, r *http.Request, detail string) {
	problem(w, r, http.StatusBadRequest, "invalid-request", "Invalid request", detail)
}

// validation collects field errors for a 400 or 422 answer.
type validation []fieldError

func (v *validation) add(pointer, detail string) { *v = append(*v, fieldError{pointer, detail}) }

func (v validation) write(w http.ResponseWriter, r *http.Request, status int) bool {
	if len(v) == 0 {
		return false
	}
	slug := "validation-failed"
	if status == http.StatusBadRequest {
		slug = "invalid-request"
	}
	writeProblem(w, r, problemBody{Type: problemType(r, slug), Title: "Validation failed", Status: status,
		Detail: fmt.Sprintf("%d field(s) failed validation", len(v)), Errors: v})
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeBody decodes a JSON object body; it answers 400 and returns false when
// the body is empty or malformed.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		invalid(w, r, "body must be a JSON object: "+err.Error())
		return false
	}
	if dec.More() {
		invalid(w, r, "body must be a single JSON object")
		return false
	}
	return true
}

// ---- pagination ----

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(b, []byte("o:")) {
		return 0, errors.New("malformed cursor")
	}
	n, err := strconv.Atoi(string(b[2:]))
	if err != nil || n < 0 {
		return 0, errors.New("malformed cursor")
	}
	return n, nil
}

// pageParams parses limit and cursor; it answers 400 and returns false when
// either is bad.
func pageParams(w http.ResponseWriter, r *http.Request) (offset, limit int, ok bool) {
	q := r.URL.Query()
	limit = 25
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			invalid(w, r, "limit must be an integer from 1 to 100")
			return 0, 0, false
		}
		limit = n
	}
	if c := q.Get("cursor"); c != "" {
		n, err := decodeCursor(c)
		if err != nil {
			invalid(w, r, "cursor is not one this server issued")
			return 0, 0, false
		}
		offset = n
	}
	return offset, limit, true
}

// ---- gate ----

// Gate holds signing-secret creates in flight so a test can observe the
// idempotency-request-in-progress rule. Obtain one from
// Service.GateSigningSecretCreates.
type Gate struct {
	entered chan string
	open    chan struct{}
	once    sync.Once
}

// Entered delivers the X-Idempotency-Key of each create as it starts waiting.
func (g *Gate) Entered() <-chan string { return g.entered }

// Open lets every waiting and future create proceed.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// GateSigningSecretCreates makes every later signing-secret create wait, with
// its key marked in progress, until the returned gate is opened. Pass it to
// t.Cleanup(g.Open) so a failing test does not hang.
func (s *Service) GateSigningSecretCreates() *Gate {
	g := &Gate{entered: make(chan string, 64), open: make(chan struct{})}
	s.mu.Lock()
	s.secretGate = g
	s.mu.Unlock()
	return g
}
