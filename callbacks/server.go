package callbacks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/ledger"
)

// MaxBody is the largest callback body read (design 2.1 step 1).
const MaxBody = 64 << 10

// Endpoint names: the route suffixes and the required typ claims.
const (
	Authorize     = "authorize"
	Capture       = "capture"
	Release       = "release"
	CreditAccount = "credit-account"
)

// Endpoints lists the four callbacks.
var Endpoints = []string{Authorize, Capture, Release, CreditAccount}

// Config configures a callback Server. Zero durations and thresholds take
// the defaults of design section 1.
type Config struct {
	Pool        *pgxpool.Pool
	Keyring     *envelope.Keyring
	ProviderID  string
	Prefix      string // default /ledger; "/" serves the callbacks at the root (CheckPrefix)
	MaxInflight int    // default: 4 per pool connection
	// RequestTimeout bounds a callback from arrival to commit; past it the
	// transaction is rolled back and the answer is 408. Default 3s.
	RequestTimeout time.Duration
	ClockLeeway    time.Duration // default 60s; negative means 0
	// FraudDeny and FraudStepUp are the fraudScore thresholds; nil means
	// the defaults 0.90 and 0.75 (0 is a threshold like any other).
	FraudDeny   *float64
	FraudStepUp *float64
	CreditMax   *decimal.Decimal
	// Check, when set, runs before each callback; while it returns an error
	// callbacks are answered 503 (retry) with problem type keyring-stale.
	// ledgerd uses it to refuse callbacks while its keyring has not been
	// refreshed for a while: a secret may have been retired meanwhile.
	Check      func() error
	Now        func() time.Time
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

func (c *Config) defaults() error {
	if c.Pool == nil || c.Keyring == nil || c.ProviderID == "" {
		return errors.New("callbacks: Pool, Keyring and ProviderID are required")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if err := CheckPrefix(c.Prefix); err != nil {
		return fmt.Errorf("callbacks: Prefix: %w", err)
	}
	if c.MaxInflight <= 0 {
		c.MaxInflight = 4 * int(c.Pool.Config().MaxConns)
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 3 * time.Second
	}
	if c.ClockLeeway == 0 {
		c.ClockLeeway = 60 * time.Second
	}
	if c.ClockLeeway < 0 {
		c.ClockLeeway = 0
	}
	if c.FraudDeny == nil {
		c.FraudDeny = ptr(0.90)
	}
	if c.FraudStepUp == nil {
		c.FraudStepUp = ptr(0.75)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Server serves the four ledger callbacks.
type Server struct {
	cfg      Config
	store    store
	router   *httprouter.Router
	sem      chan struct{}
	draining atomic.Bool
	m        *Metrics
	log      *slog.Logger
}

// New returns a callback Server.
func New(cfg Config) (*Server, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		store:  store{pool: cfg.Pool},
		router: httprouter.New(),
		sem:    make(chan struct{}, cfg.MaxInflight),
		m:      newMetrics(cfg.Registerer, cfg.Pool),
		log:    cfg.Logger,
	}
	r := s.router
	r.HandleMethodNotAllowed = true
	// OPTIONS gets the 405 problem (with Cache-Control: no-store) like any
	// other method a route does not serve.
	r.HandleOPTIONS = false
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem.Write(w, problem.New(SlugNotFound, http.StatusNotFound, "no such callback route"))
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem.WriteMethodNotAllowed(w, problem.New(SlugMethodNotAllowed, http.StatusMethodNotAllowed, "callbacks are POST"))
	})
	for _, ep := range Endpoints {
		r.POST(route(cfg.Prefix, ep), s.handler(ep))
	}
	return s, nil
}

// Drain makes the server answer new callbacks 503 (shutting down) while
// those in flight finish; http.Server.Shutdown then waits for them.
func (s *Server) Drain() { s.draining.Store(true) }

// ServeHTTP serves the callbacks. A panic is recovered and answered 500.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("callback handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
			problem.Write(w, problem.New(SlugInternal, http.StatusInternalServerError, "internal error"))
		}
	}()
	s.router.ServeHTTP(w, r)
}

// answer is what one callback is answered with, and what is logged of it.
type answer struct {
	status   int
	body     []byte           // the 200 body
	problem  *problem.Problem // otherwise
	outcome  string           // business outcome, for logs and metrics
	subject  string           // payoutID or requestID
	replayed bool
}

func (s *Server) handler(endpoint string) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		start := time.Now()
		a := s.serve(r, endpoint, start)
		w.Header().Set("Cache-Control", "no-store")
		if a.problem != nil {
			a.status = a.problem.Status
			problem.Write(w, a.problem)
		} else {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			_, _ = w.Write(a.body)
		}
		elapsed := time.Since(start)
		outcome := a.outcome
		if outcome == "" {
			outcome = "error"
		}
		s.m.requests.WithLabelValues(endpoint, outcome, strconv.Itoa(a.status)).Inc()
		s.m.duration.WithLabelValues(endpoint).Observe(elapsed.Seconds())
		if a.replayed {
			s.m.replays.WithLabelValues(endpoint).Inc()
		}
		attrs := []any{"endpoint", endpoint, "status", a.status, "outcome", a.outcome,
			"latencyMs", float64(elapsed.Microseconds()) / 1000, "requestID", requestID(r)}
		if a.subject != "" {
			if endpoint == CreditAccount {
				attrs = append(attrs, "paymentRequestID", a.subject)
			} else {
				attrs = append(attrs, "payoutID", a.subject)
			}
		}
		if a.replayed {
			attrs = append(attrs, "replayed", true)
		}
		level := slog.LevelInfo
		if a.status >= 500 {
			level = slog.LevelError
		} else if a.status >= 400 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "callback", attrs...)
	}
}

