package claims

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/ledger"
)

// BuildResponse builds the claims of an answer (contract §2.1):
// {"iat":now,"exp":now+Lifetime,"service":service}, without typ. service must
// marshal to a JSON object (a struct, a map, a json.RawMessage object).
func BuildResponse(now time.Time, service any) ([]byte, error) {
	return build(now, "", service)
}

// BuildRequest builds the claims of a request, as the service sends them:
// {"iat":now,"exp":now+Lifetime,"typ":typ,"service":service}. service is
// an endpoint's typed request (AuthorizeService, …) or, for claims those
// cannot express, any value that marshals to a JSON object.
func BuildRequest(now time.Time, typ string, service any) ([]byte, error) {
	if typ == "" {
		return nil, claimErr("typ", envelope.ErrInvalidClaims)
	}
	return build(now, typ, service)
}

// AnswerClaims is BuildResponse(now, Answer(endpoint, key, d)), the same
// bytes, built in one buffer: Answer writes its object compact and
// escaped as encoding/json would (strictjson.AppendString), so it is
// appended as it is rather than marshalled again.
func AnswerClaims(now time.Time, endpoint, key string, d ledger.Decision) []byte {
	b := AppendHeader(make([]byte, 0, 128+len(d.Outcome)+len(d.Reference)+len(d.Reason)+len(key)), now, "")
	b = appendAnswer(b, endpoint, key, d)
	return append(b, '}')
}

func build(now time.Time, typ string, service any) ([]byte, error) {
	svc, err := json.Marshal(service)
	if err != nil || len(svc) == 0 || svc[0] != '{' {
		return nil, claimErr("service", envelope.ErrInvalidClaims)
	}
	b := AppendHeader(make([]byte, 0, len(svc)+len(typ)+64), now, typ)
	b = append(b, svc...)
	return append(b, '}'), nil
}

// AppendHeader appends the start of a claims object as BuildRequest (typ
// given) and BuildResponse (typ "") write it, up to the service object:
//
//	{"iat":now,"exp":now+Lifetime,"typ":typ,"service":
//
// The caller appends the service object and the closing brace; envelope's
// Seal checks that the whole is a JSON object.
func AppendHeader(b []byte, now time.Time, typ string) []byte {
	iat := now.Unix()
	b = append(b, `{"iat":`...)
	b = strconv.AppendInt(b, iat, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, iat+int64(Lifetime/time.Second), 10)
	if typ != "" {
		b = append(b, `,"typ":`...)
		b = strictjson.AppendString(b, typ)
	}
	return append(b, `,"service":`...)
}

// referenceClaims names the reference each endpoint answers.
var referenceClaims = map[string]string{
	Authorize:     "holdReference",
	Capture:       "captureReference",
	Release:       "releaseReference",
	CreditAccount: "creditReference",
}

// ReferenceClaim is the name of the reference endpoint answers when it
// approves: holdReference, captureReference, releaseReference or
// creditReference.
func ReferenceClaim(endpoint string) string { return referenceClaims[endpoint] }

// Answer is the service object of every callback's answer, the one
// declaration of its wire shape (contract §2.1 and 2.3 to 2.6):
//
//	{"outcome": "...", "<reference claim>": "...", "reason": "...", "idempotencyKey": "..."}
//
// with the reference only when one is answered (approved) and the reason
// only for a refusal. It is rebuilt from the stored answer on every replay.
func Answer(endpoint, key string, d ledger.Decision) json.RawMessage {
	return appendAnswer(make([]byte, 0, 64+len(d.Outcome)+len(d.Reference)+len(d.Reason)+len(key)), endpoint, key, d)
}

func appendAnswer(b []byte, endpoint, key string, d ledger.Decision) []byte {
	b = append(b, `{"outcome":`...)
	b = strictjson.AppendString(b, d.Outcome)
	if d.Reference != "" {
		b = append(b, `,"`...)
		b = append(b, referenceClaims[endpoint]...)
		b = append(b, `":`...)
		b = strictjson.AppendString(b, d.Reference)
	}
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = strictjson.AppendString(b, d.Reason)
	}
	b = append(b, `,"idempotencyKey":`...)
	b = strictjson.AppendString(b, key)
	return append(b, '}')
}
