package callbacks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/ledger"
)

// readBody reads the body (contract §2.1 step 1, at most MaxBody, else 413)
// before the callback takes an in-flight slot, under a deadline of its own
// (BodyTimeout from arrival): a sender whose body is ready is served
// whatever slow senders are doing, and a slow one is answered 408
// body-timeout once its time is up, nothing applied. At most MaxBodyReads
// bodies are read at once; a callback that finds none free waits for one,
// and if it got one late, its body gets a quarter of BodyTimeout to be
// read (the places free up at the body timeouts of those that hold them,
// which came in earlier). refused is the answer when no body was read.
func (s *Handler) readBody(w http.ResponseWriter, r *http.Request, start time.Time) (body []byte, refused *answer) {
	grace := s.cfg.BodyTimeout / 4
	deadline := start.Add(s.cfg.BodyTimeout)
	if !s.startReading(r.Context(), deadline.Add(grace)) {
		return nil, &answer{problem: retryProblem(SlugTooManyRequests, http.StatusTooManyRequests, "too many callback bodies being read; retry")}
	}
	defer s.stopReading()
	deadline = later(deadline, time.Now().Add(grace))
	rc := http.NewResponseController(w)
	// A ResponseWriter that cannot (http.ErrNotSupported) leaves the
	// server's ReadTimeout alone to bound the body.
	_ = rc.SetReadDeadline(deadline)
	raw, err := readAll(http.MaxBytesReader(nil, r.Body, MaxBody), r.ContentLength)
	if err == nil {
		// Lift the deadline: net/http goes on reading the connection in
		// the background (to notice the client leaving), and a deadline
		// passing there would cancel the request's context.
		_ = rc.SetReadDeadline(time.Time{})
		return raw, nil
	}
	abandonBody(w, r)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, &answer{problem: problem.New(SlugTooLarge, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBody))}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, &answer{outcome: outcomeBodyTimeout, problem: problem.New(SlugBodyTimeout, http.StatusRequestTimeout,
			fmt.Sprintf("the body did not arrive within %s; nothing was applied; retry", s.cfg.BodyTimeout))}
	}
	return nil, &answer{problem: problem.New(SlugMalformedBody, http.StatusBadRequest, "the body could not be read")}
}

