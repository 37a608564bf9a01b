package adminapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/adminapi"
)

// baseURLPath is a non-root path the fake server is mounted under, so that
// a client method that builds an absolute path ("/v1/…") misses the mux.
const baseURLPath = "/ops-ledger"

// setup returns a client of a fake admin API: handlers registered on mux
// answer under baseURLPath; anything else fails the test.
func setup(t *testing.T, opts ...adminapi.Option) (*adminapi.Client, *http.ServeMux) {
	t.Helper()
	mux := http.NewServeMux()
	outer := http.NewServeMux()
	outer.Handle(baseURLPath+"/", http.StripPrefix(baseURLPath, mux))
	outer.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL)
		http.Error(w, "outside the base path", http.StatusBadGateway)
	})
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	c, err := adminapi.NewClient(srv.URL+baseURLPath, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mux
}

// wantRequest checks method and, when body is not "", the exact JSON body.
func wantRequest(t *testing.T, r *http.Request, method, body string) {
	t.Helper()
	if r.Method != method {
		t.Errorf("method %s, want %s", r.Method, method)
	}
	got, _ := io.ReadAll(r.Body)
	if body != "" && string(got) != body {
		t.Errorf("body %s, want %s", got, body)
	}
	if body != "" && r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
	}
}

func problem(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "127.0.0.1:8081", "ftp://host/", "http://", ":bad"} {
		if _, err := adminapi.NewClient(bad); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
	c, err := adminapi.NewClient("http://h:1/prefix?x=1#f")
	if err != nil || c.BaseURL().String() != "http://h:1/prefix/" {
		t.Fatalf("base URL %v %v, want a trailing slash and no query", c.BaseURL(), err)
	}
	if _, err := c.NewRequest("GET", "/v1/holds", nil); err == nil {
		t.Fatal("an absolute path was accepted: it would drop the base path")
	}
	if _, err := adminapi.NewClient("http://h", adminapi.WithHTTPClient(nil)); err == nil {
		t.Fatal("a nil HTTP client was accepted")
	}
}

func TestRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("TokenAndHeaders", func(t *testing.T) { requestsTokenAndHeaders(t, ctx) })

	t.Run("NoTokenNoHeader", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/signing-secrets", func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.Header["Authorization"]; ok {
				t.Error("an Authorization header without a token")
			}
			fmt.Fprint(w, `{"signingSecrets":[{"secretID":"ks_1","fingerprint":"fp","addedOn":"2026-01-02T03:04:05Z","retiredOn":null}]}`)
		})
		l, _, err := c.SigningSecrets.List(ctx)
		if err != nil || len(l.SigningSecrets) != 1 || l.SigningSecrets[0].RetiredOn != nil || l.SigningSecrets[0].AddedOn.Year() != 2026 {
			t.Fatalf("%+v %v", l, err)
		}
	})

	t.Run("IDsArePathEscaped", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.EscapedPath() != "/v1/holds/a%20b%2Fc%3F" {
				t.Errorf("path %s", r.URL.EscapedPath())
			}
			fmt.Fprint(w, `{"holdReference":"a b/c?","placedAt":"2026-01-02T03:04:05.000001Z"}`)
		})
		h, _, err := c.Holds.Get(ctx, "a b/c?")
		if err != nil || h.HoldReference != "a b/c?" || h.PlacedAt.Nanosecond() != 1000 {
			t.Fatalf("%+v %v", h, err)
		}
	})

	t.Run("Bodies", func(t *testing.T) { requestsBodies(t, ctx) })

	t.Run("DoWritesRawBodiesToAWriter", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t, adminapi.WithToken("tok"))
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "process_cpu_seconds_total 1.5\n")
		})
		req, err := c.NewRequest("GET", "metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := c.Do(ctx, req, &buf); err != nil || buf.String() != "process_cpu_seconds_total 1.5\n" {
			t.Fatalf("%q %v", buf.String(), err)
		}
	})

	t.Run("AnswerThatIsNoJSON", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/accounts/a", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>") })
		if _, _, err := c.Accounts.Get(ctx, "a"); err == nil || !strings.Contains(err.Error(), "decoding the answer of GET") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("ContextEndsTheCall", func(t *testing.T) { requestsContextEndsTheCall(t, ctx) })
}

