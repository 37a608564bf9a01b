package claims_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

func TestClaimsParse(t *testing.T) {
	t.Parallel()
	b := []byte(` {"exp":1700000300, "iat":1700000000,"typ":"capture","service":{"a":[1,{"b":"}"}]},"x":null} `)
	h, err := claims.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Exp != 1700000300 || h.Iat != 1700000000 || h.Typ != "capture" || string(h.Service) != `{"a":[1,{"b":"}"}]}` {
		t.Fatalf("Parse = %+v (service %s)", h, h.Service)
	}
}

func TestClaimsIntegerForms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		`0`: 0, `-0`: 0, `17`: 17, `-17`: -17, `1.7e9`: 1_700_000_000, `1.7E+9`: 1_700_000_000,
		`1700000000.0`: 1_700_000_000, `1700000000.000e0`: 1_700_000_000, `17000000000e-1`: 1_700_000_000,
		`0.0`: 0, `0e-400`: 0, `0e99999999999999999999`: 0, `9223372036854775807`: math.MaxInt64,
		`-9223372036854775808`: math.MinInt64, `9.223372036854775807e18`: math.MaxInt64,
		`-9.223372036854775808e18`: math.MinInt64, `1e18`: 1e18, `100e-2`: 1,
	} {
		h, err := claims.Parse([]byte(`{"exp":` + in + `,"iat":` + in + `}`))
		if err != nil || h.Exp != want || h.Iat != want {
			t.Errorf("%s: Parse = %d %d, %v; want %d", in, h.Exp, h.Iat, err, want)
		}
	}
}

func TestClaimsParseErrors(t *testing.T) {
	t.Parallel()
	ok := `"exp":1700000300,"iat":1700000000`
	for _, tc := range []struct{ in, claim string }{
		{``, ""},
		{`null`, ""},
		{`[]`, ""},
		{`"x"`, ""},
		{`{`, ""},
		{`{"exp":1,"iat":1}}`, ""},
		{`{"exp":1,"iat":1} {}`, ""},
		{`{"iat":1}`, "exp"},
		{`{"exp":1}`, "iat"},
		{`{}`, "exp"},
		{`{"exp":"1700000300","iat":1}`, "exp"},
		{`{"exp":1,"iat":"1"}`, "iat"},
		{`{"exp":1.5,"iat":1}`, "exp"},
		{`{"exp":1,"iat":1700000000.5}`, "iat"},
		{`{"exp":1e-1,"iat":1}`, "exp"},
		{`{"exp":1e19,"iat":1}`, "exp"},
		{`{"exp":9223372036854775808,"iat":1}`, "exp"},
		{`{"exp":-9223372036854775809,"iat":1}`, "exp"},
		{`{"exp":1e99999999999999999999,"iat":1}`, "exp"},
		{`{"exp":null,"iat":1}`, "exp"},
		{`{"exp":true,"iat":1}`, "exp"},
		{`{"exp":[1],"iat":1}`, "exp"},
		{`{"exp":{},"iat":1}`, "exp"},
		{`{"exp":1,"exp":2,"iat":1}`, "exp"},
		{`{"exp":1,"iat":1,"\u0069at":1}`, "iat"},
		{`{` + ok + `,"typ":1}`, "typ"},
		{`{` + ok + `,"typ":null}`, "typ"},
		{`{` + ok + `,"typ":"a","typ":"a"}`, "typ"},
		{`{` + ok + `,"service":null}`, "service"},
		{`{` + ok + `,"service":[]}`, "service"},
		{`{` + ok + `,"service":"{}"}`, "service"},
		{`{` + ok + `,"service":{},"service":{}}`, "service"},
	} {
		_, err := claims.Parse([]byte(tc.in))
		var ce *claims.ClaimError
		if !errors.Is(err, claims.ErrMalformedClaims) || !errors.As(err, &ce) || ce.Claim != tc.claim {
			t.Errorf("Parse(%s) = %v, want ErrMalformedClaims on %q", tc.in, err, tc.claim)
			continue
		}
		if tc.claim != "" && ce.Pointer() != "/"+tc.claim {
			t.Errorf("Pointer = %q", ce.Pointer())
		}
		if strings.Contains(err.Error(), "1700000") || strings.Contains(err.Error(), "{") {
			t.Errorf("error %q carries claim content", err)
		}
	}
}

