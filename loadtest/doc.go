// Package loadtest plays the payments service against a ledgerd (design
// section 6): it seeds accounts through the admin API, installs a signing
// secret, and sends a storm of ledger callbacks at a concurrency, with the
// deliveries a real caller produces, then checks from the outside that the
// ledger holds what the storm implies.
//
// # The storm
//
// A storm is a Plan: a header (seed, run prefix, the accounts to seed, the
// fingerprint of the secret it was recorded with, never the secret) and an
// ordered list of requests, each one idempotency key with its plaintext
// service claims and a delivery plan. It runs in three phases, each at the
// concurrency:
//
//  0. authorize: one authorize per payout, nothing else, so the authorize
//     rate is measured on its own;
//  1. second attempts of some authorizes under a new key (design 2.3 row 3:
//     approved with the same holdReference), and the credits;
//  2. capture or release of each payout that is not left held (the
//     holdReference is the one authorize answered), and second attempts of
//     some credits under a new key (design 2.6 row 2: the same
//     creditReference).
//
// Accounts are funded for every payout they send plus a margin, fraud
// scores stay below any step-up threshold and every request is valid, so
// every answer must be 200 approved with its reference: a denial, a
// terminal 4xx or a request given up after retries fails the run.
//
// # Delivery
//
// Each request may be delivered twice in sequence (duplicate), twice at
// once (concurrent), and may lose its first answer (drop: a client-side
// timeout of 0.2 to 10 ms, which fires before or after ledgerd commits, or
// an answer read and ignored), after which the caller retries with the same
// key. Every send follows the service's retry policy: 408, 429, 5xx and
// transport errors are retried with the same key (exponential backoff with
// jitter, Retry-After honoured up to 5 s, at most 30 attempts or 60 s); any
// other 4xx is terminal. 400 undecryptable is retried only while a freshly
// installed secret reaches the keyring (warm-up, up to 10 s).
//
// # Checks
//
//   - replays: all 200 answers to one idempotency key decrypt to identical
//     service claims (outcome, references, reason, key);
//   - requests: every request approved with its reference, second attempts
//     answering the first attempt's reference;
//   - accounts (GET /v1/accounts/{id}): balance = funding − captured +
//     credited (each requestID once), held = holds left held,
//     available = balance − held ≥ 0;
//   - holds (GET /v1/holds?payoutID=): exactly one per payout, captured,
//     released or held as the storm left it, with the references answered;
//   - reconciliation (POST /v1/reconciliation/runs): critical findings fail
//     the run; a 404 is noted and skipped.
//
// Run is the command line (cmd/loadtest only wires signals): storm, record
// (writes a generated storm as JSON lines without sending it) and replay
// (sends a recorded storm, re-sealed with fresh iat/exp, at --rate or flat
// out, with the same checks). Exit status 0 when every check passes, 1 when
// one fails, 2 on a usage or setup error.
package loadtest