// requestsContextEndsTheCall: a call whose context ends returns the
// context's error.
func requestsContextEndsTheCall(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	mux.HandleFunc("/v1/accounts/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, err := c.Accounts.Get(cctx, "slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
}

// requestsTokenAndHeaders: the token, user agent and Accept headers are
// sent, and amounts decode as decimals.
func requestsTokenAndHeaders(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t, adminapi.WithToken("s3cret"), adminapi.WithUserAgent("test/1"))
	mux.HandleFunc("/v1/accounts/acc-1", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "GET", "")
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("User-Agent") != "test/1" || r.Header.Get("Accept") != "application/json" {
			t.Errorf("headers %v", r.Header)
		}
		fmt.Fprint(w, `{"accountID":"acc-1","currency":"USD","balance":"10.50","held":"0.50","available":"10.00","status":"open"}`)
	})
	a, resp, err := c.Accounts.Get(ctx, "acc-1")
	if err != nil || resp.StatusCode != 200 || a.Available != "10.00" {
		t.Fatalf("%+v %v", a, err)
	}
	if d, err := a.Balance.Decimal(); err != nil || !d.Equal(decimal.RequireFromString("10.5")) {
		t.Fatalf("balance %v %v", d, err)
	}
}

// requestsBodies: each write sends its method and JSON body and decodes the
// answer (fix is always sent with a reconciliation run).
func requestsBodies(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t)
	mux.HandleFunc("/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "POST", `{"accountID":"a","ownerExternalID":"o","currency":"EUR"}`)
		w.WriteHeader(201)
		fmt.Fprint(w, `{"accountID":"a","ownerExternalID":"o","currency":"EUR","balance":"0.00","held":"0.00","available":"0.00","status":"open"}`)
	})
	mux.HandleFunc("/v1/accounts/a", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "PATCH", `{"status":"frozen"}`)
		fmt.Fprint(w, `{"accountID":"a","status":"frozen"}`)
	})
	mux.HandleFunc("/v1/accounts/a/adjustments", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "POST", `{"amount":"-5.25","idempotencyKey":"fee-1"}`)
		w.WriteHeader(201)
		fmt.Fprint(w, `{"available":"1.00","balance":"1.00","held":"0.00","transactionID":"t"}`)
	})
	mux.HandleFunc("/v1/instruments", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "POST", `{"accountID":"a","kind":"source","token":"card"}`)
		fmt.Fprint(w, `{"accountID":"a","kind":"source","token":"card"}`)
	})
	mux.HandleFunc("/v1/signing-secrets", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "POST", `{"generate":true}`)
		w.WriteHeader(201)
		fmt.Fprint(w, `{"secretID":"ks","fingerprint":"fp","secret":"c2VjcmV0"}`)
	})
	mux.HandleFunc("/v1/signing-secrets/ks", func(w http.ResponseWriter, r *http.Request) {
		wantRequest(t, r, "DELETE", "")
		w.WriteHeader(204)
	})
	mux.HandleFunc("/v1/reconciliation/runs", func(w http.ResponseWriter, r *http.Request) {
		// fix is always sent: the server's default is false, but a
		// reader of the request should not have to know it.
		wantRequest(t, r, "POST", `{"fix":false}`)
		w.WriteHeader(201)
		fmt.Fprint(w, `{"runID":"rec_1","status":"clean","findings":[]}`)
	})
	if a, resp, err := c.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: "a", OwnerExternalID: "o", Currency: "EUR"}); err != nil || resp.StatusCode != 201 || a.Balance != "0.00" {
		t.Fatalf("create %+v %v", a, err)
	}
	if a, _, err := c.Accounts.Update(ctx, "a", &adminapi.AccountUpdateRequest{Status: adminapi.Ptr(adminapi.AccountFrozen)}); err != nil || a.Status != "frozen" {
		t.Fatalf("update %+v %v", a, err)
	}
	amt := adminapi.NewAmount(decimal.RequireFromString("-5.25"))
	if adj, _, err := c.Accounts.Adjust(ctx, "a", &adminapi.AdjustmentRequest{Amount: &amt, IdempotencyKey: "fee-1"}); err != nil || adj.TransactionID != "t" {
		t.Fatalf("adjust %+v %v", adj, err)
	}
	if in, resp, err := c.Instruments.Add(ctx, &adminapi.Instrument{Token: "card", Kind: adminapi.KindSource, AccountID: "a"}); err != nil || resp.StatusCode != 200 || in.Token != "card" {
		t.Fatalf("instrument %+v %v", in, err)
	}
	if s, _, err := c.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Generate: true}); err != nil || s.Secret != "c2VjcmV0" {
		t.Fatalf("generate %+v %v", s, err)
	}
	if resp, err := c.SigningSecrets.Retire(ctx, "ks"); err != nil || resp.StatusCode != 204 {
		t.Fatalf("retire %v", err)
	}
	if run, _, err := c.Reconciliation.Run(ctx, nil); err != nil || run.RunID != "rec_1" || run.Status != adminapi.StatusClean {
		t.Fatalf("run %+v %v", run, err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ProblemIsDecoded", func(t *testing.T) { errorsProblemIsDecoded(t, ctx) })

	t.Run("TypeSentinels", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/accounts/gone", func(w http.ResponseWriter, r *http.Request) {
			problem(w, 404, `{"type":"urn:provider-ledger:problem:account-not-found","title":"Not Found","status":404,"detail":"account not found"}`)
		})
		_, _, err := c.Accounts.Get(ctx, "gone")
		if !errors.Is(err, adminapi.ErrAccountNotFound) || !errors.Is(err, adminapi.ErrNotFound) || errors.Is(err, adminapi.ErrHoldNotFound) || errors.Is(err, adminapi.ErrNoRoute) {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("StatusWithoutProblem", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/holds", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "<html>busy</html>")
		})
		_, _, err := c.Holds.List(ctx, nil)
		var e *adminapi.Error
		if !errors.As(err, &e) || e.Status != 503 || e.Title != "Service Unavailable" || e.Slug() != "" || e.RetryAfter != 3*time.Second {
			t.Fatalf("%+v", e)
		}
		if !errors.Is(err, adminapi.ErrUnavailable) || !errors.Is(err, adminapi.ErrServer) {
			t.Fatal("503 is not ErrUnavailable and ErrServer")
		}
	})

	t.Run("Unauthorized", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t, adminapi.WithToken("wrong"))
		mux.HandleFunc("/v1/signing-secrets/ks", func(w http.ResponseWriter, r *http.Request) {
			problem(w, 401, `{"type":"urn:provider-ledger:problem:unauthorized","title":"Unauthorized","status":401,"detail":"a valid admin bearer token is required"}`)
		})
		resp, err := c.SigningSecrets.Retire(ctx, "ks")
		if !errors.Is(err, adminapi.ErrUnauthorized) || resp.StatusCode != 401 {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("CheckResponse", func(t *testing.T) {
		t.Parallel()
		ok := &http.Response{StatusCode: 204, Body: io.NopCloser(strings.NewReader(""))}
		if err := adminapi.CheckResponse(ok); err != nil {
			t.Fatal(err)
		}
		bad := &http.Response{StatusCode: 409, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(
			`{"type":"urn:provider-ledger:problem:account-exists","title":"Conflict","status":409,"detail":"an account with this accountID exists"}`))}
		err := adminapi.CheckResponse(bad)
		if !errors.Is(err, adminapi.ErrAccountExists) || !errors.Is(err, adminapi.ErrConflict) || err.Error() != "409 Conflict (account-exists): an account with this accountID exists" {
			t.Fatalf("%v", err)
		}
	})
}