// requestID is the caller's X-Request-Id when it is short and printable,
// else a fresh random one: it ties log lines to one HTTP request.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && printable(id) {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	r.Header.Set("X-Request-Id", id)
	return id
}

func printable(s string) bool {
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func (s *Server) serve(r *http.Request, endpoint string, start time.Time) answer {
	if s.draining.Load() {
		p := problem.New(SlugShuttingDown, http.StatusServiceUnavailable, "the adapter is shutting down; retry")
		p.RetryAfter = time.Second
		return answer{problem: p}
	}
	if s.cfg.Check != nil {
		if err := s.cfg.Check(); err != nil {
			s.log.Warn("callback refused: replica not fit to open callbacks", "err", err)
			p := problem.New(SlugKeyringStale, http.StatusServiceUnavailable, "the adapter cannot confirm its signing secrets right now; retry")
			p.RetryAfter = time.Second
			return answer{problem: p}
		}
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		p := problem.New(SlugTooManyRequests, http.StatusTooManyRequests, "too many callbacks in flight; retry")
		p.RetryAfter = time.Second
		return answer{problem: p}
	}
	s.m.inflight.Inc()
	defer s.m.inflight.Dec()

	// 1. Body: at most MaxBody, a JSON object with a string "request".
	raw, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return answer{problem: problem.New(SlugTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBody))}
		}
		return answer{problem: problem.New(SlugMalformedBody, http.StatusBadRequest, "the body could not be read")}
	}
	var body struct {
		Request *string `json:"request"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Request == nil {
		return answer{problem: problem.New(SlugMalformedBody, http.StatusBadRequest, `the body must be a JSON object with a string "request"`)}
	}

	// 2-4. Header, keys, inner form.
	opened, err := s.cfg.Keyring.Open(*body.Request)
	if err != nil {
		return answer{problem: s.envelopeProblem(endpoint, err)}
	}
	keyFP := opened.Key.Fingerprint()
	s.m.opens.WithLabelValues(keyFP).Inc()

	// 5. Registered claims.
	now := s.cfg.Now()
	hdr, err := envelope.ParseClaims(opened.Claims)
	if err == nil {
		err = hdr.Validate(now, s.cfg.ClockLeeway, endpoint)
	}
	if err != nil {
		return answer{problem: claimsProblem(err)}
	}
	f, err := newFields(hdr.Service)
	if err != nil {
		return answer{problem: problem.New(SlugInvalidClaims, http.StatusBadRequest, err.Error()).WithField("/service", err.Error())}
	}

	ctx, cancel := context.WithDeadline(r.Context(), start.Add(s.cfg.RequestTimeout))
	defer cancel()
	var a answer
	var res result
	switch endpoint {
	case Authorize:
		c := parseAuthorize(f)
		a.subject = c.PayoutID
		if p := s.checkClaims(f, c.ProviderID); p != nil {
			return answer{problem: p, subject: a.subject}
		}
		valid := c.FraudScore >= 0 && c.FraudScore <= 1
		risk := ""
		switch {
		case c.FraudScore >= *s.cfg.FraudDeny:
			risk = holds.RiskFraudSuspected
		case c.FraudScore >= *s.cfg.FraudStepUp:
			risk = holds.RiskStepUpRequired
		}
		res, err = s.store.authorize(ctx, c, keyFP, now, valid, risk)
	case Capture:
		c := parseCapture(f)
		a.subject = c.PayoutID
		if p := s.checkClaims(f, c.ProviderID); p != nil {
			return answer{problem: p, subject: a.subject}
		}
		res, err = s.store.capture(ctx, c, keyFP, now)
	case Release:
		c := parseRelease(f)
		a.subject = c.PayoutID
		if p := s.checkClaims(f, c.ProviderID); p != nil {
			return answer{problem: p, subject: a.subject}
		}
		res, err = s.store.release(ctx, c, keyFP, now)
	case CreditAccount:
		c := parseCredit(f)
		a.subject = c.RequestID
		if p := s.checkClaims(f, c.ProviderID); p != nil {
			return answer{problem: p, subject: a.subject}
		}
		var max any
		if s.cfg.CreditMax != nil {
			max = *s.cfg.CreditMax
		}
		res, err = s.store.credit(ctx, c, keyFP, now, max)
	}
	if res.retries > 0 {
		s.m.txRetries.WithLabelValues(endpoint).Add(float64(res.retries))
	}
	if err != nil {
		a.problem = s.storeProblem(ctx, endpoint, err)
		return a
	}
	switch res.state {
	case stateMismatch:
		a.problem = problem.New(SlugKeyMismatch, http.StatusUnprocessableEntity, "the idempotency key was used with different claims")
		return a
	case stateInvalid:
		a.problem = problem.New(SlugInvalidClaims, http.StatusBadRequest, "fraudScore must be from 0 to 1").
			WithField("/service/fraudScore", "fraudScore must be from 0 to 1")
		return a
	case stateReplay:
		a.replayed = true
	case stateNew:
	default:
		s.log.Error("callback statement answered an unknown state", "endpoint", endpoint, "state", res.state)
		a.problem = problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
		return a
	}
	if res.outcome == "" {
		s.log.Error("stored callback response has no outcome", "endpoint", endpoint)
		a.problem = problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
		return a
	}
	a.outcome = res.outcome
	claims, err := envelope.ResponseClaims(s.cfg.Now(), json.RawMessage(res.response))
	if err == nil {
		var token string
		if token, err = opened.Reply(claims); err == nil {
			a.body, err = json.Marshal(map[string]string{"response": token})
		}
	}
	if err != nil {
		// The effect is committed with its stored answer: a retry gets it.
		s.log.Error("sealing the callback response failed", "endpoint", endpoint, "err", err)
		a.problem = problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
		return a
	}
	a.status = http.StatusOK
	return a
}

// checkClaims applies design 2.1 steps 6 and 7: a providerID naming another
// provider is 403; missing or malformed claims are 400 with pointers.
func (s *Server) checkClaims(f *fields, providerID string) *problem.Problem {
	if providerID != "" && providerID != s.cfg.ProviderID {
		return problem.New(SlugWrongProvider, http.StatusForbidden, "the callback names another provider")
	}
	if len(f.errs) > 0 {
		p := problem.New(SlugInvalidClaims, http.StatusBadRequest, "required claims are missing or malformed")
		p.Errors = f.errs
		return p
	}
	return nil
}

func (s *Server) envelopeProblem(endpoint string, err error) *problem.Problem {
	switch {
	case errors.Is(err, envelope.ErrUnsupportedHeader):
		return problem.New(SlugUnsupportedHeader, http.StatusBadRequest, "the JWE header must be alg A256KW, enc A256GCM, without zip")
	case errors.Is(err, envelope.ErrUndecryptable):
		s.m.undecryptable.WithLabelValues(endpoint).Inc()
		return problem.New(SlugUndecryptable, http.StatusBadRequest, "no active signing secret opens the request")
	case errors.Is(err, envelope.ErrMalformedJWT):
		return problem.New(SlugMalformedJWT, http.StatusBadRequest, "the JWE payload is not a valid JWT")
	}
	return problem.New(SlugMalformedJWE, http.StatusBadRequest, "the request is not a compact JWE")
}

func claimsProblem(err error) *problem.Problem {
	detail := "the claims are malformed"
	switch {
	case errors.Is(err, envelope.ErrExpired):
		detail = "the request has expired (exp)"
	case errors.Is(err, envelope.ErrNotYetValid):
		detail = "the request is issued in the future (iat)"
	case errors.Is(err, envelope.ErrWrongType):
		detail = "typ does not match the route"
	case errors.Is(err, envelope.ErrMissingService):
		detail = "the service claim is missing"
	case errors.Is(err, envelope.ErrInexactString):
		detail = "a claim string has a lone or reversed surrogate escape or is not valid UTF-8"
	case errors.Is(err, envelope.ErrDuplicateMember):
		detail = "a claim appears twice in one object"
	}
	p := problem.New(SlugInvalidClaims, http.StatusBadRequest, detail)
	var ce *envelope.ClaimError
	if errors.As(err, &ce) {
		p.WithField(ce.Pointer(), detail)
	}
	return p
}

// storeProblem maps a failed callback statement to a retryable status:
// nothing was committed (or what was is the stored answer a retry gets).
func (s *Server) storeProblem(ctx context.Context, endpoint string, err error) *problem.Problem {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (ctx.Err() == context.DeadlineExceeded):
		s.log.Warn("callback deadline passed; rolled back", "endpoint", endpoint)
		return problem.New(SlugTimeout, http.StatusRequestTimeout, "the request deadline passed; nothing was applied; retry")
	case ledger.Retryable(err):
		s.log.Warn("callback transaction conflicts persisted", "endpoint", endpoint, "err", err)
		p := problem.New(SlugUnavailable, http.StatusServiceUnavailable, "the database is busy; retry")
		p.RetryAfter = time.Second
		return p
	case ledger.Unavailable(err) || errors.Is(err, context.Canceled):
		s.log.Warn("callback failed: database unavailable", "endpoint", endpoint, "err", err)
		p := problem.New(SlugUnavailable, http.StatusServiceUnavailable, "the database is unavailable; retry")
		p.RetryAfter = time.Second
		return p
	}
	s.log.Error("callback failed", "endpoint", endpoint, "err", err)
	return problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
}

func ptr[T any](v T) *T { return &v }
