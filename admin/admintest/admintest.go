// Package admintest holds the admin API's tests to its OpenAPI document
// (admin.OpenAPI): Handler wraps an admin handler so that every answer a
// test receives is validated against the document, and every request the
// server accepts (any 2xx) is too; a mismatch fails the test. Validate
// checks the document itself against OpenAPI 3.1.
//
// The validator is pb33f/libopenapi-validator, which implements OpenAPI
// 3.1 with JSON Schema 2020-12 (kin-openapi, the other choice, validates
// 3.0 and reads 3.1 only in part). It is a test dependency: ledgerd does
// not link it.
//
// Where the validation is looser than the document: security requirements
// are not checked (a loopback admin API without LEDGER_ADMIN_TOKEN takes
// requests without a token; the admin tests check tokens and scopes
// themselves, and TestOpenAPI holds each operation's security to the
// route table), nor are the answers of routes the document has not (the
// router's not-found and method-not-allowed, whose problem bodies the
// admin tests check).
package admintest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/provider-ledger/adapter/admin"
)

// load builds the validator of admin.OpenAPI once per test binary.
var load = sync.OnceValues(func() (validator.Validator, error) {
	b, err := admin.OpenAPI()
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc, config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, fmt.Errorf("admintest: %v", errs)
	}
	return v, nil
})

// mu serialises the validator's use: its caches are built as it goes.
var mu sync.Mutex

// Validate checks the document against the OpenAPI 3.1 specification's
// schema and returns every error found.
func Validate() []string {
	v, err := load()
	if err != nil {
		return []string{err.Error()}
	}
	mu.Lock()
	defer mu.Unlock()
	ok, errs := v.ValidateDocument()
	if ok {
		return nil
	}
	return describe(errs)
}

func describe(errs []*verrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		line := e.Message
		if e.Reason != "" {
			line += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			line += fmt.Sprintf("; %s at %s", f.Reason, f.FieldPath)
		}
		out = append(out, line)
	}
	return out
}

// Handler returns h wrapped for a test: each answer is checked against the
// document, and each request too when the answer is a 2xx (the server
// accepted it, so the document must describe it). A mismatch is a test
// error naming the request.
func Handler(t testing.TB, h http.Handler) http.Handler {
	v, err := load()
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		tee := &recorder{ResponseWriter: w, header: w.Header()}
		h.ServeHTTP(tee, r)
		if tee.status == 0 {
			tee.status = http.StatusOK
		}
		if skip(tee) {
			return
		}
		check(t, v, r, body, tee)
	})
}

// skip reports the router's own answers (no such route, a method the
// route does not serve), which no operation of the document describes.
func skip(rec *recorder) bool {
	if rec.status != http.StatusNotFound && rec.status != http.StatusMethodNotAllowed {
		return false
	}
	b := rec.body.Bytes()
	return bytes.Contains(b, []byte(`"urn:provider-ledger:problem:not-found"`)) ||
		bytes.Contains(b, []byte(`"urn:provider-ledger:problem:method-not-allowed"`))
}

func check(t testing.TB, v validator.Validator, r *http.Request, body []byte, rec *recorder) {
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp := &http.Response{StatusCode: rec.status, Header: rec.header.Clone(), Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		Request: req}
	mu.Lock()
	defer mu.Unlock()
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		t.Errorf("%s %s answered %d, which the OpenAPI document does not describe:\n  %s\n  body: %.400s",
			r.Method, r.URL, rec.status, strings.Join(describe(errs), "\n  "), rec.body.String())
	}
	if rec.status < 200 || rec.status > 299 {
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if ok, errs := v.ValidateHttpRequest(req); !ok {
		t.Errorf("%s %s was accepted (%d), and the OpenAPI document says it is not valid:\n  %s\n  body: %.400s",
			r.Method, r.URL, rec.status, strings.Join(describe(errs), "\n  "), body)
	}
}

// recorder passes an answer through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	header http.Header
	status int
	body   bytes.Buffer
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.body.Write(p)
	return rec.ResponseWriter.Write(p)
}

// Flush passes a flush through, for streamed answers.
func (rec *recorder) Flush() {
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
