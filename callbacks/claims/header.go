package claims

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// Endpoint names: the route suffixes and the typ claims of requests.
const (
	Authorize     = "authorize"
	Capture       = "capture"
	Release       = "release"
	CreditAccount = "credit-account"
)

// Endpoints lists the four callbacks.
var Endpoints = []string{Authorize, Capture, Release, CreditAccount}

// Lifetime is the span between iat and exp of the claims built here.
const Lifetime = 300 * time.Second

// Header holds the registered top-level claims of a callback (contract §2.1
// step 5). Service is the raw object claim service, a sub-slice of the
// input (nil when absent).
type Header struct {
	Exp     int64
	Iat     int64
	Typ     string
	Service json.RawMessage
}

// Parse reads exp, iat, typ and service from a claims object, with the
// checks of Decode that do not depend on an endpoint: exp and iat are
// required JSON numbers whose exact value is an integer in int64 range;
// typ, when present, a string; service, when present, an object (null is
// refused); none may appear twice; every string, at any depth, exact, and
// no object names a member twice. Other claims are ignored. Errors are
// *ClaimError wrapping ErrMalformedClaims. The caller (the service's side
// reading an answer) applies Header.Validate.
func Parse(b []byte) (Header, error) {
	var w walker
	if err := w.walk(b); err != nil {
		return Header{}, err
	}
	if w.typ != nil {
		w.h.Typ = string(w.typ)
	}
	return w.h, nil
}

// Validate applies the checks of contract §2.1 step 5, in this order:
// exp + leeway >= now (else ErrExpired), iat - leeway <= now (else
// ErrNotYetValid), exp >= iat (else ErrLifetimeInverted), typ == wantTyp
// (else ErrWrongType; an empty wantTyp skips
// the check, as for answers, which carry no typ), service present (else
// ErrMissingService). Both bounds are inclusive and exact to the nanosecond
// of now; a negative leeway counts as zero. Errors are *ClaimError.
func (h Header) Validate(now time.Time, leeway time.Duration, wantTyp string) error {
	return h.validate(now, leeway, 0, wantTyp)
}

// validate is Validate with, after the bounds of exp and iat, the checks
// of the request's lifetime: exp before iat is ErrLifetimeInverted, and
// exp - iat over maxLifetime (when above 0) ErrLifetimeTooLong.
func (h Header) validate(now time.Time, leeway, maxLifetime time.Duration, wantTyp string) error {
	if err := h.validTimes(now, leeway); err != nil {
		return err
	}
	if h.Exp < h.Iat {
		return claimErr("exp", ErrLifetimeInverted)
	}
	// exp - iat without wrapping around: iat may be far below zero.
	if maxLifetime > 0 && (h.Iat < 0 && h.Exp > math.MaxInt64+h.Iat || h.Exp-h.Iat > int64(maxLifetime/time.Second)) {
		return claimErr("exp", ErrLifetimeTooLong)
	}
	if wantTyp != "" && h.Typ != wantTyp {
		return claimErr("typ", ErrWrongType)
	}
	if h.Service == nil {
		return claimErr("service", ErrMissingService)
	}
	return nil
}

// validTimes checks exp + leeway >= now and iat - leeway <= now.
func (h Header) validTimes(now time.Time, leeway time.Duration) error {
	leeway = max(leeway, 0)
	lSec, lNsec := int64(leeway/time.Second), int64(leeway%time.Second)
	nSec, nNsec := now.Unix(), int64(now.Nanosecond())
	// expired iff exp + leeway < now
	if e := satAdd(h.Exp, lSec); e < nSec || e == nSec && lNsec < nNsec {
		return claimErr("exp", ErrExpired)
	}
	// not yet valid iff iat - leeway > now
	vs, vn := satAdd(h.Iat, -lSec), int64(0)
	if lNsec > 0 {
		vs, vn = satAdd(vs, -1), int64(time.Second)-lNsec
	}
	if vs > nSec || vs == nSec && vn > nNsec {
		return claimErr("iat", ErrNotYetValid)
	}
	return nil
}

// satAdd adds without wrapping around.
func satAdd(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return 1<<63 - 1
		}
		return -1 << 63
	}
	return s
}

// walker reads the registered claims as the exact check passes them,
// and, for Decode, an endpoint's business claims (fields).
type walker struct {
	h    Header
	typ  []byte // typ's content; nil when absent
	seen int    // bits of the registered claims seen
	bad  error  // the first malformed registered claim, in document order
	f    fields // the business claims, when f.names is set (Decode)
}

