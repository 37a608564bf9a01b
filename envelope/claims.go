package envelope

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// Lifetime is the span between iat and exp of the claims built here.
const Lifetime = 300 * time.Second

// Header holds the registered top-level claims of a callback (design 2.1
// step 5). Service is the raw object claim service, a sub-slice of the input
// of ParseClaims (nil when absent); the business fields are decoded from it
// by the caller.
type Header struct {
	Exp     int64
	Iat     int64
	Typ     string
	Service json.RawMessage
}

// ParseClaims reads exp, iat, typ and service from a claims object without
// decoding anything else. exp and iat are required and must be JSON numbers
// whose exact value is an integer in int64 range (1.7e9 is accepted, 1.5 and
// "1700000000" are not); typ, when present, must be a string; service, when
// present, must be an object (null is refused); none may appear twice.
// Unknown claims are ignored, but every string of the claims, at any depth
// and member names included, must be exact (ErrInexactString) and no object
// may name a member twice (ErrDuplicateMember), so that what the callers
// decode from Service is what the sender wrote. Errors are *ClaimError
// wrapping ErrMalformedClaims.
func ParseClaims(b []byte) (Header, error) {
	var h Header
	if i := skipWS(b, 0); i >= len(b) || b[i] != '{' {
		return Header{}, claimErr("", ErrMalformedClaims)
	}
	if err := checkStrings(b); err != nil {
		return Header{}, err
	}
	const (
		seenExp = 1 << iota
		seenIat
		seenTyp
		seenService
	)
	var seen int
	err := eachMember(b, func(rawName, value []byte) error {
		name, _ := unquote(rawName)
		var bit int
		switch string(name) {
		case "exp", "iat":
			n, ok := parseIntegral(value)
			if !ok {
				return claimErr(string(name), ErrMalformedClaims)
			}
			if name[0] == 'e' {
				bit, h.Exp = seenExp, n
			} else {
				bit, h.Iat = seenIat, n
			}
		case "typ":
			s, ok := unquote(value)
			if !ok {
				return claimErr("typ", ErrMalformedClaims)
			}
			bit, h.Typ = seenTyp, string(s)
		case "service":
			if value[0] != '{' {
				return claimErr("service", ErrMalformedClaims)
			}
			bit, h.Service = seenService, json.RawMessage(value)
		default:
			return nil
		}
		if seen&bit != 0 {
			return claimErr(string(name), ErrMalformedClaims)
		}
		seen |= bit
		return nil
	})
	if err != nil {
		return Header{}, err
	}
	if seen&seenExp == 0 {
		return Header{}, claimErr("exp", ErrMalformedClaims)
	}
	if seen&seenIat == 0 {
		return Header{}, claimErr("iat", ErrMalformedClaims)
	}
	return h, nil
}

// Validate applies the checks of design 2.1 step 5, in this order:
// exp + leeway >= now (else ErrExpired), iat - leeway <= now (else
// ErrNotYetValid), typ == wantTyp (else ErrWrongType; an empty wantTyp skips
// the check, as for responses, which carry no typ), service present (else
// ErrMissingService). Both bounds are inclusive and exact to the nanosecond
// of now; a negative leeway counts as zero. Errors are *ClaimError.
func (h Header) Validate(now time.Time, leeway time.Duration, wantTyp string) error {
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
	if wantTyp != "" && h.Typ != wantTyp {
		return claimErr("typ", ErrWrongType)
	}
	if h.Service == nil {
		return claimErr("service", ErrMissingService)
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

// ResponseClaims builds the claims of a response (design 2.1):
// {"iat":now,"exp":now+300,"service":service}, without typ. service must
// marshal to a JSON object (a struct, a map, a json.RawMessage object).
func ResponseClaims(now time.Time, service any) ([]byte, error) {
	return buildClaims(now, "", service)
}

// RequestClaims builds the claims of a request, as the service sends them:
// {"iat":now,"exp":now+300,"typ":typ,"service":service}.
func RequestClaims(now time.Time, typ string, service any) ([]byte, error) {
	if typ == "" {
		return nil, claimErr("typ", ErrInvalidClaims)
	}
	return buildClaims(now, typ, service)
}

func buildClaims(now time.Time, typ string, service any) ([]byte, error) {
	svc, err := json.Marshal(service)
	if err != nil || len(svc) == 0 || svc[0] != '{' {
		return nil, claimErr("service", ErrInvalidClaims)
	}
	iat := now.Unix()
	b := make([]byte, 0, len(svc)+len(typ)+64)
	b = append(b, `{"iat":`...)
	b = strconv.AppendInt(b, iat, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, iat+int64(Lifetime/time.Second), 10)
	if typ != "" {
		b = append(b, `,"typ":`...)
		b = appendJSONString(b, typ)
	}
	b = append(b, `,"service":`...)
	b = append(b, svc...)
	return append(b, '}'), nil
}

// checkStrings runs the strict check of ParseClaims over the whole claims
// object b (which also checks that b is well-formed JSON).
func checkStrings(b []byte) error {
	err := strictjson.Check(b, strictjson.Options{})
	var se *strictjson.Error
	if err == nil || !errors.As(err, &se) {
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
