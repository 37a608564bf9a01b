package problem_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/problem"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		problem    *problem.Problem
		retryAfter string // the header; "" absent
		errors     []problem.FieldError
	}{
		{"Plain", problem.New("not-found", http.StatusNotFound, ""), "", nil},
		{"RetryAfterRoundsUp", retry(problem.New("too-many-requests", http.StatusTooManyRequests, "busy"), 1200*time.Millisecond), "2", nil},
		{"RetryAfterWholeSeconds", retry(problem.New("shutting-down", http.StatusServiceUnavailable, ""), 3*time.Second), "3", nil},
		{"RetryAfterBelowASecond", retry(problem.New("too-many-requests", http.StatusTooManyRequests, ""), time.Millisecond), "1", nil},
		{"RetryAfterZeroIsAbsent", retry(problem.New("internal", http.StatusInternalServerError, ""), 0), "", nil},
		{"FieldErrors", problem.New("invalid-request", http.StatusBadRequest, "bad input").
			WithField("/amount/value", "not a number").WithField("/currency", "unknown"), "",
			[]problem.FieldError{{Pointer: "/amount/value", Detail: "not a number"}, {Pointer: "/currency", Detail: "unknown"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			problem.Write(w, c.problem)
			checkHeaders(t, w, c.problem.Status)
			if got, ok := w.Header()["Retry-After"]; c.retryAfter == "" && ok || c.retryAfter != "" && (len(got) != 1 || got[0] != c.retryAfter) {
				t.Fatalf("Retry-After %q, want %q", got, c.retryAfter)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			var got problem.Problem
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Type != c.problem.Type || got.Title != http.StatusText(c.problem.Status) || got.Status != c.problem.Status ||
				got.Detail != c.problem.Detail || !slices.Equal(got.Errors, c.errors) {
				t.Fatalf("body %s, want %+v", w.Body, c.problem)
			}
			// Absent, not empty: a client tells "no detail" and "no field
			// errors" by absence; RetryAfter is a header only.
			for name, absent := range map[string]bool{"detail": c.problem.Detail == "", "errors": c.errors == nil, "RetryAfter": true} {
				if _, ok := body[name]; ok == absent {
					t.Errorf("member %q present %v in %s", name, ok, w.Body)
				}
			}
		})
	}
}

func retry(p *problem.Problem, d time.Duration) *problem.Problem {
	p.RetryAfter = d
	return p
}

// checkHeaders checks the status and the headers every problem carries.
func checkHeaders(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	h := w.Header()
	if w.Code != status || h.Get("Content-Type") != "application/problem+json" || h.Get("Cache-Control") != "no-store" ||
		h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("status %d, headers %v", w.Code, h)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	p := problem.New("invalid-request", http.StatusBadRequest, "d")
	if p.Type != "urn:provider-ledger:problem:invalid-request" || p.Title != "Bad Request" || p.Status != 400 || p.Detail != "d" {
		t.Fatalf("%+v", p)
	}
}

func TestWriteMethodNotAllowed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, allow string
		want        []string // nil: no Allow header
	}{
		{"OptionsLast", "GET, POST, OPTIONS", []string{"GET, POST"}},
		{"OptionsFirst", "OPTIONS, POST", []string{"POST"}},
		{"OnlyOptions", "OPTIONS", nil},
		{"NoOptions", "GET, HEAD", []string{"GET, HEAD"}},
		{"NoAllow", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			if c.allow != "" {
				w.Header().Set("Allow", c.allow)
			}
			problem.WriteMethodNotAllowed(w, problem.New("method-not-allowed", http.StatusMethodNotAllowed, ""))
			checkHeaders(t, w, http.StatusMethodNotAllowed)
			if got := w.Header().Values("Allow"); !slices.Equal(got, c.want) {
				t.Fatalf("Allow %q, want %q", got, c.want)
			}
		})
	}
}

// TestWriteThroughAHandler: a 405 through a real listener carries the
// problem body and the Allow header without OPTIONS.
func TestWriteThroughAHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", "POST, OPTIONS")
		problem.WriteMethodNotAllowed(w, problem.New("method-not-allowed", http.StatusMethodNotAllowed, "use POST"))
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p problem.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.Status != 405 || p.Detail != "use POST" || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("%d %v %+v, %v", resp.StatusCode, resp.Header, p, err)
	}
}
