package claims

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/ledger"
)

// Options are what Decode checks the claims against.
type Options struct {
	Now    time.Time
	Leeway time.Duration // of exp and iat; negative means 0
	// MaxLifetime bounds exp - iat: a request valid for longer is
	// ErrLifetimeTooLong, so that none outlives the stored answers of its
	// idempotency key. 0 means no bound.
	MaxLifetime time.Duration
	ProviderID  string // this provider: another in providerID is ErrWrongProvider
}

// Request is one callback's business claims, decoded: the typed request
// of Endpoint's decision (one of Authorize, Capture, Release, Credit).
type Request struct {
	Endpoint  string
	Authorize holds.AuthorizeRequest
	Capture   holds.CaptureRequest
	Release   holds.ReleaseRequest
	Credit    ledger.CreditRequest
}

// Subject is the payoutID, or the requestID of a credit-account, for the
// log line.
func (r *Request) Subject() string {
	switch r.Endpoint {
	case Authorize:
		return r.Authorize.PayoutID
	case Capture:
		return r.Capture.PayoutID
	case Release:
		return r.Release.PayoutID
	}
	return r.Credit.RequestID
}

// IdempotencyKey is the request's idempotencyKey.
func (r *Request) IdempotencyKey() string {
	switch r.Endpoint {
	case Authorize:
		return r.Authorize.IdempotencyKey
	case Capture:
		return r.Capture.IdempotencyKey
	case Release:
		return r.Release.IdempotencyKey
	}
	return r.Credit.IdempotencyKey
}

func (r *Request) providerID() string {
	switch r.Endpoint {
	case Authorize:
		return r.Authorize.ProviderID
	case Capture:
		return r.Capture.ProviderID
	case Release:
		return r.Release.ProviderID
	}
	return r.Credit.ProviderID
}

// Decode checks the claims b of a request to endpoint and decodes its
// business claims into req, in one pass over b (see the package doc). The
// errors come in this order: a *ClaimError (the registered claims, or a
// string or member anywhere that is not exact), ErrWrongProvider, then
// FieldErrors (every missing or malformed business claim). With the last
// two, req holds what could be decoded (its Subject names the request in
// a log line).
func Decode(b []byte, endpoint string, o Options, req *Request) error {
	var w walker
	if w.f.names = namesOf(endpoint); w.f.names == nil {
		return fmt.Errorf("claims: unknown endpoint %q", endpoint)
	}
	f := &w.f
	if err := w.walk(b); err != nil {
		return err
	}
	if string(w.typ) == endpoint {
		w.h.Typ = endpoint
	} else if w.typ != nil {
		w.h.Typ = string(w.typ)
	}
	if err := w.h.validate(o.Now, o.Leeway, o.MaxLifetime, endpoint); err != nil {
		return err
	}
	*req = Request{Endpoint: endpoint}
	f.decode(req)
	if pid := req.providerID(); pid != "" && pid != o.ProviderID {
		return ErrWrongProvider
	}
	if len(f.errs) > 0 {
		return f.errs
	}
	return nil
}

// maxClaimLen bounds every string claim; longer is malformed.
const maxClaimLen = 1024

// fields are the business claims of one endpoint as the walk meets them:
// the raw value of each member of the service object the endpoint reads,
// the decoded content of those that are strings, and the tokens of the
// Money among them.
type fields struct {
	names []string // the endpoint's claims, in its order
	raw   [9][]byte
	text  [9][]byte
	money ledger.MoneyTokens
	errs  FieldErrors
}

// The claims of each endpoint, in the order their errors are reported.
var (
	authorizeNames = []string{"payoutID", "providerID", "externalID", "fundingSource", "amount", "fraudScore",
		"idempotencyKey", "callerSubject", "requestID"}
	captureNames = []string{"payoutID", "providerID", "holdReference", "idempotencyKey"}
	releaseNames = []string{"holdReference", "idempotencyKey", "payoutID", "providerID", "reason"}
	creditNames  = []string{"providerID", "idempotencyKey", "requesterExternalID", "fundingDestination", "amount", "requestID"}
)

func namesOf(endpoint string) []string {
	switch endpoint {
	case Authorize:
		return authorizeNames
	case Capture:
		return captureNames
	case Release:
		return releaseNames
	case CreditAccount:
		return creditNames
	}
	return nil
}

