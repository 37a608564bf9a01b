package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/provider"
)

// Endpoint names an HTTP API a program calls and how a person points the
// program at it, so that an error can say what to do next.
type Endpoint struct {
	What   string // "ledgerd's admin API"
	Server string // what has to be running: "ledgerd"
	// URLFlag and URLEnv set the base URL: "--admin", "LEDGER_ADMIN_URL".
	URLFlag, URLEnv string
	// Credentials says how to pass them, for a 401: "pass the admin token
	// with --admin-token or LEDGER_ADMIN_TOKEN".
	Credentials string
	// NoRoute says what a 404 for a route means, for a 404 without a
	// problem of the API ("" for none).
	NoRoute string
}

// The endpoints of this project's programs.
var (
	AdminAPI = Endpoint{What: "ledgerd's admin API", Server: "ledgerd", URLFlag: "--admin", URLEnv: "LEDGER_ADMIN_URL",
		Credentials: "pass ledgerd's admin token with --admin-token or LEDGER_ADMIN_TOKEN",
		NoRoute:     "is --admin the admin listener of ledgerd (LEDGER_ADMIN_LISTEN, default 127.0.0.1:8081), not its callback listener?"}
	ProviderAPI = Endpoint{What: "the service's provider API", Server: "the service (for a local sandbox: servicesim)",
		URLFlag: "--base-url", URLEnv: "SERVICE_BASE_URL",
		Credentials: "check the API key: --api-key-id and --api-key-secret (SERVICE_API_KEY_ID, SERVICE_API_KEY_SECRET)"}
	Callbacks = Endpoint{What: "ledgerd's callbacks", Server: "ledgerd", URLFlag: "--callbacks"}
)

// hinted is an error with the next step appended; it unwraps to the error.
type hinted struct {
	msg string
	err error
}

func (h *hinted) Error() string { return h.msg }
func (h *hinted) Unwrap() error { return h.err }

// Explain returns err with, on the same line, what to do next when the
// cause is one a person can act on: a 401 (how to pass the credentials), a
// refused connection or an unknown host (is the server running, which flag
// sets the URL), a timeout, a missing route, a database outage. Other
// errors come back unchanged; nil stays nil.
func (e Endpoint) Explain(err error) error {
	var already *hinted
	if err == nil || errors.As(err, &already) {
		return err
	}
	var hint string
	msg := err.Error()
	status, slug := statusOf(err)
	var dnsErr *net.DNSError
	switch {
	case status == http.StatusUnauthorized && e.Credentials != "":
		hint = e.Credentials
	case status == http.StatusNotFound && (slug == "not-found" || slug == "") && e.NoRoute != "":
		hint = e.NoRoute
	case status == http.StatusServiceUnavailable && slug == "database-unavailable":
		hint = e.Server + " cannot reach its database: check that Postgres is up and ledgerd's DATABASE_URL, then retry"
	case status != 0:
		return err
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = fmt.Sprintf("cannot reach %s at %s: connection refused", e.What, hostOf(err))
		hint = fmt.Sprintf("is %s running? (%s)", e.Server, e.urlFlags())
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("cannot reach %s: host %s: %s", e.What, dnsErr.Name, dnsErr.Err)
		hint = "check the host in " + e.urlFlags()
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("%s at %s did not answer in time", e.What, hostOf(err))
		hint = fmt.Sprintf("is %s overloaded, or the URL wrong? (%s)", e.Server, e.urlFlags())
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		// net/http has no typed error for this one.
		hint = "use http:// in " + e.urlFlags()
	default:
		return err
	}
	return &hinted{msg: msg + "; " + hint, err: err}
}

func (e Endpoint) urlFlags() string {
	if e.URLEnv == "" {
		return e.URLFlag
	}
	return e.URLFlag + " or " + e.URLEnv
}

// statusOf is the HTTP status and problem slug of an API error, 0 when err
// is no answer of an API.
func statusOf(err error) (int, string) {
	var ae *adminapi.Error
	var pe *provider.Error
	switch {
	case errors.As(err, &ae):
		return ae.Status, ae.Slug()
	case errors.As(err, &pe):
		return pe.Status, strings.TrimPrefix(pe.Type, adminapi.TypeBase)
	}
	return 0, ""
}

// hostOf is the scheme and host of the URL a transport error is about.
func hostOf(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			return u.Scheme + "://" + u.Host
		}
	}
	return "the given URL"
}
