package providertest

import (
	"net/http"
	"net/http/httptest"
)

// Server is a Service listening on a loopback address, in the manner of
// httptest.Server.
type Server struct {
	*Service
	// URL is the base URL of the provider API, with no trailing slash.
	URL string

	ts *httptest.Server
}

// NewServer starts a Server. The caller must Close it.
func NewServer(opts ...Option) *Server {
	svc := NewService(opts...)
	ts := httptest.NewServer(svc)
	return &Server{Service: svc, URL: ts.URL, ts: ts}
}

// Close shuts the server down, blocking until outstanding requests complete
// (open any Gate first).
func (s *Server) Close() { s.ts.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Target describes the server for RunConformance, with every hook the fake
// supports wired in.
func (s *Server) Target() Target {
	id, secret := s.APIKey()
	return Target{
		BaseURL:      s.URL,
		ProviderID:   s.ProviderID(),
		APIKeyID:     id,
		APIKeySecret: secret,
		HTTPClient:   s.Client(),
		Hooks:        s.hooks(),
	}
}
