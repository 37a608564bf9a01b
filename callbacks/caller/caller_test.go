package caller_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/problem"
)

// basePath is where the test server mounts the callbacks: not the root,
// so that a client that drops the base path is caught.
const basePath = "/ledger"

var (
	key      = envelope.Key{ID: "test", Secret: bytes.Repeat([]byte{7}, envelope.SecretSize)}
	otherKey = envelope.Key{ID: "other", Secret: bytes.Repeat([]byte{9}, envelope.SecretSize)}
)

// received is what the test server read of one request.
type received struct {
	path    string
	form    envelope.Form
	header  claims.Header
	service map[string]any
}

// answer writes the server's answer to a request it opened.
type answer func(t *testing.T, w http.ResponseWriter, o envelope.Opened)

// setup starts a callback server under basePath that opens each request
// with key, records it, and answers with a; it returns a client of it and
// the requests it received.
func setup(t *testing.T, a answer) (*caller.Client, <-chan received) {
	t.Helper()
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Request string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
			return
		}
		o, err := envelope.Open(body.Request, []envelope.Key{key})
		if err != nil {
			t.Errorf("opening the request: %v", err)
			return
		}
		h, err := claims.Parse(o.Claims)
		if err != nil {
			t.Errorf("request claims: %v", err)
			return
		}
		rec := received{path: r.URL.Path, form: o.Form, header: h}
		if err := json.Unmarshal(h.Service, &rec.service); err != nil {
			t.Errorf("request service: %v", err)
		}
		got <- rec
		a(t, w, o)
	}))
	t.Cleanup(srv.Close)
	return &caller.Client{BaseURL: srv.URL + basePath + "/", Key: key, HTTP: srv.Client()}, got
}

