package callbacks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/ledger"
)

// MaxBody is the largest callback body read (contract §2.1 step 1).
const MaxBody = 64 << 10

// DefaultBodyTimeout is how long a callback's body may take to arrive
// (Config.BodyTimeout): a few round trips of a 2 KiB body on a slow link,
// far below the request deadline.
const DefaultBodyTimeout = time.Second

// DefaultMaxBodyReads is how many bodies are read at once by default
// (Config.MaxBodyReads): 64 MiB of bodies at most.
const DefaultMaxBodyReads = 1024

// Decisions is what the callback server needs of the ledger's database:
// the four decision tables, each one statement that claims the key,
// decides, applies the effect and stores the answer (*store.DB implements
// it). A DB that also reports MaxConns() int sizes the default in-flight
// limit, and one that also reports OutstandingHolds feeds the holds
// gauges.
type Decisions interface {
	Authorize(context.Context, holds.AuthorizeParams) (ledger.Answer, error)
	Capture(context.Context, holds.CaptureParams) (ledger.Answer, error)
	Release(context.Context, holds.ReleaseParams) (ledger.Answer, error)
	Credit(context.Context, ledger.CreditParams) (ledger.Answer, error)
}

// pooled is a Decisions on a pool of connections.
type pooled interface{ MaxConns() int }

// HoldCounter counts the holds still held, for the holds gauges
// (*store.DB implements it).
type HoldCounter interface {
	OutstandingHolds(ctx context.Context, staleBefore time.Time) ([]holds.Outstanding, error)
}

// Config configures a callback Handler. Zero durations and thresholds take
// the defaults of contract §1.
type Config struct {
	DB          Decisions
	Keyring     *envelope.KeySet
	ProviderID  string
	Prefix      string // default /ledger; "/" serves the callbacks at the root (CheckPrefix)
	MaxInflight int    // default: 4 per pool connection (64 when DB is not a pool)
	// RequestTimeout bounds a callback from arrival to commit; past it the
	// transaction is rolled back and the answer is 408. Default 3s.
	RequestTimeout time.Duration
	// BodyTimeout bounds the reading of the body, from arrival: a body not
	// in by then is answered 408 body-timeout (nothing applied). Bodies are
	// read before an in-flight slot is taken, so slow senders hold no slot.
	// Default DefaultBodyTimeout, or a third of RequestTimeout when that is
	// less; never more than RequestTimeout.
	BodyTimeout time.Duration
	// MaxBodyReads bounds the bodies being read at once (each at most
	// MaxBody bytes: the memory slow senders can pin). A callback that finds
	// them all taken waits for one until a quarter of BodyTimeout past its
	// body deadline (then 429), and has at least that quarter to be read.
	// Default DefaultMaxBodyReads.
	MaxBodyReads int
	ClockLeeway  time.Duration // default 60s; negative means 0
	// MaxTokenLifetime bounds a request's exp - iat (longer is 400
	// invalid-claims): no request may outlive the stored answers of its
	// idempotency key. Default DefaultMaxTokenLifetime.
	MaxTokenLifetime time.Duration
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
	// StaleHoldAge is the age past which a held hold counts in
	// ledgerd_holds_stale (LEDGER_HOLD_MAX_AGE; default 264h).
	StaleHoldAge time.Duration
	// MetricsDB, when set, is what the holds gauges are read on (ledgerd
	// gives them a pool of their own, so that a scrape never waits for the
	// callbacks' connections); nil means DB when DB is a HoldCounter too,
	// else no holds gauges.
	MetricsDB HoldCounter
	// KeysMissing, when set and true, says that this replica knows of
	// active signing secrets it cannot decrypt (ledgerd: encrypted under a
	// KEK it was not given, during a KEK rotation): a request no key opens
	// is then answered 503 keyring-incomplete (retry: another replica may
	// open it) instead of 400 undecryptable.
	KeysMissing func() bool
}

