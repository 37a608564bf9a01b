// Package callbacks serves the four ledger callbacks the payments service
// sends (contract §2): authorize, capture, release and
// credit-account, each a POST of {"request": "<compact JWE>"} answered
// 200 {"response": "<compact JWE>"} for every business outcome.
//
// # Path of one callback
//
//  1. The body is read (at most 64 KiB, else 413) before the callback takes
//     an in-flight slot, under a deadline of its own (Config.BodyTimeout
//     from arrival, else 408 body-timeout), and must be a JSON object with
//     a string "request" (else 400).
//  2. The keyring opens the JWE: header checks first (A256KW + A256GCM, no
//     zip), then each active signing secret, most recently successful
//     first; the inner JWT may be a claims object, an HS256 JWS or an
//     unsecured JWT (package envelope). Failures are 400.
//  3. The claims are checked and decoded in one pass (package
//     callbacks/claims) into the typed request of the decision: every
//     string exact and no member named twice, at any depth; exp/iat
//     checked with LEDGER_CLOCK_LEEWAY, typ must name the route, the
//     service object must be present (400); a providerID naming another
//     provider is 403; missing or malformed required claims are 400 with
//     JSON Pointers into the claims (/service/amount/value).
//  4. One statement runs a server-side function (schema/functions/
//     cb_authorize.sql, cb_capture.sql, cb_release.sql, cb_credit.sql,
//     through the Decisions the handler was given) that, in one transaction,
//     claims the idempotency key (or finds it), decides by the decision
//     table, applies the ledger effect (package holds or ledger) and stores
//     the answer with its provenance. A later request with the same key and
//     the same business claims (a SHA-256 fingerprint) gets the stored
//     answer; with other claims, 422. Concurrent requests with one key wait
//     for the first and get its answer: one effect, identical answers.
//  5. The answer's claims (iat, exp = iat + 300, service) are sealed with
//     the key that opened the request, in the request's inner form.
//
// # Statuses
//
// 200 for every business outcome, including denials and failures. 408 when
// the request deadline (LEDGER_REQUEST_TIMEOUT) passed and the transaction
// rolled back, or when the body did not arrive within LEDGER_BODY_TIMEOUT;
// 429 with Retry-After over LEDGER_MAX_INFLIGHT; 503 when the database is
// unavailable, conflicts persist after bounded retries, or the
// server is draining for shutdown; 500 only for a bug (a recovered panic).
// A retryable status (408, 429, 5xx) is given only when nothing was
// committed, or when what was committed is the stored answer a retry will
// get. Problem bodies never include claims, secrets or which key was tried.
package callbacks