// errorsProblemIsDecoded: a problem+json answer is an *adminapi.Error with
// its members and field errors, errors.Is follows its status and type, and
// its message is one line.
func errorsProblemIsDecoded(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t)
	mux.HandleFunc("/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		problem(w, 400, `{"type":"urn:provider-ledger:problem:invalid-request","title":"Bad Request","status":400,`+
			`"detail":"currency code must be three uppercase letters","errors":[{"pointer":"/currency","detail":"currency code must be three uppercase letters"},{"pointer":"/status","detail":"unknown status"}]}`)
	})
	_, resp, err := c.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: "a", Currency: "usd"})
	var e *adminapi.Error
	if !errors.As(err, &e) || resp == nil || resp.StatusCode != 400 {
		t.Fatalf("err %T %v", err, err)
	}
	if e.Status != 400 || e.Type != adminapi.TypeBase+"invalid-request" || e.Slug() != "invalid-request" || e.Title != "Bad Request" ||
		len(e.Errors) != 2 || e.Response.Request.Method != "POST" {
		t.Fatalf("%+v", e)
	}
	if fe, ok := e.FieldError("/currency"); !ok || fe.Detail == "" {
		t.Fatalf("field error %v %v", fe, ok)
	}
	if !errors.Is(err, adminapi.ErrBadRequest) || !errors.Is(err, adminapi.ErrInvalidRequest) || errors.Is(err, adminapi.ErrNotFound) || errors.Is(err, adminapi.ErrAccountExists) {
		t.Fatal("errors.Is does not follow the status and the type")
	}
	// One line; the field error that repeats the detail is not
	// repeated, the other is.
	want := "POST " + baseURLPath + "/v1/accounts: 400 Bad Request (invalid-request): currency code must be three uppercase letters at /currency; /status: unknown status"
	if err.Error() != want {
		t.Fatalf("message\n%s\nwant\n%s", err, want)
	}
}