func TestClaimsInexactStrings(t *testing.T) {
	t.Parallel()
	ok := `"exp":1700000300,"iat":1700000000`
	for _, tc := range []struct {
		in, claim, path string
		want            error
	}{
		{`{` + ok + `,"service":{"payoutID":"p-\ud800"}}`, "service", "/service/payoutID", claims.ErrInexactString},
		{`{` + ok + `,"service":{"payoutID":"p-\udc00"}}`, "service", "/service/payoutID", claims.ErrInexactString},
		{`{` + ok + `,"service":{"payoutID":"\udc00\ud800"}}`, "service", "/service/payoutID", claims.ErrInexactString},
		{`{` + ok + ",\"service\":{\"payoutID\":\"p-\xff\"}}", "service", "/service/payoutID", claims.ErrInexactString},
		{`{` + ok + `,"service":{"amount":{"currency":{"code":"\ud800SD"}}}}`, "service", "/service/amount/currency/code", claims.ErrInexactString},
		{`{` + ok + `,"typ":"authorize\udfff"}`, "typ", "/typ", claims.ErrInexactString},
		{`{` + ok + `,"x/y":["\ud800"]}`, "x/y", "/x~1y/0", claims.ErrInexactString},
		{`{` + ok + `,"service":{"\ud800":1}}`, "service", "/service", claims.ErrInexactString},
		{`{` + ok + `,"service":{"payoutID":"a","payout\u0049D":"b"}}`, "service", "/service/payoutID", claims.ErrDuplicateMember},
		{`{` + ok + `,"note":1,"note":2}`, "note", "/note", claims.ErrDuplicateMember},
	} {
		_, err := claims.Parse([]byte(tc.in))
		var ce *claims.ClaimError
		if !errors.Is(err, tc.want) || !errors.Is(err, claims.ErrMalformedClaims) || !errors.As(err, &ce) ||
			ce.Claim != tc.claim || ce.Pointer() != tc.path {
			t.Errorf("Parse(%s) = %v, want %v at %s (claim %s)", tc.in, err, tc.want, tc.path, tc.claim)
		}
	}
	// Exact strings pass: a surrogate pair, an escaped backslash before
	// u0000 (text, not NUL), U+FFFD written as such.
	h, err := claims.Parse([]byte(`{` + ok + `,"service":{"a":"\ud83d\ude00","b":"\\u0000","c":"\ufffd�"}}`))
	if err != nil || h.Service == nil {
		t.Fatalf("Parse = %+v, %v", h, err)
	}
}

func TestClaimsCaseSensitiveNames(t *testing.T) {
	t.Parallel()
	// encoding/json struct decoding would take "EXP" for "exp"; claim
	// names are case-sensitive (RFC 7519 §4).
	_, err := claims.Parse([]byte(`{"EXP":1,"Iat":1}`))
	if !errors.Is(err, claims.ErrMalformedClaims) {
		t.Fatalf("Parse = %v", err)
	}
	h, err := claims.Parse([]byte(`{"exp":1,"iat":2,"Service":{},"\u0074yp":"x"}`))
	if err != nil || h.Service != nil || h.Typ != "x" {
		t.Fatalf("Parse = %+v, %v", h, err)
	}
}