// visit takes a member inside the service object: path[0] is the member
// of service, deeper steps lead into it (the Money of "amount").
func (f *fields) visit(path []strictjson.Step, value, text []byte) {
	switch {
	case len(path) == 1:
		for i, n := range f.names {
			if string(path[0].Name) == n {
				f.raw[i], f.text[i] = value, text
				return
			}
		}
	case string(path[0].Name) != "amount":
	case len(path) == 2 && string(path[1].Name) == "currency":
		f.money.Currency = value
	case len(path) == 2 && string(path[1].Name) == "value":
		f.money.Value = value
	case len(path) == 3 && string(path[1].Name) == "currency" && string(path[2].Name) == "code":
		f.money.Code = value
	case len(path) == 3 && string(path[1].Name) == "currency" && string(path[2].Name) == "decimalPlaces":
		f.money.DecimalPlaces = value
	}
}

// decode fills req from the claims met, collecting an error per missing
// or malformed claim.
func (f *fields) decode(req *Request) {
	switch req.Endpoint {
	case Authorize:
		req.Authorize = holds.AuthorizeRequest{PayoutID: f.str(0, true), ProviderID: f.str(1, true),
			ExternalID: f.str(2, true), FundingSource: f.str(3, true), Amount: f.amount(4), FraudScore: f.number(5),
			IdempotencyKey: f.str(6, true), CallerSubject: f.str(7, false), RequestID: f.str(8, false)}
	case Capture:
		req.Capture = holds.CaptureRequest{PayoutID: f.str(0, true), ProviderID: f.str(1, true),
			HoldReference: f.str(2, true), IdempotencyKey: f.str(3, true)}
	case Release:
		req.Release = holds.ReleaseRequest{HoldReference: f.str(0, true), IdempotencyKey: f.str(1, true),
			PayoutID: f.str(2, false), ProviderID: f.str(3, false), Reason: f.str(4, false)}
	case CreditAccount:
		req.Credit = ledger.CreditRequest{ProviderID: f.str(0, true), IdempotencyKey: f.str(1, true),
			RequesterExternalID: f.str(2, true), FundingDestination: f.str(3, true), Amount: f.amount(4),
			RequestID: f.str(5, true)}
	}
}

func (f *fields) fail(i int, detail string) {
	f.errs = append(f.errs, problem.FieldError{Pointer: "/service/" + f.names[i], Detail: detail})
}

// absent reports a claim that is missing or null.
func (f *fields) absent(i int) bool { return f.raw[i] == nil || string(f.raw[i]) == "null" }

// str returns the string claim i. Missing or null is "" (an error when
// required); another JSON type, an empty required string, an over-long
// string or one holding NUL (which Postgres text cannot store) is an
// error. The walk decoded it exactly.
func (f *fields) str(i int, required bool) string {
	name := f.names[i]
	switch {
	case f.absent(i):
		if required {
			f.fail(i, name+" is required")
		}
		return ""
	case f.text[i] == nil:
		f.fail(i, name+" must be a string")
		return ""
	}
	s := f.text[i]
	if len(s) == 0 && required {
		f.fail(i, name+" must not be empty")
	}
	if len(s) > maxClaimLen {
		f.fail(i, fmt.Sprintf("%s is longer than %d bytes", name, maxClaimLen))
		return ""
	}
	if strings.IndexByte(string(s), 0) >= 0 {
		f.fail(i, name+" must not contain NUL characters")
		return ""
	}
	return string(s)
}

// amount returns the Money claim i, validated as contract §2.2 says.
func (f *fields) amount(i int) ledger.Money {
	if f.absent(i) {
		f.fail(i, f.names[i]+" is required")
		return ledger.Money{}
	}
	t := f.money
	t.Object = f.raw[i]
	m, err := ledger.DecodeMoney(t)
	if err != nil {
		if me, ok := err.(*ledger.MoneyError); ok {
			f.errs = append(f.errs, problem.FieldError{Pointer: "/service/" + f.names[i] + me.Pointer, Detail: me.Detail})
		} else {
			f.fail(i, f.names[i]+" must be a Money object")
		}
	}
	return m
}

// number returns the JSON number claim i as a float64.
func (f *fields) number(i int) float64 {
	raw := f.raw[i]
	if f.absent(i) {
		f.fail(i, f.names[i]+" is required")
		return 0
	}
	if raw[0] == '"' {
		f.fail(i, f.names[i]+" must be a number")
		return 0
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		f.fail(i, f.names[i]+" must be a number")
		return 0
	}
	return v
}
