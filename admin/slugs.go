package admin

// The problem types the admin API answers with itself, as the slugs of
// urn:provider-ledger:problem:<slug> (docs/admin-api.md lists them all;
// the ledger's own come with its errors as ledger.Error.Slug).
const (
	slugNotFound              = "not-found"
	slugMethodNotAllowed      = "method-not-allowed"
	slugInternal              = "internal"
	slugDatabaseUnavailable   = "database-unavailable"
	slugBodyTooLarge          = "body-too-large"
	slugCrossOriginRequest    = "cross-origin-request"
	slugUnauthorized          = "unauthorized"
	slugInsufficientScope     = "insufficient-scope"
	slugNotReady              = "not-ready"
	slugReconciliationRunning = "reconciliation-running"
	slugStatementFormat       = "statement-format-unsupported"
)
