package admin

// RouteScopes exposes routeScopes to the external tests, which hold the
// OpenAPI document's security requirements to the route table.
var RouteScopes = routeScopes
