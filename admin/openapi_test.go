package admin_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// apiDoc is the parsed OpenAPI document: what TestOpenAPI checks and what
// every request of this package's tests is held to (see documented).
type apiDoc struct {
	OpenAPI string `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage
	raw     any
}

type apiOperation struct {
	OperationID string                     `json:"operationId"`
	Security    *[]map[string][]string     `json:"security"`
	Responses   map[string]json.RawMessage `json:"responses"`
	RequestBody json.RawMessage            `json:"requestBody"`
}

var loadDoc = sync.OnceValues(func() (*apiDoc, error) {
	b, err := admin.OpenAPI()
	if err != nil {
		return nil, err
	}
	d := &apiDoc{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, err
	}
	return d, json.Unmarshal(b, &d.raw)
})

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operation returns the document's operation of method on the template.
func (d *apiDoc) operation(method, template string) (apiOperation, bool) {
	raw, ok := d.Paths[template][strings.ToLower(method)]
	if !ok {
		return apiOperation{}, false
	}
	var op apiOperation
	if err := json.Unmarshal(raw, &op); err != nil {
		return apiOperation{}, false
	}
	return op, true
}

// template returns the document's path template that path (decoded, no
// query) matches: {name} matches one non-empty segment.
func (d *apiDoc) template(path string) (string, bool) {
	segs := strings.Split(path, "/")
	for tmpl := range d.Paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		match := true
		for i := range ts {
			if strings.HasPrefix(ts[i], "{") {
				match = match && segs[i] != ""
			} else {
				match = match && ts[i] == segs[i]
			}
		}
		if match {
			return tmpl, true
		}
	}
	return "", false
}

// documented fails t unless the document lists status for the request's
// route: every answer a test sees is one the document promises. The
// router's own answers (no such route: not-found, a method the route does
// not serve: method-not-allowed) are checked to be those.
func documented(t *testing.T, method, target string, status int, body []byte) {
	t.Helper()
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	u, err := url.Parse(target)
	if err != nil {
		return // the request itself was built from it: not reached
	}
	var p struct{ Type string }
	_ = json.Unmarshal(body, &p)
	switch p.Type {
	case "urn:provider-ledger:problem:not-found":
		return // no route here (or a route this server was built without)
	case "urn:provider-ledger:problem:method-not-allowed":
		if status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: a method-not-allowed problem with status %d", method, target, status)
		}
		return
	}
	tmpl, ok := d.template(u.Path)
	if !ok {
		t.Errorf("%s %s answered %d, and the OpenAPI document has no path for it", method, target, status)
		return
	}
	op, ok := d.operation(method, tmpl)
	if !ok {
		t.Errorf("%s %s answered %d, and the OpenAPI document has no %s on %s", method, target, status, method, tmpl)
		return
	}
	if _, ok := op.Responses[strconv.Itoa(status)]; !ok {
		t.Errorf("%s %s answered %d, which the OpenAPI document does not list for %s %s (it lists %v)",
			method, target, status, method, tmpl, slices.Sorted(maps.Keys(op.Responses)))
	}
}

// routerPath converts a router pattern (/v1/accounts/:accountID) to an
// OpenAPI template (/v1/accounts/{accountID}).
func routerPath(p string) string {
	return regexp.MustCompile(`:([A-Za-z]+)`).ReplaceAllString(p, "{$1}")
}

// fullAPI is the admin API with every optional part configured and a
// token: every route registered.
func fullAPI(t *testing.T) *admin.Handler {
	t.Helper()
	db, _ := storetest.DB(t)
	kek := make([]byte, keyring.KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	secrets, err := keyring.NewVault(db, kek, keyring.VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return admin.New(admin.Config{DB: db, Token: "tok", Secrets: secrets, Reconciler: fixedReconciler{reconciliation.Report{}},
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("m 1\n")) })})
}

// TestOpenAPI holds the document to OpenAPI 3.1 and to itself: a real
// validator finds it valid, it parses as 3.1, every reference resolves,
// and no YAML slip left a member without a value (an unquoted comma in a
// flow mapping makes the text after it a key).
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	if errs := admintest.Validate(); len(errs) > 0 {
		t.Errorf("the OpenAPI document is not valid OpenAPI 3.1:\n%s", strings.Join(errs, "\n"))
	}
	if !strings.HasPrefix(d.OpenAPI, "3.1.") {
		t.Fatalf("openapi %q, want 3.1.x", d.OpenAPI)
	}
	n := 0
	walkDoc(d.raw, "", func(path string, v map[string]any) {
		if ref, ok := v["$ref"].(string); ok {
			n++
			if !resolves(d.raw, ref) {
				t.Errorf("$ref %s does not resolve", ref)
			}
		}
		for k, c := range v {
			if c == nil && !strings.HasSuffix(path, "/enum") {
				t.Errorf("%s/%s has no value: a stray key (an unquoted comma in a flow mapping?)", path, k)
			}
		}
	})
	if n < 50 {
		t.Fatalf("only %d references: the walk is not looking", n)
	}
}

// walkDoc calls fn on every object of v, with its JSON Pointer.
func walkDoc(v any, path string, fn func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		for k, c := range v {
			walkDoc(c, path+"/"+k, fn)
		}
	case []any:
		for i, c := range v {
			walkDoc(c, path+"/"+strconv.Itoa(i), fn)
		}
	}
}

// TestOpenAPIRoutes holds the document to the server: every route it
// registers (with every optional part configured) is in it with the same
// method and vice versa; path parameters are declared; each route that
// needs a token names, in security, exactly the scope of the route table,
// and lists 401 and 403; every write lists 403; and the
// admin listener serves it at /openapi.json without a token.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	s := fullAPI(t)
	registered := map[string]admin.Route{}
	for _, r := range s.Routes() {
		registered[r.Method+" "+routerPath(r.Path)] = r
	}
	documentedOps := map[string]bool{}
	for tmpl, item := range d.Paths {
		for m := range item {
			if slices.Contains(httpMethods, m) {
				documentedOps[strings.ToUpper(m)+" "+tmpl] = true
			}
		}
	}
	for k := range registered {
		if !documentedOps[k] {
			t.Errorf("route %s is served and not in the OpenAPI document", k)
		}
	}
	for k := range documentedOps {
		if _, ok := registered[k]; !ok {
			t.Errorf("the OpenAPI document has %s, which the server does not serve", k)
		}
	}
	if len(registered) < 28 {
		t.Fatalf("only %d routes registered: %v", len(registered), registered)
	}
	for k, r := range registered {
		method, tmpl, _ := strings.Cut(k, " ")
		if op, ok := d.operation(method, tmpl); ok {
			checkOperation(t, k, r, op)
		}
	}
	checkPathParameters(t, d)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	want, _ := admin.OpenAPI()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatalf("GET /openapi.json = %d %q, %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}

// checkOperation holds one operation to its route.
func checkOperation(t *testing.T, k string, r admin.Route, op apiOperation) {
	t.Helper()
	var scopes []string
	optional := false
	if op.Security != nil {
		for _, req := range *op.Security {
			if len(req) == 0 {
				optional = true
			}
			scopes = append(scopes, req["adminToken"]...)
		}
	}
	switch {
	case !r.Auth && (op.Security == nil || len(*op.Security) != 0) && k != "GET /metrics":
		t.Errorf("%s needs no token; the document's security is %v", k, op.Security)
	case r.Auth && (len(scopes) != 1 || scopes[0] != r.Scope):
		t.Errorf("%s needs the scope %s; the document's security names %v", k, r.Scope, scopes)
	case k == "GET /metrics" && (!optional || len(scopes) != 1 || scopes[0] != "metrics"):
		t.Errorf("/metrics is open on loopback and needs the scope metrics otherwise; the document says %v", op.Security)
	}
	for _, status := range []string{"401", "403"} {
		if _, ok := op.Responses[status]; r.Auth && !ok {
			t.Errorf("%s needs a token and does not list %s", k, status)
		}
	}
	if _, ok := op.Responses["403"]; op.RequestBody != nil && !ok {
		t.Errorf("%s takes a body and does not list 403 (a browser's request from another site)", k)
	}
	if op.OperationID == "" {
		t.Errorf("%s has no operationId", k)
	}
	if scope := admin.RouteScopes()[r.Method+" "+r.Path]; r.Auth && scope != r.Scope {
		t.Errorf("%s: route scope %q, route table %q", k, r.Scope, scope)
	}
}

// checkPathParameters: every {name} of a template is declared a required
// path parameter, and nothing else is.
func checkPathParameters(t *testing.T, d *apiDoc) {
	t.Helper()
	var raw map[string]map[string]any
	b, _ := json.Marshal(d.raw.(map[string]any)["paths"])
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for tmpl, item := range raw {
		want := regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(tmpl, -1)
		declared := map[string]bool{}
		for _, p := range paramsOf(d.raw, item["parameters"]) {
			if p["in"] == "path" {
				declared[p["name"].(string)] = p["required"] == true
			}
		}
		for _, w := range want {
			if !declared[w[1]] {
				t.Errorf("%s: path parameter %s is not declared as a required path parameter", tmpl, w[1])
			}
		}
		if len(declared) != len(want) {
			t.Errorf("%s declares path parameters %v", tmpl, declared)
		}
	}
}

// TestOpenAPISaysWhatTheServerEnforces: the rules JSON Schema can say are
// in the schemas, from the same lists the server reads (the currencies),
// and every link names an operation that takes the parameters it fills.
func TestOpenAPISaysWhatTheServerEnforces(t *testing.T) {
	t.Parallel()
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `json:"enum"`
			} `json:"schemas"`
		} `json:"components"`
	}
	b, _ := admin.OpenAPI()
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Schemas["Currency"].Enum; !slices.Equal(got, ledger.Currencies()) {
		t.Errorf("the document's currencies are %d codes, the server's %d", len(got), len(ledger.Currencies()))
	}
	if got := doc.Components.Schemas["Scope"].Enum; !slices.Equal(got, ledger.Scopes()) {
		t.Errorf("the document's scopes %v, the server's %v", got, ledger.Scopes())
	}
	ops := map[string]bool{}
	links := 0
	walkDoc(d.raw, "", func(_ string, v map[string]any) {
		if id, ok := v["operationId"].(string); ok {
			ops[id] = true
		}
	})
	walkDoc(d.raw, "", func(path string, v map[string]any) {
		if !strings.HasSuffix(path, "/links") {
			return
		}
		for name, l := range v {
			links++
			if id, _ := l.(map[string]any)["operationId"].(string); !ops[id] {
				t.Errorf("link %s at %s names operation %q, which the document has not", name, path, id)
			}
		}
	})
	if links < 8 {
		t.Errorf("%d links: the create and read pairs are not linked", links)
	}
}

// resolves reports whether a local reference (#/a/b) names a value of doc.
func resolves(doc any, ref string) bool {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	v := doc
	for _, tok := range strings.Split(path, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[tok]; !ok {
			return false
		}
	}
	return true
}

// paramsOf returns the parameters of a path item's list, references
// resolved.
func paramsOf(doc, list any) []map[string]any {
	var out []map[string]any
	items, _ := list.([]any)
	for _, it := range items {
		p, _ := it.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			v := doc
			for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				v = v.(map[string]any)[tok]
			}
			p, _ = v.(map[string]any)
		}
		out = append(out, p)
	}
	return out
}