// holdCounter is what the holds gauges are read on: MetricsDB, else DB
// when it counts holds too, else nil (no holds gauges).
func (c *Config) holdCounter() HoldCounter {
	if c.MetricsDB != nil {
		return c.MetricsDB
	}
	hc, _ := c.DB.(HoldCounter)
	return hc
}

// DefaultMaxTokenLifetime is the longest exp - iat of a request accepted by
// default: the service's requests live 300 s, and this leaves them room.
const DefaultMaxTokenLifetime = 10 * time.Minute

func (c *Config) defaults() error {
	if c.DB == nil || c.Keyring == nil || c.ProviderID == "" {
		return errors.New("callbacks: DB, Keyring and ProviderID are required")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if err := CheckPrefix(c.Prefix); err != nil {
		return fmt.Errorf("callbacks: Prefix: %w", err)
	}
	if c.MaxInflight <= 0 {
		c.MaxInflight = 64
		if p, ok := c.DB.(pooled); ok {
			c.MaxInflight = 4 * p.MaxConns()
		}
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 3 * time.Second
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = min(DefaultBodyTimeout, c.RequestTimeout/3)
	}
	c.BodyTimeout = min(c.BodyTimeout, c.RequestTimeout)
	if c.MaxBodyReads <= 0 {
		c.MaxBodyReads = DefaultMaxBodyReads
	}
	if c.ClockLeeway == 0 {
		c.ClockLeeway = 60 * time.Second
	}
	if c.ClockLeeway < 0 {
		c.ClockLeeway = 0
	}
	if c.MaxTokenLifetime <= 0 {
		c.MaxTokenLifetime = DefaultMaxTokenLifetime
	}
	if c.FraudDeny == nil {
		c.FraudDeny = ptr(0.90)
	}
	if c.FraudStepUp == nil {
		c.FraudStepUp = ptr(0.75)
	}
	if c.StaleHoldAge <= 0 {
		c.StaleHoldAge = 264 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Handler serves the four ledger callbacks (an http.Handler).
type Handler struct {
	cfg      Config
	db       Decisions
	router   *httprouter.Router
	sem      chan struct{} // in-flight slots
	reading  chan struct{} // bodies being read
	draining atomic.Bool
	m        *Metrics
	reads    prometheus.Gauge // ledgerd_callback_body_reads
	log      *slog.Logger
}

// New returns a callback Handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	s := &Handler{
		cfg:     cfg,
		db:      cfg.DB,
		router:  httprouter.New(),
		sem:     make(chan struct{}, cfg.MaxInflight),
		reading: make(chan struct{}, cfg.MaxBodyReads),
		m:       newMetrics(cfg.Registerer, cfg.holdCounter(), cfg.StaleHoldAge, cfg.Logger),
		reads: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ledgerd_callback_body_reads",
			Help: "Callback bodies being read (before an in-flight slot is taken).",
		}),
		log: cfg.Logger,
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.reads)
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
	for _, ep := range claims.Endpoints {
		r.POST(route(cfg.Prefix, ep), s.handler(ep))
	}
	return s, nil
}

// BodyReads returns the gauge of callback bodies being read.
func (s *Handler) BodyReads() prometheus.Gauge { return s.reads }

// Drain makes the server answer new callbacks 503 (shutting down) while
// those in flight finish; http.Server.Shutdown then waits for them.
func (s *Handler) Drain() { s.draining.Store(true) }

// ServeHTTP serves the callbacks. A panic is recovered and answered 500.
func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (s *Handler) handler(endpoint string) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		start := time.Now()
		a := s.serve(w, r, endpoint, start)
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		if a.problem != nil {
			a.status = a.problem.Status
			problem.Write(w, a.problem)
		} else {
			h.Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			_, _ = w.Write(a.body)
		}
		s.observe(r, endpoint, a, time.Since(start))
	}
}