// readAll is io.ReadAll into a buffer sized by the request's
// Content-Length when it gives one within MaxBody (one allocation instead
// of a doubling from 512 bytes); the limit is rd's, whatever it says.
func readAll(rd io.Reader, contentLength int64) ([]byte, error) {
	size := 512
	if contentLength > 0 && contentLength <= MaxBody {
		size = int(contentLength) + 1 // room to read EOF without growing
	}
	b := make([]byte, 0, size)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// abandonBody gives up on the rest of the body: net/http then answers at
// once and closes the connection, instead of first reading up to 256 KiB
// more of the body at the sender's pace (closing the body alone would read
// them too, under no deadline).
func abandonBody(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	_ = r.Body.Close()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// startReading takes one of the MaxBodyReads places, waiting for one no
// later than until; stopReading gives it back.
func (s *Handler) startReading(ctx context.Context, until time.Time) bool {
	select {
	case s.reading <- struct{}{}:
	default:
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		select {
		case s.reading <- struct{}{}:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	s.reads.Inc()
	return true
}

func (s *Handler) stopReading() {
	s.reads.Dec()
	<-s.reading
}

// outcomeBodyTimeout is the outcome label of a callback whose body did not
// arrive within BodyTimeout.
const outcomeBodyTimeout = "body_timeout"

// open opens the body's JWE with the keyring (contract §2.1 steps 2 to 4).
func (s *Handler) open(raw []byte, endpoint string) (envelope.Opened, *problem.Problem) {
	token, ok := requestToken(raw)
	if !ok {
		return envelope.Opened{}, problem.New(SlugMalformedBody, http.StatusBadRequest, `the body must be a JSON object with a string "request"`)
	}
	opened, err := s.cfg.Keyring.Open(token)
	if err != nil {
		return envelope.Opened{}, s.envelopeProblem(endpoint, err)
	}
	s.m.opens.WithLabelValues(opened.Key.Fingerprint()).Inc()
	return opened, nil
}

// requestToken returns the string member "request" of the JSON object
// body: exactly one, an exact string (no lone surrogate escape, valid
// UTF-8); other members are ignored.
func requestToken(body []byte) (string, bool) {
	if token, ok := plainRequestToken(body); ok {
		return token, true
	}
	return anyRequestToken(body)
}

// anyRequestToken is requestToken for any body, with the JSON scanner.
func anyRequestToken(body []byte) (string, bool) {
	if !json.Valid(body) {
		return "", false
	}
	var token []byte
	n := 0
	err := strictjson.EachMember(body, func(name, value []byte) error {
		if string(name) != `"request"` {
			if n, ok := strictjson.UnquoteBytes(name); !ok || string(n) != "request" {
				return nil
			}
		}
		n++
		if len(value) == 0 || value[0] != '"' {
			return errNotString
		}
		var ok bool
		if token, ok = strictjson.UnquoteBytes(value); !ok {
			return errNotString
		}
		return nil
	})
	if err != nil || n != 1 {
		return "", false
	}
	return string(token), true
}

var errNotString = errors.New("not a string")

// plainRequestToken reads the body the service sends, exactly
// {"request":"<token>"} with a token of Base64url characters and dots,
// without a pass of the JSON scanner: such a body is a valid object whose
// one member is that string, unescaped. ok is false for any other body,
// which requestToken then reads in full.
func plainRequestToken(body []byte) (string, bool) {
	const head, tail = `{"request":"`, `"}`
	if len(body) < len(head)+len(tail) || string(body[:len(head)]) != head || string(body[len(body)-len(tail):]) != tail {
		return "", false
	}
	token := body[len(head) : len(body)-len(tail)]
	for _, c := range token {
		if !tokenChar[c] {
			return "", false
		}
	}
	return string(token), true
}

// tokenChar holds the characters of a compact JWE: the Base64url
// alphabet and the dot.
var tokenChar = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") {
		t[c] = true
	}
	return t
}()

// claims checks and decodes the claims in one pass (contract §2.1 step 5,
// the business claims of steps 6 and 7) into req. The problem is nil when
// the request can be decided; req.Endpoint is "" when the claims are
// unusable, else req names the subject for the log line.
func (s *Handler) claims(opened envelope.Opened, endpoint string, now time.Time, req *claims.Request) *problem.Problem {
	err := claims.Decode(opened.Claims, endpoint, claims.Options{Now: now, Leeway: s.cfg.ClockLeeway, MaxLifetime: s.cfg.MaxTokenLifetime, ProviderID: s.cfg.ProviderID}, req)
	var fe claims.FieldErrors
	switch {
	case err == nil:
		return nil
	case errors.Is(err, claims.ErrWrongProvider):
		return problem.New(SlugWrongProvider, http.StatusForbidden, "the callback names another provider")
	case errors.As(err, &fe):
		p := problem.New(SlugInvalidClaims, http.StatusBadRequest, "required claims are missing or malformed")
		p.Errors = fe
		return p
	}
	req.Endpoint = ""
	return claimsProblem(err)
}

// execute runs the endpoint's decision table in the database, bounded by
// the request's deadline (LEDGER_REQUEST_TIMEOUT from arrival). The work
// does not stop when the caller goes away: what it commits is the stored
// answer of the key, which the caller's retry gets.
func (s *Handler) execute(r *http.Request, req *claims.Request, keyFP string, now, start time.Time) (ledger.Answer, error) {
	ctx, cancel := context.WithDeadline(context.WithoutCancel(r.Context()), start.Add(s.cfg.RequestTimeout))
	defer cancel()
	var ans ledger.Answer
	var err error
	switch req.Endpoint {
	case claims.Authorize:
		ans, err = s.db.Authorize(ctx, req.Authorize.Params(keyFP, now, *s.cfg.FraudDeny, *s.cfg.FraudStepUp))
	case claims.Capture:
		ans, err = s.db.Capture(ctx, req.Capture.Params(keyFP, now))
	case claims.Release:
		ans, err = s.db.Release(ctx, req.Release.Params(keyFP, now))
	default:
		ans, err = s.db.Credit(ctx, req.Credit.Params(keyFP, now, s.cfg.CreditMax))
	}
	if ans.Runs > 1 {
		s.m.txRetries.WithLabelValues(req.Endpoint).Add(float64(ans.Runs - 1))
	}
	return ans, err
}

// seal builds the answer's claims (contract §2.1) and encrypts them with the
// key that opened the request, in the request's inner form, into the body
// {"response":"<compact JWE>"}, made in one buffer.
func (s *Handler) seal(opened envelope.Opened, endpoint, key string, ans ledger.Answer) ([]byte, error) {
	answer := claims.AnswerClaims(s.cfg.Now(), endpoint, key, ans.Decision)
	b, err := opened.AppendReply([]byte(`{"response":"`), answer)
	if err != nil {
		return nil, err
	}
	// base64url and dots: nothing to escape
	return append(b, `"}`...), nil
}

// observe counts, times and logs one answered callback: one line per
// callback, at INFO, WARN for a refused request, ERROR for a failure.
func (s *Handler) observe(r *http.Request, endpoint string, a answer, elapsed time.Duration) {
	outcome := a.outcome
	if outcome == "" {
		outcome = "error"
	}
	if r.Context().Err() != nil && outcome != outcomeBodyTimeout {
		// The caller went away before the answer: counted apart, logged
		// at INFO; a retry gets the stored answer. (A body that timed out
		// cancels the context too: net/http's read failed.)
		outcome = outcomeCanceled
	}
	s.m.requests.WithLabelValues(endpoint, outcome, statusText(a.status)).Inc()
	s.m.duration.WithLabelValues(endpoint).Observe(elapsed.Seconds())
	if a.replayed {
		s.m.replays.WithLabelValues(endpoint).Inc()
	}
	level := slog.LevelInfo
	switch {
	case outcome == outcomeCanceled:
	case a.status >= 500:
		level = slog.LevelError
	case a.status >= 400:
		level = slog.LevelWarn
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("endpoint", endpoint), slog.Int("status", a.status), slog.String("outcome", outcome),
		slog.Float64("latencyMs", float64(elapsed.Microseconds())/1000), slog.String("requestID", requestID(r)))
	if a.subject != "" {
		name := "payoutID"
		if endpoint == claims.CreditAccount {
			name = "paymentRequestID"
		}
		attrs = append(attrs, slog.String(name, a.subject))
	}
	if a.replayed {
		attrs = append(attrs, slog.Bool("replayed", true))
	}
	// The record as Logger.LogAttrs makes it, but for the caller's program
	// counter, which only a handler with AddSource reads (ledgerd's do
	// not) and which costs a stack walk per callback.
	rec := slog.NewRecord(time.Now(), level, "callback", 0)
	rec.AddAttrs(attrs...)
	_ = s.log.Handler().Handle(context.WithoutCancel(r.Context()), rec)
}

// outcomeCanceled is the outcome label of a callback whose caller went
// away before it was answered.
const outcomeCanceled = "canceled"

func outcomeOf(r *http.Request, err error) string {
	if r.Context().Err() != nil {
		return outcomeCanceled
	}
	return ""
}

var statusTexts = map[int]string{}

func init() {
	for s := 100; s < 600; s++ {
		statusTexts[s] = strconv.Itoa(s)
	}
}

func statusText(s int) string {
	if t, ok := statusTexts[s]; ok {
		return t
	}
	return strconv.Itoa(s)
}

func (s *Handler) envelopeProblem(endpoint string, err error) *problem.Problem {
	switch {
	case errors.Is(err, envelope.ErrUnsupportedHeader):
		return problem.New(SlugUnsupportedHeader, http.StatusBadRequest, "the JWE header must be alg A256KW, enc A256GCM, without zip")
	case errors.Is(err, envelope.ErrUndecryptable):
		s.m.undecryptable.WithLabelValues(endpoint).Inc()
		if s.cfg.KeysMissing != nil && s.cfg.KeysMissing() {
			p := problem.New(SlugKeyringIncomplete, http.StatusServiceUnavailable,
				"no signing secret this replica can decrypt opens the request, and it cannot decrypt every active one; retry")
			p.RetryAfter = time.Second
			return p
		}
		return problem.New(SlugUndecryptable, http.StatusBadRequest, "no active signing secret opens the request")
	case errors.Is(err, envelope.ErrMalformedJWT):
		return problem.New(SlugMalformedJWT, http.StatusBadRequest, "the JWE payload is not a valid JWT")
	}
	return problem.New(SlugMalformedJWE, http.StatusBadRequest, "the request is not a compact JWE")
}

func claimsProblem(err error) *problem.Problem {
	detail := "the claims are malformed"
	switch {
	case errors.Is(err, claims.ErrExpired):
		detail = "the request has expired (exp)"
	case errors.Is(err, claims.ErrNotYetValid):
		detail = "the request is issued in the future (iat)"
	case errors.Is(err, claims.ErrLifetimeInverted):
		detail = "exp is before iat"
	case errors.Is(err, claims.ErrLifetimeTooLong):
		detail = "the request is valid for longer than LEDGER_MAX_TOKEN_LIFETIME (exp - iat)"
	case errors.Is(err, claims.ErrWrongType):
		detail = "typ does not match the route"
	case errors.Is(err, claims.ErrMissingService):
		detail = "the service claim is missing"
	case errors.Is(err, claims.ErrInexactString):
		detail = "a claim string has a lone or reversed surrogate escape or is not valid UTF-8"
	case errors.Is(err, claims.ErrDuplicateMember):
		detail = "a claim appears twice in one object"
	}
	p := problem.New(SlugInvalidClaims, http.StatusBadRequest, detail)
	var ce *claims.ClaimError
	if errors.As(err, &ce) {
		p.WithField(ce.Pointer(), detail)
	}
	return p
}

// storeProblem maps a failed callback statement to its status (contract
// §2.7), each retryable: 408 when the database rolled the work back at the
// deadline (nothing was applied), 503 when it was unavailable (what a
// retry gets is the stored answer if anything committed), 500 for a bug.
func (s *Handler) storeProblem(r *http.Request, endpoint string, err error) *problem.Problem {
	unavailable := func(detail string) *problem.Problem {
		p := problem.New(SlugUnavailable, http.StatusServiceUnavailable, detail)
		p.RetryAfter = time.Second
		return p
	}
	switch ledger.CodeOf(err) {
	case ledger.CodeTimeout:
		if r.Context().Err() == nil {
			s.log.Warn("callback deadline passed; rolled back", "endpoint", endpoint, "err", err)
		}
		return problem.New(SlugTimeout, http.StatusRequestTimeout, "the request deadline passed; nothing was applied; retry")
	case ledger.CodeUnavailable:
		if r.Context().Err() == nil {
			s.log.Warn("callback failed: database unavailable", "endpoint", endpoint, "err", err)
		}
		if errors.Is(err, ledger.ErrRetriesExhausted) {
			return unavailable("the database is busy; retry")
		}
		return unavailable("the database is unavailable; retry")
	case ledger.CodeInvalid:
		return problem.New(SlugInvalidClaims, http.StatusBadRequest, "a claim is not valid text")
	}
	s.log.Error("callback failed", "endpoint", endpoint, "err", err)
	return problem.New(SlugInternal, http.StatusInternalServerError, "internal error")
}
