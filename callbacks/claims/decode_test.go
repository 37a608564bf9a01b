package claims_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/internal/problem"
)

var decodeNow = time.Unix(1_760_000_010, 0)

func decode(t *testing.T, endpoint, service string) (claims.Request, error) {
	t.Helper()
	b := `{"iat":1760000000,"exp":1760000300,"typ":"` + endpoint + `","service":` + service + `}`
	var req claims.Request
	err := claims.Decode([]byte(b), endpoint, claims.Options{Now: decodeNow, Leeway: time.Minute, ProviderID: "bank-1"}, &req)
	return req, err
}

// TestDecodeStrings: a string claim is read exactly or refused, by the
// same pass that checks the whole claims: a lone or reversed surrogate
// escape and bytes that are not UTF-8 are malformed claims at the
// claim's pointer; NUL and non-strings are field errors.
func TestDecodeStrings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw, want string
		inexact   bool
		detail    string
	}{
		{raw: `"p-\ud800"`, inexact: true},
		{raw: `"p-\udc00"`, inexact: true},
		{raw: `"\udc00\ud800"`, inexact: true},
		{raw: "\"p-\xff\"", inexact: true},
		{raw: `7`, detail: "must be a string"},
		{raw: `"p-\ud83d\ude00"`, want: "p-😀"},
		{raw: `"p-\\u0000"`, want: `p-\u0000`},
		{raw: `"p-\u0000"`, detail: "NUL"},
		{raw: `""`, detail: "must not be empty"},
		{raw: `"` + strings.Repeat("x", 1025) + `"`, detail: "longer than 1024 bytes"},
	} {
		req, err := decode(t, claims.Capture, `{"payoutID":`+c.raw+`,"providerID":"bank-1","holdReference":"h","idempotencyKey":"k"}`)
		var ce *claims.ClaimError
		var fe claims.FieldErrors
		switch {
		case c.inexact:
			if !errors.Is(err, claims.ErrInexactString) || !errors.As(err, &ce) || ce.Pointer() != "/service/payoutID" {
				t.Errorf("%s: %v; want ErrInexactString at /service/payoutID", c.raw, err)
			}
		case c.detail != "":
			if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Pointer != "/service/payoutID" || !strings.Contains(fe[0].Detail, c.detail) {
				t.Errorf("%s: %v; want one field error at /service/payoutID about %s", c.raw, err, c.detail)
			}
		case err != nil || req.Capture.PayoutID != c.want || req.Subject() != c.want:
			t.Errorf("%s: payoutID %q, %v; want %q", c.raw, req.Capture.PayoutID, err, c.want)
		}
	}
}