// sealed answers 200 with claims sealed by seal.
func sealed(seal func(o envelope.Opened) (string, error)) answer {
	return func(t *testing.T, w http.ResponseWriter, o envelope.Opened) {
		token, err := seal(o)
		if err != nil {
			t.Errorf("sealing the answer: %v", err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"response":%q}`, token)
	}
}

// approved answers an approval of hold_1, as the adapter does.
var approved = sealed(func(o envelope.Opened) (string, error) {
	c, err := claims.BuildResponse(time.Now(), map[string]string{"outcome": "approved", "holdReference": "hold_1", "idempotencyKey": "k-1"})
	if err != nil {
		return "", err
	}
	return o.Reply(c)
})

// body answers 200 with a fixed body.
func body(b string) answer {
	return func(_ *testing.T, w http.ResponseWriter, _ envelope.Opened) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, b)
	}
}

var authorize = map[string]any{"payoutID": "po-1", "idempotencyKey": "k-1"}

func TestSendOpensTheAnswer(t *testing.T) {
	t.Parallel()
	for _, form := range []envelope.Form{0, envelope.FormClaims, envelope.FormJWS, envelope.FormUnsecured} {
		t.Run(fmt.Sprint(form), func(t *testing.T) {
			t.Parallel()
			c, got := setup(t, approved)
			c.Form = form
			r, err := c.Send(context.Background(), claims.Authorize, authorize)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != http.StatusOK || r.Outcome() != "approved" || r.Str("holdReference") != "hold_1" ||
				r.Service["idempotencyKey"] != "k-1" || r.Problem != nil || r.Retryable() {
				t.Fatalf("reply %+v", r)
			}
			req := <-got
			wantForm := form
			if form == 0 {
				wantForm = envelope.FormClaims
			}
			if req.path != basePath+"/"+claims.Authorize || req.form != wantForm || req.header.Typ != claims.Authorize ||
				time.Duration(req.header.Exp-req.header.Iat)*time.Second != claims.Lifetime || req.service["payoutID"] != "po-1" {
				t.Fatalf("the server received %+v", req)
			}
		})
	}
}

func TestSendRawOnly(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, approved)
	c.RawOnly = true
	r, err := c.Send(context.Background(), claims.Authorize, authorize)
	if err != nil {
		t.Fatal(err)
	}
	if r.Service != nil || r.Outcome() != "approved" || r.Str("holdReference") != "hold_1" || r.Str("reason") != "" {
		t.Fatalf("reply %+v (raw %s)", r, r.Raw)
	}
	var raw map[string]string
	if err := json.Unmarshal(r.Raw, &raw); err != nil || raw["idempotencyKey"] != "k-1" {
		t.Fatalf("raw %s: %v", r.Raw, err)
	}
}

func TestSendProblem(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(_ *testing.T, w http.ResponseWriter, _ envelope.Opened) {
		p := problem.New("in-flight-limit", http.StatusTooManyRequests, "too many callbacks in flight").WithField("/service/payoutID", "busy")
		p.RetryAfter = 1200 * time.Millisecond
		problem.Write(w, p)
	})
	r, err := c.Send(context.Background(), claims.Authorize, authorize)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusTooManyRequests || r.RetryAfter != "2" || !r.Retryable() || r.Service != nil || r.Raw != nil {
		t.Fatalf("reply %+v", r)
	}
	if r.ProblemType() != problem.TypeBase+"in-flight-limit" || r.ProblemDetail() != "too many callbacks in flight" ||
		!slices.Equal(r.ProblemPointers(), []string{"/service/payoutID"}) {
		t.Fatalf("problem %v", r.Problem)
	}
}

// TestProblemAccessors: a reply without a problem, or whose members are
// not of the problem's types, reads as none.
func TestProblemAccessors(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*caller.Reply{
		"NoProblem":  {Status: http.StatusOK},
		"WrongTypes": {Status: http.StatusBadRequest, Problem: map[string]any{"type": 1, "detail": true, "errors": []any{"x", map[string]any{"pointer": 2}}}},
	} {
		if r.ProblemType() != "" || r.ProblemDetail() != "" || r.ProblemPointers() != nil {
			t.Errorf("%s: type %q, detail %q, pointers %v, want none", name, r.ProblemType(), r.ProblemDetail(), r.ProblemPointers())
		}
	}
}

// TestSendRefuses: a 200 that is not an answer of the adapter to this
// request is an error, never a reply to trust.
func TestSendRefuses(t *testing.T) {
	t.Parallel()
	respond := func(build func() ([]byte, error)) answer {
		return sealed(func(o envelope.Opened) (string, error) {
			c, err := build()
			if err != nil {
				return "", err
			}
			return o.Reply(c)
		})
	}
	service := `"service":{"outcome":"approved"}`
	now := time.Now().Unix()
	for _, c := range []struct {
		name   string
		answer answer
		want   string
	}{
		{"WrongInnerForm", sealed(func(o envelope.Opened) (string, error) {
			c, _ := claims.BuildResponse(time.Now(), map[string]string{"outcome": "approved"})
			return envelope.Seal(o.Key, envelope.FormJWS, c)
		}), "form"},
		{"NoResponse", body(`{}`), "without a response token"},
		{"ResponseNotAString", body(`{"response":42}`), "without a response token"},
		{"ResponseEmpty", body(`{"response":""}`), "without a response token"},
		{"NotJSON", body(`{"response":"a.b.c.d.e"`), "without a response token"},
		{"OtherKey", sealed(func(o envelope.Opened) (string, error) {
			c, _ := claims.BuildResponse(time.Now(), map[string]string{"outcome": "approved"})
			return envelope.Seal(otherKey, o.Form, c)
		}), "opening the response"},
		{"GarbageUnderTheKey", sealed(func(o envelope.Opened) (string, error) {
			return envelope.SealRaw(o.Key, []byte("not a JWT"))
		}), "opening the response"},
		{"LifetimeLonger", respond(func() ([]byte, error) {
			return fmt.Appendf(nil, `{"iat":%d,"exp":%d,%s}`, now, now+int64(claims.Lifetime/time.Second)+1, service), nil
		}), "exp-iat 301"},
		{"LifetimeShorter", respond(func() ([]byte, error) {
			return fmt.Appendf(nil, `{"iat":%d,"exp":%d,%s}`, now, now+60, service), nil
		}), "exp-iat 60"},
		{"Typ", respond(func() ([]byte, error) { return claims.BuildRequest(time.Now(), claims.Authorize, map[string]string{}) }), "typ"},
		{"DuplicateMemberInTheClaims", respond(func() ([]byte, error) {
			return fmt.Appendf(nil, `{"iat":%d,"exp":%d,"service":{"a":1,"a":2}}`, now, now+300), nil
		}), "response claims"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl, _ := setup(t, c.answer)
			r, err := cl.Send(context.Background(), claims.Authorize, authorize)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Send = %+v, %v; want an error about %q", r, err, c.want)
			}
			if r == nil || r.Status != http.StatusOK || r.Service != nil {
				t.Fatalf("reply %+v: want the status and no service claims", r)
			}
		})
	}
}

func TestSendTransportError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := &caller.Client{BaseURL: url, Key: key}
	if r, err := c.Send(context.Background(), claims.Capture, map[string]string{}); err == nil {
		t.Fatalf("Send to a closed server = %+v, want an error", r)
	}
	if _, err := c.Send(context.Background(), claims.Capture, []string{"not an object"}); err == nil {
		t.Fatal("Send of a service that is not an object: no error")
	}
}