// serve runs one callback through its stages: admit (draining, keyring),
// read the body (under its own deadline, before any in-flight slot), take
// an in-flight slot, then process.
func (s *Handler) serve(w http.ResponseWriter, r *http.Request, endpoint string, start time.Time) answer {
	if p := s.admit(); p != nil {
		abandonBody(w, r)
		return answer{problem: p}
	}
	raw, refused := s.readBody(w, r, start)
	if refused != nil {
		return *refused
	}
	release, p := s.slot()
	if p != nil {
		return answer{problem: p}
	}
	defer release()
	return s.process(r, endpoint, raw, start)
}

// process runs a callback whose body is read and which holds an in-flight
// slot: open (JWE), claims (validation), execute (the decision table in
// the database) and seal (the answer, encrypted).
func (s *Handler) process(r *http.Request, endpoint string, raw []byte, start time.Time) answer {
	opened, p := s.open(raw, endpoint)
	if p != nil {
		return answer{problem: p}
	}
	now := s.cfg.Now()
	var req claims.Request
	p = s.claims(opened, endpoint, now, &req)
	if req.Endpoint == "" {
		return answer{problem: p}
	}
	a := answer{subject: req.Subject()}
	if p != nil {
		a.problem = p
		return a
	}
	ans, err := s.execute(r, &req, opened.Key.Fingerprint(), now, start)
	if err != nil {
		a.problem, a.outcome = s.storeProblem(r, endpoint, err), outcomeOf(r, err)
		return a
	}
	switch ans.State {
	case ledger.StateMismatch:
		a.problem = problem.New(SlugKeyMismatch, http.StatusUnprocessableEntity, "the idempotency key was used with different claims")
		return a
	case ledger.StateAmountMismatch:
		a.problem = problem.New(SlugCreditAmount, http.StatusUnprocessableEntity,
			"the request for payment was credited for another amount; nothing was credited")
		return a
	case ledger.StateInvalid:
		a.problem = problem.New(SlugInvalidClaims, http.StatusBadRequest, "fraudScore must be from 0 to 1").
			WithField("/service/fraudScore", "fraudScore must be from 0 to 1")
		return a
	case ledger.StateReplay:
		a.replayed = true
	case ledger.StateNew:
	default:
		s.log.Error("callback statement answered an unknown state", "endpoint", endpoint, "state", ans.State)
		a.problem = problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
		return a
	}
	a.outcome = ans.Outcome
	if a.body, err = s.seal(opened, endpoint, req.IdempotencyKey(), ans); err != nil {
		// The effect is committed with its stored answer: a retry gets it.
		s.log.Error("sealing the callback response failed", "endpoint", endpoint, "err", err)
		a.problem = problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
		return a
	}
	a.status = http.StatusOK
	return a
}

func retryProblem(slug string, status int, detail string) *problem.Problem {
	p := problem.New(slug, status, detail)
	p.RetryAfter = time.Second
	return p
}

// admit refuses a callback before its body is read: while draining, and
// while the replica may hold a retired secret.
func (s *Handler) admit() *problem.Problem {
	if s.draining.Load() {
		return retryProblem(SlugShuttingDown, http.StatusServiceUnavailable, "the adapter is shutting down; retry")
	}
	if s.cfg.Check != nil {
		if err := s.cfg.Check(); err != nil {
			s.log.Warn("callback refused: replica not fit to open callbacks", "err", err)
			return retryProblem(SlugKeyringStale, http.StatusServiceUnavailable, "the adapter cannot confirm its signing secrets right now; retry")
		}
	}
	return nil
}

// slot takes an in-flight slot for a callback whose body is read, or
// refuses it (429) over the in-flight limit. The returned function frees
// the slot.
func (s *Handler) slot() (release func(), _ *problem.Problem) {
	select {
	case s.sem <- struct{}{}:
	default:
		return nil, retryProblem(SlugTooManyRequests, http.StatusTooManyRequests, "too many callbacks in flight; retry")
	}
	s.m.inflight.Inc()
	return func() {
		s.m.inflight.Dec()
		<-s.sem
	}, nil
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

func ptr[T any](v T) *T { return &v }