const (
	seenExp = 1 << iota
	seenIat
)

// walk checks b in one pass and reads its registered claims (and fields,
// when w.f is set). A problem of exactness or syntax anywhere comes first;
// then the first malformed registered claim; then a missing exp or iat.
func (w *walker) walk(b []byte) error {
	if i := strictjson.SkipSpace(b, 0); i >= len(b) || b[i] != '{' {
		return claimErr("", ErrMalformedClaims)
	}
	if err := strictjson.Check(b, strictjson.Options{Visit: w.visit}); err != nil {
		return strictError(err)
	}
	switch {
	case w.bad != nil:
		return w.bad
	case w.seen&seenExp == 0:
		return claimErr("exp", ErrMalformedClaims)
	case w.seen&seenIat == 0:
		return claimErr("iat", ErrMalformedClaims)
	}
	return nil
}

// visit is the strictjson.Visitor of walk.
func (w *walker) visit(path []strictjson.Step, value, text []byte) {
	if len(path) > 1 {
		if w.f.names != nil && string(path[0].Name) == "service" {
			w.f.visit(path[1:], value, text)
		}
		return
	}
	switch name := path[0].Name; string(name) {
	case "exp", "iat":
		n, ok := parseIntegral(value)
		if !ok {
			w.fail(string(name))
			return
		}
		if name[0] == 'e' {
			w.h.Exp, w.seen = n, w.seen|seenExp
		} else {
			w.h.Iat, w.seen = n, w.seen|seenIat
		}
	case "typ":
		if text == nil {
			w.fail("typ")
			return
		}
		w.typ = text
	case "service":
		if value[0] != '{' {
			w.fail("service")
			return
		}
		w.h.Service = json.RawMessage(value)
	}
}

func (w *walker) fail(claim string) {
	if w.bad == nil {
		w.bad = claimErr(claim, ErrMalformedClaims)
	}
}

// strictError maps a problem of strictjson.Check to a *ClaimError.
func strictError(err error) error {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return err
	}
	var sentinel error
	switch se.Reason {
	case strictjson.InvalidEscape, strictjson.InvalidUTF8:
		sentinel = ErrInexactString
	case strictjson.DuplicateName:
		sentinel = ErrDuplicateMember
	default:
		return claimErr("", ErrMalformedClaims)
	}
	// The top-level claim is the first step of the pointer, unescaped.
	claim, _, _ := strings.Cut(strings.TrimPrefix(se.Pointer, "/"), "/")
	claim = strings.NewReplacer("~1", "/", "~0", "~").Replace(claim)
	return &ClaimError{Claim: claim, Path: se.Pointer, Err: sentinel}
}

// parseIntegral parses a JSON number token whose exact value is an integer in
// int64 range: "17", "-3", "1.7e9", "1700000000.0", "0e-5". Fractions,
// out-of-range values and anything that is not a number are rejected. The
// arithmetic is exact (digit strings, never floats).
func parseIntegral(raw []byte) (int64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	neg := raw[0] == '-'
	intPart, frac, exp, ok := splitNumber(bytes.TrimPrefix(raw, []byte("-")))
	if !ok {
		return 0, false
	}
	digits := make([]byte, 0, len(intPart)+len(frac))
	digits = append(digits, intPart...)
	digits = append(digits, frac...)
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return 0, true
	}
	if exp == nil {
		return 0, false // an exponent too large for int, of a non-zero value
	}
	// The decimal point sits after point digits of the trimmed string.
	point := len(intPart) - (len(intPart) + len(frac) - len(digits)) + *exp
	if point < 0 || point > 19 {
		return 0, false // below 1 (and non-zero) or more than 19 digits
	}
	if point < len(digits) {
		if !allZero(digits[point:]) {
			return 0, false
		}
		digits = digits[:point]
	}
	for len(digits) < point {
		digits = append(digits, '0')
	}
	if neg {
		digits = append([]byte{'-'}, digits...)
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	return n, err == nil
}

// splitNumber splits an unsigned JSON number into its integer digits,
// fraction digits and exponent (0 when absent; nil when too large for an
// int). ok is false when s is not such a number.
func splitNumber(s []byte) (intPart, frac []byte, exp *int, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = s[:i]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = s[i+1 : j]
		i = j
	}
	e := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		n, err := strconv.Atoi(string(s[i+1:]))
		if err != nil {
			return intPart, frac, nil, len(intPart) > 0
		}
		e, i = n, len(s)
	}
	return intPart, frac, &e, i == len(s) && len(intPart) > 0
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}
