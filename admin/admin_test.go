package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

type bundle struct {
	api *admin.Handler
	db  *store.DB
}

func setup(t *testing.T, token string) bundle {
	t.Helper()
	db, _ := storetest.DB(t)
	b := bundle{db: db}
	b.api = admin.New(admin.Config{DB: db, Token: token,
		Ready: func(context.Context) error { return errors.New("no keys") }})
	return b
}

type answer struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (b bundle) do(t *testing.T, method, path, body string, hdr ...string) answer {
	t.Helper()
	return call(t, b.api, method, path, body, hdr...)
}

// call serves one request through h with a recorder; hdr are header
// name/value pairs. A non-empty body must be a JSON object.
func call(t *testing.T, h http.Handler, method, path, body string, hdr ...string) answer {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	admintest.Handler(t, h).ServeHTTP(rec, req)
	documented(t, method, path, rec.Code, rec.Body.Bytes())
	a := answer{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &a.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %q", method, path, rec.Body.String())
		}
	}
	return a
}

// problem asserts a problem+json answer of the status and type slug, with
// an error pointing at pointer when pointer is not empty.
func (a answer) problem(t *testing.T, status int, slug, pointer string) {
	t.Helper()
	if a.status != status || a.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d %q, want %d problem+json; body %v", a.status, a.header.Get("Content-Type"), status, a.body)
	}
	if a.body["type"] != "urn:provider-ledger:problem:"+slug || a.body["status"] != float64(status) {
		t.Fatalf("problem %v, want type %s", a.body, slug)
	}
	if pointer == "" {
		return
	}
	errs, _ := a.body["errors"].([]any)
	for _, e := range errs {
		if e.(map[string]any)["pointer"] == pointer {
			return
		}
	}
	t.Fatalf("problem %v has no error at %s", a.body, pointer)
}

func TestAccountsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, "")

	t.Run("CreateGetPatch", func(t *testing.T) {
		a := b.do(t, "POST", "/v1/accounts", `{"accountID":"api-1","ownerExternalID":"alice","currency":"JPY"}`)
		if a.status != 201 || a.body["balance"] != "0" || a.body["status"] != "open" || a.body["available"] != "0" {
			t.Fatalf("create = %d %v", a.status, a.body)
		}
		if a := b.do(t, "GET", "/v1/accounts/api-1", ""); a.status != 200 || a.body["ownerExternalID"] != "alice" || a.body["currency"] != "JPY" {
			t.Fatalf("get = %d %v", a.status, a.body)
		}
		if a := b.do(t, "PATCH", "/v1/accounts/api-1", `{"status":"frozen"}`); a.status != 200 || a.body["status"] != "frozen" {
			t.Fatalf("patch = %d %v", a.status, a.body)
		}
	})

	t.Run("BadInputChangesNothing", func(t *testing.T) {
		storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "api-2", Owner: "bob", Funds: "10.00"})
		for _, c := range []struct {
			name, method, path, body string
			status                   int
			slug, pointer            string
		}{
			{"Exists", "POST", "/v1/accounts", `{"accountID":"api-2","ownerExternalID":"eve","currency":"USD"}`, 409, "account-exists", ""},
			{"BadCurrency", "POST", "/v1/accounts", `{"accountID":"api-3","ownerExternalID":"eve","currency":"XYZ"}`, 400, "invalid-request", "/currency"},
			{"WrongType", "POST", "/v1/accounts", `{"accountID":"api-3","ownerExternalID":7,"currency":"USD"}`, 400, "invalid-request", "/ownerExternalID"},
			{"UnknownField", "POST", "/v1/accounts", `{"accountID":"api-3","ownerExternalID":"eve","currency":"USD","balance":"100"}`, 400, "invalid-request", "/balance"},
			{"NotJSON", "POST", "/v1/accounts", `{"accountID":`, 400, "invalid-request", ""},
			{"TwoObjects", "POST", "/v1/accounts", `{"accountID":"api-3","ownerExternalID":"eve","currency":"USD"}{}`, 400, "invalid-request", ""},
			{"Array", "POST", "/v1/accounts", `[]`, 400, "invalid-request", ""},
			{"UnknownAccount", "GET", "/v1/accounts/nope", "", 404, "account-not-found", ""},
			{"BadStatus", "PATCH", "/v1/accounts/api-2", `{"status":"gone"}`, 400, "invalid-request", "/status"},
			{"MissingStatus", "PATCH", "/v1/accounts/api-2", `{}`, 400, "invalid-request", "/status"},
			{"PatchUnknown", "PATCH", "/v1/accounts/nope", `{"status":"frozen"}`, 404, "account-not-found", ""},
			// encoding/json matches member names case-insensitively: each
			// name must be exactly a field's, and given once.
			{"AmountInCapitalsToo", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1","AMOUNT":"-100","idempotencyKey":"k"}`, 400, "invalid-request", "/AMOUNT"},
			{"AmountInCapitalsOnly", "POST", "/v1/accounts/api-2/adjustments", `{"Amount":"-9","idempotencyKey":"k"}`, 400, "invalid-request", "/Amount"},
			{"AmountTwice", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1","amount":"-100","idempotencyKey":"k"}`, 400, "invalid-request", "/amount"},
			{"AccountIDInCapitals", "POST", "/v1/accounts", `{"accountID":"api-3","ACCOUNTID":"api-4","ownerExternalID":"eve","currency":"USD"}`, 400, "invalid-request", "/ACCOUNTID"},
			{"StatusInCapitals", "PATCH", "/v1/accounts/api-2", `{"Status":"frozen"}`, 400, "invalid-request", "/Status"},
			{"KindInCapitals", "POST", "/v1/instruments", `{"accountID":"api-2","Kind":"source","token":"tok-caps"}`, 400, "invalid-request", "/Kind"},
			{"ExpiresOnInCapitals", "POST", "/v1/tokens", `{"name":"caps","scopes":["read"],"EXPIRESON":"2030-01-01T00:00:00Z"}`, 400, "invalid-request", "/EXPIRESON"},
			{"AdjustUnknownAccount", "POST", "/v1/accounts/nope/adjustments", `{"amount":"1","idempotencyKey":"k"}`, 404, "account-not-found", ""},
			{"AdjustMalformedAmount", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1.001","idempotencyKey":"k"}`, 400, "invalid-request", "/amount"},
			{"AdjustExponent", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1e3","idempotencyKey":"k"}`, 400, "invalid-request", "/amount"},
			{"AdjustNumberAmount", "POST", "/v1/accounts/api-2/adjustments", `{"amount":1.5,"idempotencyKey":"k"}`, 400, "invalid-request", "/amount"},
			{"AdjustMissingAmount", "POST", "/v1/accounts/api-2/adjustments", `{"idempotencyKey":"k"}`, 400, "invalid-request", "/amount"},
			{"AdjustMissingKey", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1"}`, 400, "invalid-request", "/idempotencyKey"},
			{"AdjustOverdraw", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"-10.01","idempotencyKey":"k-over"}`, 422, "insufficient-available", ""},
			{"NULInString", "POST", "/v1/accounts", `{"accountID":"api-3","ownerExternalID":"e\u0000ve","currency":"USD"}`, 400, "invalid-request", ""},
			{"NULInMemo", "POST", "/v1/accounts/api-2/adjustments", `{"amount":"1","idempotencyKey":"k-nul","memo":"\u0000"}`, 400, "invalid-request", ""},
			{"UnknownRoute", "GET", "/v1/nothing", "", 404, "not-found", ""},
			{"WrongMethod", "DELETE", "/v1/accounts/api-2", "", 405, "method-not-allowed", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				b.do(t, c.method, c.path, c.body).problem(t, c.status, c.slug, c.pointer)
			})
		}
		storetest.AssertBalances(t, b.db, "api-2", "10", "0", "10")
		if a, _ := b.db.GetAccount(context.Background(), "api-2"); a.OwnerExternalID != "bob" || a.Status != "open" {
			t.Fatalf("account changed: %+v", a)
		}
		if _, err := b.db.GetAccount(context.Background(), "api-3"); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("a refused account was created: %v", err)
		}
	})

	t.Run("BodyTooLarge", func(t *testing.T) {
		big := `{"accountID":"big","ownerExternalID":"` + strings.Repeat("x", admin.MaxBody) + `","currency":"USD"}`
		b.do(t, "POST", "/v1/accounts", big).problem(t, 400, "body-too-large", "")
	})
}

// TestConfusableAccountID: an account ID that prints like an existing
// account's is 409 account-id-confusable at /accountID, the detail naming
// that account, and nothing is created.
func TestConfusableAccountID(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "paypal", Owner: "pat"})
	for _, id := range []string{"paypaI", "paypa1"} {
		a := b.do(t, "POST", "/v1/accounts", `{"accountID":"`+id+`","ownerExternalID":"eve","currency":"USD"}`)
		a.problem(t, 409, "account-id-confusable", "/accountID")
		if d, _ := a.body["detail"].(string); !strings.Contains(d, `"paypal"`) {
			t.Fatalf("%s: detail %q does not name paypal", id, d)
		}
		if _, err := b.db.GetAccount(context.Background(), id); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("%s, which prints like paypal, was created: %v", id, err)
		}
	}
	b.do(t, "POST", "/v1/accounts", `{"accountID":"paypal","ownerExternalID":"eve","currency":"USD"}`).problem(t, 409, "account-exists", "")
}

func TestAdjustmentsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "adj-api", Owner: "carol"})
	first := b.do(t, "POST", "/v1/accounts/adj-api/adjustments", `{"amount":"25.5","idempotencyKey":"dep-1","memo":"deposit"}`)
	if first.status != 201 || first.body["balance"] != "25.50" || first.body["available"] != "25.50" || first.body["transactionID"] == "" {
		t.Fatalf("adjust = %d %v", first.status, first.body)
	}
	again := b.do(t, "POST", "/v1/accounts/adj-api/adjustments", `{"amount":"25.50","idempotencyKey":"dep-1","memo":"deposit"}`)
	if again.status != 201 || again.body["transactionID"] != first.body["transactionID"] || again.body["balance"] != "25.50" {
		t.Fatalf("replay = %d %v", again.status, again.body)
	}
	b.do(t, "POST", "/v1/accounts/adj-api/adjustments", `{"amount":"30","idempotencyKey":"dep-1","memo":"deposit"}`).
		problem(t, 422, "idempotency-key-mismatch", "")
	if a := b.do(t, "POST", "/v1/accounts/adj-api/adjustments", `{"amount":"-0.50","idempotencyKey":"fee-1"}`); a.status != 201 || a.body["balance"] != "25.00" {
		t.Fatalf("debit = %d %v", a.status, a.body)
	}
	storetest.AssertBalances(t, b.db, "adj-api", "25", "0", "25")
}

func TestInstrumentsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "ins-api-1"})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "ins-api-2"})
	if a := b.do(t, "POST", "/v1/instruments", `{"token":"card-1","kind":"source","accountID":"ins-api-1"}`); a.status != 201 || a.body["accountID"] != "ins-api-1" {
		t.Fatalf("add = %d %v", a.status, a.body)
	}
	if a := b.do(t, "POST", "/v1/instruments", `{"token":"card-1","kind":"source","accountID":"ins-api-1"}`); a.status != 200 {
		t.Fatalf("same mapping = %d %v", a.status, a.body)
	}
	b.do(t, "POST", "/v1/instruments", `{"token":"card-1","kind":"source","accountID":"ins-api-2"}`).problem(t, 409, "instrument-conflict", "")
	b.do(t, "POST", "/v1/instruments", `{"token":"card-2","kind":"source","accountID":"nope"}`).problem(t, 404, "account-not-found", "")
	b.do(t, "POST", "/v1/instruments", `{"token":"card-3","kind":"wallet","accountID":"ins-api-1"}`).problem(t, 400, "invalid-request", "/kind")
	b.do(t, "POST", "/v1/instruments", `{"token":["x"],"kind":"source","accountID":"ins-api-1"}`).problem(t, 400, "invalid-request", "/token")
}

func TestHoldsAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "h-api", Owner: "dora", Funds: "50", Source: "src-h-api"})
	d := storetest.Hold(t, b.db, "po-api", "dora", "src-h-api", "12.3")
	if !d.Approved() {
		t.Fatal(d)
	}
	a := b.do(t, "GET", "/v1/holds/"+d.Reference, "")
	if a.status != 200 || a.body["amount"] != "12.30" || a.body["status"] != "held" || a.body["payoutID"] != "po-api" {
		t.Fatalf("get = %d %v", a.status, a.body)
	}
	a = b.do(t, "GET", "/v1/holds?payoutID=po-api&status=held", "")
	if hs, _ := a.body["holds"].([]any); a.status != 200 || len(hs) != 1 || a.body["hasMore"] != false {
		t.Fatalf("list = %d %v", a.status, a.body)
	}
	b.do(t, "GET", "/v1/holds/hold_nope", "").problem(t, 404, "hold-not-found", "")
	b.do(t, "GET", "/v1/holds?limit=0", "").problem(t, 400, "invalid-request", "/limit")
	b.do(t, "GET", "/v1/holds?limit=x", "").problem(t, 400, "invalid-request", "/limit")
	b.do(t, "GET", "/v1/holds?status=maybe", "").problem(t, 400, "invalid-request", "/status")
}

func TestAuthAndProbes(t *testing.T) {
	t.Parallel()
	b := setup(t, "s3cret")
	b.do(t, "GET", "/v1/holds", "").problem(t, 401, "unauthorized", "")
	b.do(t, "GET", "/v1/holds", "", "Authorization", "Bearer wrong").problem(t, 401, "unauthorized", "")
	if a := b.do(t, "GET", "/v1/holds", "", "Authorization", "Bearer s3cret"); a.status != 200 {
		t.Fatalf("with token = %d", a.status)
	}
	if a := b.do(t, "GET", "/healthz", ""); a.status != 200 {
		t.Fatalf("healthz = %d", a.status)
	}
	b.do(t, "GET", "/readyz", "").problem(t, 503, "not-ready", "")
}

// TestDatabaseDown: with the database unreachable the admin API answers 503
// problem+json with Retry-After, never a 500 or a 4xx.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	api := admin.New(admin.Config{DB: db})
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/accounts/a", ""},
		{"POST", "/v1/accounts", `{"accountID":"a","ownerExternalID":"o","currency":"USD"}`},
		{"POST", "/v1/accounts/a/adjustments", `{"amount":"1","idempotencyKey":"k"}`},
		{"GET", "/v1/holds", ""},
	} {
		a := call(t, api, c.method, c.path, c.body)
		a.problem(t, 503, "database-unavailable", "")
		if a.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: no Retry-After", c.method, c.path)
		}
	}
}