func TestClaimsValidate(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	leeway := 60 * time.Second
	svc := json.RawMessage(`{}`)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	for _, tc := range []struct {
		name    string
		h       claims.Header
		now     time.Time
		leeway  time.Duration
		typ     string
		want    error
		inClaim string
	}{
		{"Valid", claims.Header{Exp: 1_700_000_300, Iat: 1_700_000_000, Typ: "authorize", Service: svc}, now, leeway, "authorize", nil, ""},
		{"ExpAtLeewayBoundary", claims.Header{Exp: 1_699_999_940, Iat: 1_699_999_000, Typ: "t", Service: svc}, now, leeway, "t", nil, ""},
		{"ExpOneNanosecondPast", claims.Header{Exp: 1_699_999_940, Iat: 1_699_999_000, Typ: "t", Service: svc}, at(time.Nanosecond), leeway, "t", claims.ErrExpired, "exp"},
		{"ExpOneSecondPast", claims.Header{Exp: 1_699_999_939, Iat: 1_699_999_000, Typ: "t", Service: svc}, now, leeway, "t", claims.ErrExpired, "exp"},
		{"ExpSubSecondLeewayBoundary", claims.Header{Exp: 1_700_000_000, Iat: 1_699_999_000, Typ: "t", Service: svc}, at(1500 * time.Millisecond), 1500 * time.Millisecond, "t", nil, ""},
		{"ExpSubSecondLeewayPast", claims.Header{Exp: 1_700_000_000, Iat: 1_699_999_000, Typ: "t", Service: svc}, at(1500*time.Millisecond + 1), 1500 * time.Millisecond, "t", claims.ErrExpired, "exp"},
		{"ExpNoLeeway", claims.Header{Exp: 1_700_000_000, Iat: 1, Typ: "t", Service: svc}, now, 0, "t", nil, ""},
		{"ExpNegativeLeewayIsZero", claims.Header{Exp: 1_700_000_000, Iat: 1, Typ: "t", Service: svc}, at(time.Nanosecond), -time.Hour, "t", claims.ErrExpired, "exp"},
		{"IatAtLeewayBoundary", claims.Header{Exp: 1_700_001_000, Iat: 1_700_000_060, Typ: "t", Service: svc}, now, leeway, "t", nil, ""},
		{"IatOneNanosecondEarly", claims.Header{Exp: 1_700_001_000, Iat: 1_700_000_060, Typ: "t", Service: svc}, at(-time.Nanosecond), leeway, "t", claims.ErrNotYetValid, "iat"},
		{"IatOneSecondEarly", claims.Header{Exp: 1_700_001_000, Iat: 1_700_000_061, Typ: "t", Service: svc}, now, leeway, "t", claims.ErrNotYetValid, "iat"},
		{"IatSubSecondLeewayBoundary", claims.Header{Exp: 1_700_001_000, Iat: 1_700_000_002, Typ: "t", Service: svc}, at(500 * time.Millisecond), 1500 * time.Millisecond, "t", nil, ""},
		{"IatSubSecondLeewayEarly", claims.Header{Exp: 1_700_001_000, Iat: 1_700_000_002, Typ: "t", Service: svc}, at(500*time.Millisecond - 1), 1500 * time.Millisecond, "t", claims.ErrNotYetValid, "iat"},
		{"ExtremeValues", claims.Header{Exp: math.MaxInt64, Iat: math.MinInt64, Typ: "t", Service: svc}, now, time.Duration(math.MaxInt64), "t", nil, ""},
		{"ExtremeExpired", claims.Header{Exp: math.MinInt64, Iat: math.MinInt64, Typ: "t", Service: svc}, now, time.Duration(math.MaxInt64), "t", claims.ErrExpired, "exp"},
		{"ExtremeFuture", claims.Header{Exp: math.MaxInt64, Iat: math.MaxInt64, Typ: "t", Service: svc}, now, time.Duration(math.MaxInt64), "t", claims.ErrNotYetValid, "iat"},
		{"WrongTyp", claims.Header{Exp: 1_700_000_300, Iat: 1_700_000_000, Typ: "capture", Service: svc}, now, leeway, "authorize", claims.ErrWrongType, "typ"},
		{"MissingTyp", claims.Header{Exp: 1_700_000_300, Iat: 1_700_000_000, Service: svc}, now, leeway, "authorize", claims.ErrWrongType, "typ"},
		{"TypNotCheckedForResponses", claims.Header{Exp: 1_700_000_300, Iat: 1_700_000_000, Typ: "x", Service: svc}, now, leeway, "", nil, ""},
		{"MissingService", claims.Header{Exp: 1_700_000_300, Iat: 1_700_000_000, Typ: "t"}, now, leeway, "t", claims.ErrMissingService, "service"},
		{"ExpAtIat", claims.Header{Exp: 1_700_000_000, Iat: 1_700_000_000, Typ: "t", Service: svc}, now, leeway, "t", nil, ""},
		{"ExpBeforeIat", claims.Header{Exp: 1_699_999_999, Iat: 1_700_000_000, Typ: "t", Service: svc}, now, leeway, "t", claims.ErrLifetimeInverted, "exp"},
		{"ExpBeforeIatBeforeWrongTyp", claims.Header{Exp: 1_699_999_999, Iat: 1_700_000_000, Typ: "x", Service: svc}, now, leeway, "t", claims.ErrLifetimeInverted, "exp"},
	} {
		err := tc.h.Validate(tc.now, tc.leeway, tc.typ)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: Validate = %v", tc.name, err)
			}
			continue
		}
		var ce *claims.ClaimError
		if !errors.Is(err, tc.want) || !errors.As(err, &ce) || ce.Claim != tc.inClaim {
			t.Errorf("%s: Validate = %v, want %v on %s", tc.name, err, tc.want, tc.inClaim)
		}
	}
}

