package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
)

// TestReadyzReasons: /readyz is 200 when ready; not ready, a 503 problem
// that lists every reason by name, with a detail for each.
func TestReadyzReasons(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		err     error
		status  int
		reasons []admin.ReadyReason
	}{
		{"Ready", nil, 200, nil},
		{"Reasons", &admin.NotReadyError{Reasons: []admin.ReadyReason{
			{Reason: "database-read-only", Detail: "new sessions are read-only"},
			{Reason: "keyring-stale", Detail: "the keyring was last loaded 12s ago"},
		}}, 503, []admin.ReadyReason{
			{Reason: "database-read-only", Detail: "new sessions are read-only"},
			{Reason: "keyring-stale", Detail: "the keyring was last loaded 12s ago"},
		}},
		{"PlainError", errors.New("starting"), 503, []admin.ReadyReason{{Reason: "not-ready", Detail: "starting"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := admin.New(admin.Config{Ready: func(context.Context) error { return c.err }})
			rec := httptest.NewRecorder()
			admintest.Handler(t, api).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if c.status == 200 {
				return
			}
			var body struct {
				Type, Detail string
				Status       int
				Reasons      []admin.ReadyReason
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" || body.Type != "urn:provider-ledger:problem:not-ready" ||
				body.Status != 503 || body.Detail != c.err.Error() || !reflect.DeepEqual(body.Reasons, c.reasons) {
				t.Fatalf("%s %+v", ct, body)
			}
		})
	}
}
