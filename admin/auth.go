package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/ledger"
)

// call is one admitted request: who makes it, and its audit record in the
// making.
type call struct {
	r     *http.Request // with the call in its context
	route routeSpec
	actor ledger.Actor
	rec   ledger.AuditRecord
}

type callKey struct{}

// callOf returns the request's call (set by admit).
func callOf(r *http.Request) *call {
	c, _ := r.Context().Value(callKey{}).(*call)
	if c == nil {
		return &call{r: r}
	}
	return c
}

// actorOf returns who makes the request.
func actorOf(r *http.Request) ledger.Actor { return callOf(r).actor }

// setTarget adds name=value to what the request's audit record says it
// named or created.
func setTarget(r *http.Request, name, value string) {
	c := callOf(r)
	pair := name + "=" + auditText(value)
	for part := range strings.SplitSeq(c.rec.Target, ",") {
		if part == pair {
			return
		}
	}
	if c.rec.Target != "" {
		pair = "," + pair
	}
	c.rec.Target += pair
}

// refusal is a request refused before its handler: 401 (no actor) or 403
// (the actor lacks the route's scope).
type refusal struct {
	status int
	slug   string
	detail string
	// challenge is the WWW-Authenticate header (RFC 6750 §3).
	challenge string
	scope     string
}

func (e *refusal) Error() string { return e.detail }

func unauthorized(detail, errorCode string) *refusal {
	ch := `Bearer realm="ledgerd-admin"`
	if errorCode != "" {
		ch += `, error="` + errorCode + `"`
	}
	return &refusal{status: http.StatusUnauthorized, slug: slugUnauthorized, detail: detail, challenge: ch}
}

// admit authenticates the request and checks the route's scope. A refusal
// is answered 401 or 403 and recorded in the audit trail; an admitted
// request gets its call, whose record names the actor.
func (s *Handler) admit(w http.ResponseWriter, r *http.Request, ps httprouter.Params, rs routeSpec) (*call, bool) {
	c := &call{route: rs, rec: s.newRecord(r, rs, ps)}
	c.r = r.WithContext(context.WithValue(r.Context(), callKey{}, c))
	actor, err := s.authenticate(r)
	var ref *refusal
	if err == nil && !actor.Can(rs.scope) && s.authRequired(rs) {
		err = &refusal{status: http.StatusForbidden, slug: slugInsufficientScope, scope: rs.scope,
			detail:    "this route needs the scope " + rs.scope + "; the token " + actor.Name + " has " + strings.Join(actor.Scopes, ", "),
			challenge: `Bearer realm="ledgerd-admin", error="insufficient_scope", scope="` + rs.scope + `"`}
	}
	c.actor, c.rec.ActorID, c.rec.ActorName = actor, actor.ID, actor.Name
	switch {
	case errors.As(err, &ref):
		s.refuse(w, c, ref)
		return nil, false
	case err != nil:
		s.writeError(w, r, err) // the database, looking the token up
		return nil, false
	}
	return c, true
}

// authRequired reports whether the route needs a token at all on this
// handler (/metrics does not when it is public).
func (s *Handler) authRequired(rs routeSpec) bool {
	return rs.scope != "" && !(rs.path == "/metrics" && s.cfg.PublicMetrics)
}

// authenticate returns the request's actor: the break-glass token's
// (every scope), a named token's (its scopes, read from the database on
// every request, so that a revocation or an expiry holds at once on every
// replica), or, without a token on an admin API that requires none, the
// anonymous actor (every scope). A token that names no one is a 401.
func (s *Handler) authenticate(r *http.Request) (ledger.Actor, error) {
	none := ledger.Actor{ID: ledger.UnauthenticatedID, Name: ledger.UnauthenticatedID}
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		if s.cfg.Token == "" {
			return ledger.Actor{ID: ledger.AnonymousID, Name: ledger.AnonymousID, Scopes: ledger.Scopes()}, nil
		}
		return none, unauthorized("a bearer token is required", "")
	}
	token, ok := bearer(h)
	if !ok {
		return none, unauthorized("the Authorization header must be one Bearer <token>", "invalid_request")
	}
	if s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.Token)) == 1 {
		return ledger.Actor{ID: ledger.BreakGlassID, Name: ledger.BreakGlassName, Scopes: ledger.Scopes()}, nil
	}
	if s.cfg.DB == nil || !strings.HasPrefix(token, ledger.TokenPrefix) {
		return none, unauthorized("the bearer token is not valid", "invalid_token")
	}
	t, ok, err := s.cfg.DB.TokenByHash(r.Context(), ledger.TokenHash(token), s.cfg.Now())
	switch {
	case err != nil:
		return none, err
	case !ok:
		return none, unauthorized("the bearer token is unknown, revoked or expired", "invalid_token")
	}
	return ledger.Actor{ID: t.TokenID, Name: t.Name, Scopes: t.Scopes}, nil
}

// bearer reads the token of one "Bearer <token>" header; the scheme is
// case-insensitive (RFC 9110 §11.1), the token one b64token (RFC 6750).
func bearer(h []string) (string, bool) {
	if len(h) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(h[0], " ")
	token = strings.TrimLeft(token, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// refuse answers a refusal (401, 403) and records it in the audit trail,
// on its own, with a digest of the body when the route takes one.
func (s *Handler) refuse(w http.ResponseWriter, c *call, ref *refusal) {
	c.rec.Status = ref.status
	if c.r.Method != http.MethodGet {
		if body, err := readBody(w, c.r); err == nil {
			c.rec.BodyDigest = digest(body, c.route.redact)
		}
	}
	s.appendAlone(c.r, c.rec)
	w.Header().Set("WWW-Authenticate", ref.challenge)
	p := problem.New(ref.slug, ref.status, ref.detail)
	if ref.scope == "" {
		problem.Write(w, p)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ref.status)
	_ = json.NewEncoder(w).Encode(struct {
		*problem.Problem
		Scope string `json:"scope"`
	}{p, ref.scope})
}

// newRecord starts a request's audit record: when, the route, what its
// path names, and from where.
func (s *Handler) newRecord(r *http.Request, rs routeSpec, ps httprouter.Params) ledger.AuditRecord {
	rec := ledger.AuditRecord{RecordedAt: s.cfg.Now(), Scope: rs.scope, Method: r.Method, Route: template(rs.path), Source: r.RemoteAddr}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		rec.Source = host
	}
	for _, p := range ps {
		if rec.Target != "" {
			rec.Target += ","
		}
		rec.Target += p.Key + "=" + auditText(p.Value)
	}
	return rec
}

// auditText keeps what a request named storable and short in a record:
// valid UTF-8 without NUL, at most 256 bytes.
func auditText(v string) string {
	v = strings.ToValidUTF8(strings.ReplaceAll(v, "\x00", `\x00`), "\uFFFD")
	if len(v) > 256 {
		v = strings.ToValidUTF8(v[:256], "") + "…"
	}
	return v
}

// appendAlone appends rec on its own, not tied to the caller's
// connection; a record that cannot be written is logged at error level
// (without the body, which is never logged).
func (s *Handler) appendAlone(r *http.Request, rec ledger.AuditRecord) {
	if s.cfg.DB == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if _, err := s.cfg.DB.AppendAudit(ctx, rec); err != nil {
		s.log.Error("audit record lost", "method", rec.Method, "route", rec.Route, "actor", rec.ActorID, "status", rec.Status, "err", err)
	}
}
