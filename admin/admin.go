package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
)

// MaxBody is the largest request body the admin API reads.
const MaxBody = 64 << 10

// Config wires the admin API.
type Config struct {
	// DB is the ledger's database. Nil only in tests of routes that need
	// none: then named tokens are refused and nothing is audited.
	DB Ledger
	// Token, when set, is LEDGER_ADMIN_TOKEN: the break-glass token, with
	// every scope. When it is unset, a request without a token is the
	// anonymous actor with every scope (ledgerd allows that only on a
	// loopback admin listener), and a named token is still its own actor.
	Token string
	// PublicMetrics serves /metrics without a token. /metrics shows
	// outstanding holds per currency and key fingerprints; ledgerd sets
	// this on a loopback admin listener or with LEDGER_METRICS_PUBLIC.
	PublicMetrics bool
	// Ready reports readiness for /readyz (nil: always ready); a
	// *NotReadyError names each reason.
	Ready func(context.Context) error
	// Metrics serves /metrics (nil: no route).
	Metrics http.Handler
	// Secrets, when set, serves /v1/signing-secrets.
	Secrets SecretStore
	// Reconciler, when set, serves POST /v1/reconciliation/runs.
	Reconciler Reconciler
	// ApprovalOver, when set (LEDGER_ADJUSTMENT_APPROVAL_OVER), is dual
	// control's threshold: an adjustment whose absolute amount is over it,
	// in the account's currency, waits for another actor's approval.
	ApprovalOver *decimal.Decimal
	// ApprovalTTL is how long an adjustment waits for approval before it
	// expires (LEDGER_ADJUSTMENT_APPROVAL_TTL; default 24 h).
	ApprovalTTL time.Duration
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// defaultApprovalTTL is how long an adjustment waits for approval unless
// Config.ApprovalTTL says otherwise.
const defaultApprovalTTL = 24 * time.Hour

// Ledger is what the admin API needs of the ledger's database: accounts,
// instruments, holds and the journal, and the bank's controls (the audit
// trail, tokens, dual control), each method one transaction (*store.DB
// implements it). Under AuditTrail.Audited, the methods a write calls run
// in the write's transaction.
type Ledger interface {
	CreateAccount(ctx context.Context, n ledger.NewAccount) (ledger.Account, error)
	GetAccount(ctx context.Context, accountID string) (ledger.Account, error)
	SetAccountStatus(ctx context.Context, accountID, status string) (ledger.Account, error)
	ListAccounts(ctx context.Context, o ledger.AccountListOptions) (ledger.AccountPage, error)
	AddInstrument(ctx context.Context, in ledger.Instrument) (ledger.Instrument, bool, error)
	GetHold(ctx context.Context, holdReference string) (holds.Hold, error)
	ListHolds(ctx context.Context, o holds.ListOptions) (holds.Page, error)
	ListTransactions(ctx context.Context, o ledger.JournalOptions) (ledger.TransactionPage, error)
	ListEntries(ctx context.Context, o ledger.JournalOptions) (ledger.EntryPage, error)
	// Statement reads an account's statement for a period in one
	// snapshot: summary once, then entry for each entry, oldest first.
	Statement(ctx context.Context, o ledger.StatementOptions, summary func(ledger.StatementSummary) error, entry func(ledger.Entry) error) error
	AuditTrail
	Tokens
	DualControl
}

// AuditTrail is the audit trail in the database.
type AuditTrail interface {
	// Audited runs fn, an admin write, in one transaction, and appends
	// the record fn returns last in it; on an error nothing is committed.
	Audited(ctx context.Context, fn func(context.Context) (ledger.AuditRecord, error)) (ledger.AuditRecord, error)
	// AppendAudit appends a record on its own.
	AppendAudit(ctx context.Context, rec ledger.AuditRecord) (ledger.AuditRecord, error)
	ListAudit(ctx context.Context, o ledger.AuditListOptions) (ledger.AuditPage, error)
}

// Tokens are the named admin tokens in the database.
type Tokens interface {
	CreateToken(ctx context.Context, n ledger.NewAdminToken) (ledger.AdminToken, error)
	ListTokens(ctx context.Context) ([]ledger.AdminToken, error)
	RevokeToken(ctx context.Context, tokenID string, now time.Time) (ledger.AdminToken, error)
	// TokenByHash returns the live token with that hash at now.
	TokenByHash(ctx context.Context, hash []byte, now time.Time) (ledger.AdminToken, bool, error)
}

// DualControl is dual control of adjustments in the database (the one
// decision: ledger_adjustment_decide).
type DualControl interface {
	RequestAdjustment(ctx context.Context, p ledger.AdjustmentParams) (ledger.AdjustmentOutcome, error)
	DecideAdjustment(ctx context.Context, d ledger.AdjustmentDecision) (ledger.PendingAdjustment, error)
	GetPendingAdjustment(ctx context.Context, adjustmentID string, now time.Time) (ledger.PendingAdjustment, error)
	ListPendingAdjustments(ctx context.Context, o ledger.PendingListOptions) (ledger.PendingPage, error)
}

// SecretStore manages the signing secrets of the callback keyring (package
// keyring.Vault implements it over the database).
type SecretStore interface {
	// List returns every secret, active and retired, newest first.
	List(ctx context.Context) ([]SecretInfo, error)
	// Add stores a 32-byte secret. Adding an active secret again returns it
	// with created false; a retired one is a ledger.CodeConflict error.
	Add(ctx context.Context, secret []byte) (info SecretInfo, created bool, err error)
	// Generate creates and stores a random secret and returns it once.
	Generate(ctx context.Context) (SecretInfo, []byte, error)
	// Retire stops the secret opening callbacks; retiring a retired secret
	// is a no-op; an unknown ID is a ledger.CodeNotFound error.
	Retire(ctx context.Context, secretID string) error
	// Rekey re-encrypts the active secrets under the current KEK (see
	// keyring.Vault.Rekey).
	Rekey(ctx context.Context, kekFingerprint string) (keyring.RekeyResult, error)
}

// keyring.Vault is the SecretStore ledgerd wires in (server); the
// assertion sits beside the interface, as keyring cannot import admin.
var _ SecretStore = (*keyring.Vault)(nil)

// SecretInfo describes a signing secret without its value.
type SecretInfo = keyring.SecretInfo

// Handler is the admin API (an http.Handler).
type Handler struct {
	cfg    Config
	router *httprouter.Router
	log    *slog.Logger
	routes []Route
}

// Route is a route the admin API serves.
type Route struct {
	Method string
	// Path is in the router's syntax: /v1/accounts/:accountID.
	Path string
	// Auth is true when the route requires a token (when one is
	// configured: see Config.Token).
	Auth bool
	// Scope is the scope the route needs; "" for the open routes.
	Scope string
}

// Routes returns every route registered, in the order of registration.
func (s *Handler) Routes() []Route { return slices.Clone(s.routes) }

// New returns the admin API on cfg.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ApprovalTTL <= 0 {
		cfg.ApprovalTTL = defaultApprovalTTL
	}
	s := &Handler{cfg: cfg, router: httprouter.New(), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	r := s.router
	r.HandleMethodNotAllowed = true
	// OPTIONS gets the 405 problem (with Cache-Control: no-store) like any
	// other method a route does not serve.
	r.HandleOPTIONS = false
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem.Write(w, problem.New(slugNotFound, http.StatusNotFound, "no such route"))
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		problem.WriteMethodNotAllowed(w, problem.New(slugMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed on this route"))
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		if v == http.ErrAbortHandler {
			panic(v) // a streamed answer cut on purpose: net/http closes the connection
		}
		s.log.Error("admin handler panicked", "path", req.URL.Path, "panic", fmt.Sprint(v))
		problem.Write(w, problem.New(slugInternal, http.StatusInternalServerError, "internal error"))
	}
	s.open(http.MethodGet, "/healthz", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.open(http.MethodGet, "/readyz", s.readyz)
	if cfg.Metrics != nil {
		metrics := func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
			cfg.Metrics.ServeHTTP(w, r)
			return nil
		}
		if cfg.PublicMetrics {
			s.open(http.MethodGet, "/metrics", func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) { _ = metrics(w, r, ps) })
		} else {
			// /metrics shows holds outstanding per currency and key
			// fingerprints: behind a token like /v1/*.
			s.stream(http.MethodGet, "/metrics", metrics)
		}
	}
	s.open(http.MethodGet, "/openapi.json", s.openAPI)
	s.handle(http.MethodPost, "/v1/accounts", s.createAccount)
	s.handle(http.MethodGet, "/v1/accounts/:accountID", s.getAccount)
	s.handle(http.MethodPatch, "/v1/accounts/:accountID", s.patchAccount)
	s.handle(http.MethodPost, "/v1/instruments", s.addInstrument)
	s.handle(http.MethodGet, "/v1/holds", s.listHolds)
	s.handle(http.MethodGet, "/v1/holds/:holdReference", s.getHold)
	s.registerReadback()
	s.registerDualControl()
	s.registerControls()
	if cfg.Secrets != nil {
		s.registerSecrets()
	}
	if cfg.Reconciler != nil {
		s.registerReconciliation()
	}
	return s
}

