package providertest_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider/providertest"
)

func TestConformance(t *testing.T) {
	srv := providertest.NewServer(providertest.WithClock(providertest.NewManualClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))))
	defer srv.Close()
	providertest.RunConformance(t, srv.Target())
}

// TestConformanceSandbox runs the same scenarios against a real sandbox when
// PROVIDER_SANDBOX_BASE_URL, PROVIDER_SANDBOX_PROVIDER_ID,
// PROVIDER_SANDBOX_API_KEY_ID and PROVIDER_SANDBOX_API_KEY_SECRET are set.
func TestConformanceSandbox(t *testing.T) {
	base := os.Getenv("PROVIDER_SANDBOX_BASE_URL")
	if base == "" {
		t.Skip("PROVIDER_SANDBOX_BASE_URL not set: no sandbox to check against")
	}
	providertest.RunConformance(t, providertest.Target{
		BaseURL:      base,
		ProviderID:   os.Getenv("PROVIDER_SANDBOX_PROVIDER_ID"),
		APIKeyID:     os.Getenv("PROVIDER_SANDBOX_API_KEY_ID"),
		APIKeySecret: os.Getenv("PROVIDER_SANDBOX_API_KEY_SECRET"),
		Version:      os.Getenv("PROVIDER_SANDBOX_VERSION"),
		HTTPClient:   &http.Client{Timeout: 30 * time.Second},
		Hooks:        providertest.Hooks{DenyPrefix: os.Getenv("PROVIDER_SANDBOX_DENY_PREFIX") != ""},
	})
}