// holdPages serves holds h1…h5 two at a time on mux; a cursor is the
// index of the next hold. seen gets each request's query.
func holdPages(t *testing.T, mux *http.ServeMux, seen *[]string) {
	mux.HandleFunc("/v1/holds", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		*seen = append(*seen, r.URL.RawQuery)
		if q.Get("status") != "held" || q.Get("limit") != "2" {
			t.Errorf("query %s", r.URL.RawQuery)
		}
		from := 0
		if c := q.Get("cursor"); c != "" {
			fmt.Sscan(c, &from)
		}
		out := adminapi.HoldList{Holds: []adminapi.Hold{}}
		for i := from; i < min(from+2, 5); i++ {
			out.Holds = append(out.Holds, adminapi.Hold{HoldReference: fmt.Sprintf("h%d", i+1)})
		}
		if from+2 < 5 {
			out.HasMore, out.NextCursor = true, fmt.Sprint(from+2)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
}

func TestHoldPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("ListReturnsOnePageAndItsCursor", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		var seen []string
		holdPages(t, mux, &seen)
		page, resp, err := c.Holds.List(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 2, Cursor: "2"})
		if err != nil || len(page.Holds) != 2 || page.Holds[0].HoldReference != "h3" || !resp.HasMore || resp.NextCursor != "4" {
			t.Fatalf("%+v %+v %v", page, resp, err)
		}
	})

	t.Run("IterFollowsEveryPage", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		var seen []string
		holdPages(t, mux, &seen)
		var got []string
		for h, err := range c.Holds.ListIter(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, h.HoldReference)
		}
		if strings.Join(got, ",") != "h1,h2,h3,h4,h5" || len(seen) != 3 {
			t.Fatalf("holds %v after requests %v", got, seen)
		}
	})

	t.Run("IterStopsWhenTheCallerDoes", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		var seen []string
		holdPages(t, mux, &seen)
		for h, err := range c.Holds.ListIter(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 2}) {
			if err != nil || h.HoldReference != "h1" {
				t.Fatal(h, err)
			}
			break
		}
		if len(seen) != 1 {
			t.Fatalf("%d pages read for one hold", len(seen))
		}
	})

	t.Run("IterYieldsTheErrorAndStops", func(t *testing.T) { holdPagesIterYieldsTheErrorAndStops(t, ctx) })

	t.Run("HasMoreWithoutCursorIsAnError", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/holds", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"holds":[],"hasMore":true}`)
		})
		var last error
		for _, err := range c.Holds.ListIter(ctx, nil) {
			last = err
		}
		if last == nil || !strings.Contains(last.Error(), "hasMore without nextCursor") {
			t.Fatalf("err %v", last)
		}
	})
}