// handlerFunc answers a JSON route with the value to send and its status,
// or an error that writeError maps.
type handlerFunc func(*http.Request, httprouter.Params) (int, any, error)

// handle adds a route that needs a token with the route table's scope.
// A write (any method but GET) is audited: in its own transaction when
// it is one (see write), else once it has ended.
func (s *Handler) handle(method, path string, h handlerFunc) {
	rt := s.register(method, path)
	s.router.Handle(method, path, func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		c, ok := s.admit(w, r, ps, rt)
		if !ok {
			return
		}
		if method != http.MethodGet {
			s.write(w, c, ps, h)
			return
		}
		if err := validRequest(c.r, ps); err != nil {
			s.writeError(w, c.r, err)
			return
		}
		status, v, err := h(c.r, ps)
		if err != nil {
			s.writeError(w, c.r, err)
			return
		}
		respond(w, status, v)
	})
}

// stream adds a read route that needs a token and whose handler writes
// its own answer (a statement, /metrics). An error it returns before
// writing anything is answered as writeError maps it.
func (s *Handler) stream(method, path string, h func(http.ResponseWriter, *http.Request, httprouter.Params) error) {
	rt := s.register(method, path)
	s.router.Handle(method, path, func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		c, ok := s.admit(w, r, ps, rt)
		if !ok {
			return
		}
		if err := validRequest(c.r, ps); err != nil {
			s.writeError(w, c.r, err)
			return
		}
		if err := h(w, c.r, ps); err != nil {
			s.writeError(w, c.r, err)
		}
	})
}

// open adds a route that needs no token (probes, a public /metrics, the
// API's description).
func (s *Handler) open(method, path string, h httprouter.Handle) {
	s.register(method, path)
	s.router.Handle(method, path, h)
}

// respond writes v as JSON with status, or the status alone when v is nil.
func respond(w http.ResponseWriter, status int, v any) {
	if v == nil {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, v)
}

// validRequest returns a 400 error when a path parameter or a query
// value is not text Postgres can hold (NUL, invalid UTF-8), or the query
// is malformed, before any handler runs: such an ID can name nothing,
// and saying so is more use than a 404.
func validRequest(r *http.Request, ps httprouter.Params) error {
	if err := checkPath(ps); err != nil {
		return err
	}
	_, err := parseQuery(r.URL.RawQuery)
	return err
}

// ServeHTTP serves the admin API.
func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
