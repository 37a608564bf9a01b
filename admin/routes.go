package admin

import (
	"fmt"
	"net/http"
	"regexp"

	"github.com/provider-ledger/adapter/ledger"
)

// routeSpec is one row of the route table.
type routeSpec struct {
	method, path string
	// scope is the scope a token needs; "" for a route that needs none.
	scope string
	// alone: a write of many transactions (a reconciliation run, a KEK
	// rekey), audited once it has ended, in a record of its own.
	alone bool
	// redact: the body carries a secret; the audit keeps no digest of it.
	redact bool
}

// routeTable is every route of the admin API, with the scope it needs:
// the one place scopes are decided (docs/admin-api.md prints it; the
// OpenAPI document's security says the same, held by TestOpenAPI).
var routeTable = []routeSpec{
	{method: http.MethodGet, path: "/healthz"},
	{method: http.MethodGet, path: "/readyz"},
	{method: http.MethodGet, path: "/openapi.json"},
	{method: http.MethodGet, path: "/metrics", scope: ledger.ScopeMetrics},

	{method: http.MethodGet, path: "/v1/accounts", scope: ledger.ScopeRead},
	{method: http.MethodPost, path: "/v1/accounts", scope: ledger.ScopeOperate},
	{method: http.MethodGet, path: "/v1/accounts/:accountID", scope: ledger.ScopeRead},
	{method: http.MethodPatch, path: "/v1/accounts/:accountID", scope: ledger.ScopeOperate},
	{method: http.MethodPost, path: "/v1/accounts/:accountID/adjustments", scope: ledger.ScopeAdjust},
	{method: http.MethodGet, path: "/v1/accounts/:accountID/holds", scope: ledger.ScopeRead},
	{method: http.MethodGet, path: "/v1/accounts/:accountID/statement", scope: ledger.ScopeRead},
	{method: http.MethodPost, path: "/v1/instruments", scope: ledger.ScopeOperate},
	{method: http.MethodGet, path: "/v1/holds", scope: ledger.ScopeRead},
	{method: http.MethodGet, path: "/v1/holds/:holdReference", scope: ledger.ScopeRead},
	{method: http.MethodGet, path: "/v1/journal/transactions", scope: ledger.ScopeRead},
	{method: http.MethodGet, path: "/v1/journal/entries", scope: ledger.ScopeRead},

	{method: http.MethodGet, path: "/v1/adjustments", scope: ledger.ScopeRead},
	{method: http.MethodGet, path: "/v1/adjustments/:adjustmentID", scope: ledger.ScopeRead},
	{method: http.MethodPost, path: "/v1/adjustments/:adjustmentID/approval", scope: ledger.ScopeApprove},
	{method: http.MethodPost, path: "/v1/adjustments/:adjustmentID/rejection", scope: ledger.ScopeApprove},

	{method: http.MethodGet, path: "/v1/signing-secrets", scope: ledger.ScopeSecrets},
	{method: http.MethodPost, path: "/v1/signing-secrets", scope: ledger.ScopeSecrets, redact: true},
	{method: http.MethodDelete, path: "/v1/signing-secrets/:secretID", scope: ledger.ScopeSecrets},
	{method: http.MethodPost, path: "/v1/keyring/rekey", scope: ledger.ScopeSecrets, alone: true},

	{method: http.MethodPost, path: "/v1/reconciliation/runs", scope: ledger.ScopeOperate, alone: true},
	{method: http.MethodPost, path: "/v1/reconciliation/findings/:findingID/acknowledgement", scope: ledger.ScopeOperate},

	{method: http.MethodGet, path: "/v1/tokens", scope: ledger.ScopeAdmin},
	{method: http.MethodPost, path: "/v1/tokens", scope: ledger.ScopeAdmin},
	{method: http.MethodDelete, path: "/v1/tokens/:tokenID", scope: ledger.ScopeAdmin},

	{method: http.MethodGet, path: "/v1/audit", scope: ledger.ScopeAudit},
}

// spec returns the route table's row of a route; a route missing from
// the table is a bug, found by the first New.
func spec(method, path string) routeSpec {
	for _, rs := range routeTable {
		if rs.method == method && rs.path == path {
			return rs
		}
	}
	panic(fmt.Sprintf("admin: %s %s is not in the route table", method, path))
}

// register records a route as served and returns its row.
func (s *Handler) register(method, path string) routeSpec {
	rs := spec(method, path)
	auth := rs.scope != "" && !(path == "/metrics" && s.cfg.PublicMetrics)
	scope := rs.scope
	if !auth {
		scope = ""
	}
	s.routes = append(s.routes, Route{Method: method, Path: path, Auth: auth, Scope: scope})
	return rs
}

// routeScopes returns the route table: the scope each route needs, by
// "METHOD /path" in the router's syntax ("" for the open routes).
func routeScopes() map[string]string {
	out := make(map[string]string, len(routeTable))
	for _, rs := range routeTable {
		out[rs.method+" "+rs.path] = rs.scope
	}
	return out
}

var pathParam = regexp.MustCompile(`:([A-Za-z]+)`)

// template is a router path as an OpenAPI template (and the audit's
// route): /v1/accounts/:accountID is /v1/accounts/{accountID}.
func template(path string) string { return pathParam.ReplaceAllString(path, "{$1}") }
