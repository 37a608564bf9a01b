// Command servicesim is a local sandbox of the payments service: a fake of
// its provider API, so the adapter and `ledgerctl provider` can be exercised
// without credentials for the real sandbox, and a driver that plays the
// service's callbacks against a ledgerd.
//
// Usage:
//
//	servicesim [serve] [flags]
//	servicesim drive [flags]
//
// serve (the default subcommand) serves the in-memory fake of package
// provider/providertest on --listen (default 127.0.0.1:8090) for one provider
// account, --provider-id (default local), accepting HTTP Basic credentials
// --api-key-id / --api-key-secret (defaults sim-key / sim-secret, printed at
// start). The key carries the provider's transfers.write scope, so it can
// mint sender tokens. Every flag can also be set through the environment
// variable named in its help text.
//
// # Sandbox conventions
//
// Like the magic values of other payment sandboxes, some inputs decide
// outcomes:
//
//   - A new participant is pending; the signup check clears it (active)
//     after --signup-delay (default 1s).
//   - An externalID starting with "deny-" is denied by the signup check
//     instead (after the same delay), so token minting for it answers 403.
//   - The provider starts with a default limit policy (per transaction
//     2,500.00 USD, daily 5,000.00, weekly 10,000.00, monthly 20,000.00, 25
//     sends a day), so GET /providers/{id}/limits answers 200.
//   - X-Service-Version defaults to v2026.10.00 when a request omits it.
//
// Everything else follows the spec as package providertest documents,
// including the fake's choices where the spec says "not shown".
//
// The process keeps all state in memory and loses it on exit.
//
// # drive
//
// drive runs payout and request lifecycles against a running ledgerd the way
// the service would, then checks the balances they imply. Flags:
//
//	--callbacks URL     callback base URL (default http://127.0.0.1:8080/ledger)
//	--admin URL         admin API base URL (default http://127.0.0.1:8081); the
//	                    bearer token is $LEDGER_ADMIN_TOKEN when set
//	--provider-id ID    providerID claim (default local: ledgerd's LEDGER_PROVIDER_ID)
//	--secret-file FILE  Base64 signing secret (default ./var/ledgerd/signing-secret,
//	                    the dev secret the embedded ledgerd writes)
//	--payouts N         payout lifecycles (default 10)
//	--requests N        credit-account lifecycles (default 5)
//	--seed S            seed of amounts and lifecycle choices (default 0: the clock)
//
// Through the admin API it seeds a sender account (funded by an adjustment)
// with a source instrument and a recipient account with a destination
// instrument, all with IDs unique to the run. Each payout is an authorize of
// a random amount (1.00 to 50.00 USD) followed by a capture or a release with
// reason cancelled, expired or review_rejected; every third payout delivers
// both callbacks again under their keys, which must answer the same. Each
// request is a credit-account (1.00 to 20.00 USD) delivered twice under one
// key. Like the service, it retries 408, 429, 5xx and transport errors with
// the same key (5 attempts, backoff from 50ms, Retry-After honoured up to 2s)
// and stops at any other non-200. It prints one line per lifecycle and a
// summary, then reads both accounts back: the sender must hold funded minus
// captured with nothing held, the recipient the sum credited.
//
// Exit status: 0 every lifecycle approved and the balances match; 1 a check
// failed or a callback was refused (or retried in vain); 2 usage or setup
// errors (flags, the secret file, seeding through the admin API).
//
// With `go run ./cmd/ledgerd` running in another terminal, from the same
// directory:
//
//	go run ./cmd/servicesim drive
package main