// holdPagesIterYieldsTheErrorAndStops: a page's error is yielded once and
// ends the iteration.
func holdPagesIterYieldsTheErrorAndStops(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t)
	n := 0
	mux.HandleFunc("/v1/holds", func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			fmt.Fprint(w, `{"holds":[{"holdReference":"h1"}],"hasMore":true,"nextCursor":"x"}`)
			return
		}
		problem(w, 400, `{"type":"urn:provider-ledger:problem:invalid-request","title":"Bad Request","status":400,"detail":"bad cursor"}`)
	})
	var got []string
	var errs []error
	for h, err := range c.Holds.ListIter(ctx, nil) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, h.HoldReference)
	}
	if len(got) != 1 || len(errs) != 1 || !errors.Is(errs[0], adminapi.ErrInvalidRequest) || n != 2 {
		t.Fatalf("holds %v errors %v requests %d", got, errs, n)
	}
}

func TestWireValues(t *testing.T) {
	t.Parallel()
	t.Run("AmountKeepsItsText", func(t *testing.T) {
		t.Parallel()
		var a struct{ A adminapi.Amount }
		if err := json.Unmarshal([]byte(`{"A":"100.00"}`), &a); err != nil || a.A != "100.00" {
			t.Fatal(a, err)
		}
		if b, _ := json.Marshal(a); string(b) != `{"A":"100.00"}` {
			t.Fatalf("%s", b)
		}
		if err := json.Unmarshal([]byte(`{"A":100}`), &a); err == nil {
			t.Fatal("a JSON number was read as an amount")
		}
		if _, err := adminapi.Amount("1,00").Decimal(); err == nil {
			t.Fatal("1,00 parsed")
		}
		if adminapi.NewAmount(decimal.New(-525, -2)) != "-5.25" {
			t.Fatal(adminapi.NewAmount(decimal.New(-525, -2)))
		}
	})
	t.Run("TimestampIsUTCMicroseconds", func(t *testing.T) {
		t.Parallel()
		at := time.Date(2026, 5, 6, 7, 8, 9, 1000, time.FixedZone("x", 3600))
		b, _ := json.Marshal(adminapi.Timestamp{Time: at})
		if string(b) != `"2026-05-06T06:08:09.000001Z"` {
			t.Fatalf("%s", b)
		}
		var back adminapi.Timestamp
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(at) {
			t.Fatal(back, err)
		}
	})
	t.Run("RunWithoutFindingsHasAnEmptyList", func(t *testing.T) {
		t.Parallel()
		b, _ := json.Marshal(adminapi.ReconciliationRun{RunID: "r"})
		if !strings.Contains(string(b), `"findings":[]`) {
			t.Fatalf("%s", b)
		}
	})
}

// TestNoDatabaseCode: a client of the admin API does not link pgx: of
// this module it links only the domain (ledger, for the one Finding) and
// the exact JSON it speaks.
func TestNoDatabaseCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		local, ours := strings.CutPrefix(dep, "github.com/provider-ledger/adapter/")
		if strings.Contains(dep, "jackc/") || ours && local != "adminapi" && local != "ledger" && local != "internal/strictjson" {
			t.Errorf("adminapi imports %s", dep)
		}
	}
}
