package admin_test

import (
	"net/http"
	"testing"

	"github.com/provider-ledger/adapter/admin"
)

// TestMetricsAuth: with a token, /metrics needs it too unless PublicMetrics
// is set; /healthz and /readyz stay open for probes.
func TestMetricsAuth(t *testing.T) {
	t.Parallel()
	// Any body will do; the recorder helper reads JSON.
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	for _, c := range []struct {
		name          string
		token         string
		public        bool
		without, with int
	}{
		{"TokenProtectsMetrics", "s3cret", false, 401, 200},
		{"PublicMetrics", "s3cret", true, 200, 200},
		{"NoToken", "", false, 200, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := admin.New(admin.Config{Token: c.token, PublicMetrics: c.public, Metrics: metrics})
			a := call(t, api, "GET", "/metrics", "")
			if a.status != c.without {
				t.Fatalf("/metrics without the token = %d, want %d", a.status, c.without)
			}
			if a.status == 401 {
				a.problem(t, 401, "unauthorized", "")
				if a.header.Get("WWW-Authenticate") == "" {
					t.Fatal("no WWW-Authenticate")
				}
			}
			var hdr []string
			if c.token != "" {
				hdr = []string{"Authorization", "Bearer " + c.token}
			}
			if a := call(t, api, "GET", "/metrics", "", hdr...); a.status != c.with {
				t.Fatalf("/metrics with the token = %d, want %d", a.status, c.with)
			}
			if a := call(t, api, "GET", "/metrics", "", "Authorization", "Bearer wrong"); c.without == 401 && a.status != 401 {
				t.Fatalf("/metrics with a wrong token = %d", a.status)
			}
			if a := call(t, api, "GET", "/healthz", ""); a.status != 200 {
				t.Fatalf("/healthz = %d", a.status)
			}
			if a := call(t, api, "GET", "/readyz", ""); a.status != 200 {
				t.Fatalf("/readyz = %d", a.status)
			}
		})
	}
}
