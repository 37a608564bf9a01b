package callbacks

// Problem type slugs of the callback listener; the type URI is
// problem.TypeBase + slug. The README lists them with their statuses.
const (
	SlugMalformedBody     = "malformed-body"           // 400
	SlugTooLarge          = "payload-too-large"        // 413
	SlugMalformedJWE      = "malformed-jwe"            // 400
	SlugUnsupportedHeader = "unsupported-jwe-header"   // 400
	SlugUndecryptable     = "undecryptable"            // 400
	SlugMalformedJWT      = "malformed-jwt"            // 400
	SlugInvalidClaims     = "invalid-claims"           // 400
	SlugWrongProvider     = "wrong-provider"           // 403
	SlugNotFound          = "not-found"                // 404
	SlugMethodNotAllowed  = "method-not-allowed"       // 405
	SlugTimeout           = "request-timeout"          // 408
	SlugBodyTimeout       = "body-timeout"             // 408
	SlugKeyMismatch       = "idempotency-key-mismatch" // 422
	SlugCreditAmount      = "credit-amount-mismatch"   // 422
	SlugTooManyRequests   = "too-many-requests"        // 429
	SlugInternal          = "internal"                 // 500
	SlugUnavailable       = "database-unavailable"     // 503
	SlugShuttingDown      = "shutting-down"            // 503
	SlugKeyringStale      = "keyring-stale"            // 503
	SlugKeyringIncomplete = "keyring-incomplete"       // 503
)