func TestClaimsBuilders(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 999_999_999)
	resp, err := claims.BuildResponse(now, map[string]string{"outcome": "approved", "note": "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatalf("%s: %v", resp, err)
	}
	if _, ok := m["typ"]; ok || len(m) != 3 {
		t.Fatalf("response claims %s", resp)
	}
	h, err := claims.Parse(resp)
	if err != nil || h.Iat != 1_700_000_000 || h.Exp != 1_700_000_300 || h.Typ != "" {
		t.Fatalf("Parse(response) = %+v, %v", h, err)
	}
	var svc map[string]string
	if err := json.Unmarshal(h.Service, &svc); err != nil || svc["note"] != "<&>" {
		t.Fatalf("service = %s", h.Service)
	}
	if err := h.Validate(now, 0, ""); err != nil {
		t.Fatal(err)
	}

	req, err := claims.BuildRequest(now, `credit-"account"`, json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err = claims.Parse(req)
	if err != nil || h.Typ != `credit-"account"` || string(h.Service) != `{"a":1}` || h.Exp-h.Iat != 300 {
		t.Fatalf("Parse(request) = %+v, %v (%s)", h, err, req)
	}
	if err := h.Validate(time.Unix(h.Exp, 0), 0, `credit-"account"`); err != nil {
		t.Fatal(err)
	}

	for name, svc := range map[string]any{
		"nil": nil, "array": []int{1}, "string": "x", "rawnull": json.RawMessage(`null`),
		"unmarshalable": map[string]any{"f": func() {}},
	} {
		if _, err := claims.BuildResponse(now, svc); !errors.Is(err, envelope.ErrInvalidClaims) {
			t.Errorf("BuildResponse(%s) = %v", name, err)
		}
	}
	if _, err := claims.BuildRequest(now, "", map[string]int{}); !errors.Is(err, envelope.ErrInvalidClaims) {
		t.Errorf("BuildRequest without typ = %v", err)
	}
}

// TestAnswerClaims: the answer's claims built in one buffer are the bytes
// BuildResponse makes of Answer, whatever the strings hold (quotes, <>&,
// control characters, non-ASCII, invalid UTF-8), for every endpoint.
func TestAnswerClaims(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_760_000_000, 0)
	odd := []string{"", "plain", `quo"te\back`, "<b>&amp;</b>", "tab\tnl\n", "é✓\u2028", "bad\xffutf8"}
	for _, ep := range claims.Endpoints {
		for _, s := range odd {
			for _, d := range []ledger.Decision{
				{Outcome: "approved", Reference: "ref-" + s},
				{Outcome: "declined", Reason: "reason " + s},
				{Outcome: s, Reference: s, Reason: s},
			} {
				want, err := claims.BuildResponse(now, claims.Answer(ep, "key"+s, d))
				if err != nil {
					t.Fatal(err)
				}
				if got := claims.AnswerClaims(now, ep, "key"+s, d); string(got) != string(want) {
					t.Fatalf("%s %+v:\n got %s\nwant %s", ep, d, got, want)
				}
			}
		}
	}
}
