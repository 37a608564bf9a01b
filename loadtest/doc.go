// Package loadtest plays the payments service against a ledgerd (contract
// §6): it seeds accounts through the admin API, makes sure ledgerd's
// keyring holds its signing secret, and sends a storm of ledger callbacks,
// with the deliveries a real caller produces, then checks from the outside
// that the ledger holds what the storm implies, and reports what it
// measured. Run is the command line (cmd/loadtest only wires signals).
//
// # The storm
//
// A storm is a Plan: a header (seed, run prefix, the accounts to seed, the
// fingerprint of the secret it was recorded with, never the secret) and an
// ordered list of requests, each one idempotency key with its plaintext
// service claims and a delivery plan. It runs in three phases:
//
//  0. authorize: one authorize per payout, nothing else, so the authorize
//     rate is measured on its own;
//  1. second attempts of some authorizes under a new key (contract §2.3 row 3:
//     approved with the same holdReference), and the credits;
//  2. capture or release of each payout that is not left held (the
//     holdReference is the one authorize answered), and second attempts of
//     some credits under a new key (contract §2.6 row 2: the same
//     creditReference).
//
// With a duration the storm runs in rounds (generateRound): every round is
// a plan of the same shape over the same accounts, which each round funds
// again for its own payouts under fresh keys. The duration bounds the
// window requests start in: the requests not started by its end are
// withdrawn from the model, and those in flight drain (window.go).
//
// Accounts are funded for every payout they send plus a margin, fraud
// scores stay below any step-up threshold and every request is valid, so
// every answer must be 200 approved with its reference: a denial, a
// terminal 4xx or a request unresolved (below) fails the run.
//
// # Delivery and measurement
//
// Each request may be delivered twice in sequence (duplicate), twice at
// once (concurrent), and may lose its first answer (drop: a client-side
// timeout of 0.2 to 10 ms, which fires before or after ledgerd commits, or
// an answer read and ignored), after which the caller retries with the same
// key. Every send follows the service's retry policy: 408, 429, 5xx and
// transport errors are retried with the same key (exponential backoff with
// jitter, Retry-After honoured up to 5 s, at most 30 attempts or
// --give-up-after); any other 4xx is terminal. A request given up is resent
// under its own key at the end of its phase until answered (at most
// --resolve-timeout), as the service, which retries for hours, would: the
// model then holds exactly what the ledger must after any outage. One still
// unanswered is unresolved: it fails the run, and the accounts and payouts
// it touches are left out of the money checks. The report counts given up,
// resolved, unresolved and lost (money checks' failures) apart. Two terminal answers abort the run at once, since
// every later request would get them too: 403 wrong-provider and 400
// undecryptable.
//
// Requests start in a closed loop (a number of workers, each sending its
// next request when the last is answered) or in an open loop (a rate,
// whatever is in flight): there the first attempt of each request is
// measured from its intended send time, so time spent queued behind a slow
// ledgerd counts. Latencies go into HdrHistograms per endpoint and into a
// timeline of buckets (250 ms, merged as a run grows) that also counts
// answers, statuses, retries and drops; the charts of the HTML report are
// drawn from it.
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
//   - holds (GET /v1/holds, newest first back to the run's start, then one
//     payout at a time for any not listed): exactly one per payout,
//     captured, released or held as the storm left it, with the references
//     answered;
//   - reconciliation (POST /v1/reconciliation/runs, waited for with its own
//     timeout; "not checked" past it): the run's findings (subject carrying
//     the prefix, or a reference the run was given) fail it, except the
//     duplicate_credit_attempt of its own second credits, which are
//     expected; findings not tied to the run are counted apart;
//   - soak (a duration of a minute or more): ledgerd's RSS, from its
//     /metrics, under a limit and without an upward trend; its goroutines
//     back to where they were once the storm's connections are closed;
//   - chaos (spawn): every planned outage happened and was recovered from.
//
// # Commands
//
// storm and replay run against a running ledgerd; record writes a storm as
// JSON lines; bench measures authorize+capture cycles against the pgbench
// ceiling (docs/benchmarks.md); spawn builds and starts a ledgerd on a
// scratch database (its embedded cluster in a temporary directory, or a
// scratch database on DATABASE_URL's server), storms it, optionally brings
// chaos (SIGKILLs of ledgerd, an immediate stop of its Postgres) and the
// ceiling, and tears it all down; clean releases a prefix's held holds and
// closes its accounts on a running ledgerd, since the admin API cannot
// delete. Exit status 0 when every check passes, 1 when one fails, 2 on a
// usage or setup error.
package loadtest
