// Package problem writes RFC 9457 problem details (application/problem+json)
// with stable type URIs. docs/contract.md §2.7 lists every type the
// callbacks answer, with its status; docs/admin-api.md those of the admin
// API.
package problem

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TypeBase prefixes every problem type: the type of slug "invalid-request"
// is TypeBase + "invalid-request". The URIs are identifiers, stable across
// releases; branch on them, not on titles or details.
const TypeBase = "urn:provider-ledger:problem:"

// FieldError points at one offending input field.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter time.Duration `json:"-"`
}

// New returns a problem of the given slug, status and detail; the title is
// the status text.
func New(slug string, status int, detail string) *Problem {
	return &Problem{Type: TypeBase + slug, Title: http.StatusText(status), Status: status, Detail: detail}
}

// WithField adds a field error and returns p.
func (p *Problem) WithField(pointer, detail string) *Problem {
	p.Errors = append(p.Errors, FieldError{Pointer: pointer, Detail: detail})
	return p
}

// Write sends p as the response.
func Write(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if p.RetryAfter > 0 {
		secs := int((p.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// WriteMethodNotAllowed sends p (a 405) with an Allow header that lists
// only the methods the route serves. httprouter always adds OPTIONS to
// the Allow it sets, but these routers answer OPTIONS with 405 too, so
// OPTIONS is taken out.
func WriteMethodNotAllowed(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	if allow := h.Get("Allow"); allow != "" {
		methods := strings.Split(allow, ", ")
		methods = slices.DeleteFunc(methods, func(m string) bool { return m == http.MethodOptions })
		if len(methods) == 0 {
			h.Del("Allow")
		} else {
			h.Set("Allow", strings.Join(methods, ", "))
		}
	}
	Write(w, p)
}