// TestDecodeRequests: each endpoint's claims land in its typed request;
// errors point into the claims, in the endpoint's order, Money's at its
// own member; another provider is refused before the field errors.
func TestDecodeRequests(t *testing.T) {
	t.Parallel()
	usd := `{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":"125.50"}`
	req, err := decode(t, claims.Authorize, `{"payoutID":"po-1","providerID":"bank-1","externalID":"alice","fundingSource":"src",`+
		`"amount":`+usd+`,"fraudScore":0.12,"idempotencyKey":"k-1","callerSubject":"sdk","requestID":"tr-1","extra":{"a":[1]}}`)
	a := req.Authorize
	if err != nil || a.PayoutID != "po-1" || a.ExternalID != "alice" || a.FundingSource != "src" || a.Amount.String() != "125.50 USD" ||
		a.FraudScore != 0.12 || a.IdempotencyKey != "k-1" || a.CallerSubject != "sdk" || a.RequestID != "tr-1" {
		t.Fatalf("authorize = %+v, %v", a, err)
	}
	req, err = decode(t, claims.CreditAccount, `{"providerID":"bank-1","idempotencyKey":"k-2","requesterExternalID":"bob",`+
		`"fundingDestination":"dst","amount":{"currency":{"code":"JPY","decimalPlaces":0},"value":"100.0"},"requestID":"rq-1"}`)
	if c := req.Credit; err != nil || c.RequestID != "rq-1" || c.Amount.String() != "100 JPY" || req.Subject() != "rq-1" {
		t.Fatalf("credit = %+v, %v", c, err)
	}
	req, err = decode(t, claims.Release, `{"holdReference":"h-1","idempotencyKey":"k-3"}`)
	if r := req.Release; err != nil || r.HoldReference != "h-1" || r.PayoutID != "" || r.Reason != "" {
		t.Fatalf("release = %+v, %v", r, err)
	}

	_, err = decode(t, claims.Authorize, `{"payoutID":5,"providerID":"bank-1","externalID":"alice","fundingSource":"src",`+
		`"amount":{"currency":{"code":"USD","decimalPlaces":2},"value":"1.005"},"fraudScore":"0.1","idempotencyKey":null}`)
	var fe claims.FieldErrors
	want := []problem.FieldError{
		{Pointer: "/service/payoutID", Detail: "payoutID must be a string"},
		{Pointer: "/service/amount/value", Detail: "value must be exactly representable in 2 decimal places"},
		{Pointer: "/service/fraudScore", Detail: "fraudScore must be a number"},
		{Pointer: "/service/idempotencyKey", Detail: "idempotencyKey is required"},
	}
	if !errors.As(err, &fe) || !reflect.DeepEqual([]problem.FieldError(fe), want) {
		t.Fatalf("errors = %v, want %v", err, want)
	}
	_, err = decode(t, claims.Capture, `{"payoutID":5,"providerID":"bank-2"}`)
	if !errors.Is(err, claims.ErrWrongProvider) {
		t.Fatalf("another provider = %v", err)
	}
	if _, err := decode(t, claims.Capture, `{"payoutID":"p","payout\u0049D":"q"}`); !errors.Is(err, claims.ErrDuplicateMember) {
		t.Fatalf("duplicate = %v", err)
	}
	if _, err := decode(t, claims.Authorize, `{}`); err == nil {
		t.Fatal("empty authorize accepted")
	}
	var req2 claims.Request
	err = claims.Decode([]byte(`{"iat":1760000000,"exp":1760000300,"typ":"capture","service":{}}`), claims.Release,
		claims.Options{Now: decodeNow}, &req2)
	if !errors.Is(err, claims.ErrWrongType) || req2.Endpoint != "" {
		t.Fatalf("typ of another route = %v, %+v", err, req2)
	}
}

// TestDecodeLifetime: a request valid for longer than MaxLifetime (exp -
// iat), or whose exp is before its iat, is refused at exp, before its
// provider and business claims are read; exactly MaxLifetime passes, and
// 0 sets no bound.
func TestDecodeLifetime(t *testing.T) {
	t.Parallel()
	const iat = 1_760_000_000
	service := `{"payoutID":"p","providerID":"bank-1","holdReference":"h","idempotencyKey":"k"}`
	for _, c := range []struct {
		name     string
		iat, exp int64
		max      time.Duration
		service  string
		want     error
	}{
		{"AtTheMaximum", iat, iat + 600, 10 * time.Minute, service, nil},
		{"OneSecondOver", iat, iat + 601, 10 * time.Minute, service, claims.ErrLifetimeTooLong},
		{"SubSecondMaximum", iat, iat + 301, 300*time.Second + 500*time.Millisecond, service, claims.ErrLifetimeTooLong},
		{"TenYears", iat, iat + 10*365*86400, 10 * time.Minute, service, claims.ErrLifetimeTooLong},
		{"TenYearsUnbounded", iat, iat + 10*365*86400, 0, service, nil},
		{"IatFarBelowZero", -1 << 63, 1 << 62, 10 * time.Minute, service, claims.ErrLifetimeTooLong},
		{"ExpBeforeIat", iat, iat - 1, 10 * time.Minute, service, claims.ErrLifetimeInverted},
		{"ExpBeforeIatUnbounded", iat, iat - 1, 0, service, claims.ErrLifetimeInverted},
		{"BeforeTheProvider", iat, iat + 3600, 10 * time.Minute, `{"providerID":"other"}`, claims.ErrLifetimeTooLong},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fmt.Sprintf(`{"iat":%d,"exp":%d,"typ":"capture","service":%s}`, c.iat, c.exp, c.service)
			var req claims.Request
			// A leeway wide enough that only the lifetime can refuse.
			err := claims.Decode([]byte(b), claims.Capture, claims.Options{Now: decodeNow, Leeway: time.Duration(1<<63 - 1),
				MaxLifetime: c.max, ProviderID: "bank-1"}, &req)
			var ce *claims.ClaimError
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("Decode = %v, want accepted", err)
			case c.want != nil && (!errors.Is(err, c.want) || !errors.As(err, &ce) || ce.Pointer() != "/exp"):
				t.Fatalf("Decode = %v, want %v at /exp", err, c.want)
			}
		})
	}
}
