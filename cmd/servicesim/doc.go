// Command servicesim is a local sandbox of the payments service: a fake of
// its provider API, so the adapter and `ledgerctl provider` can be exercised
// without credentials for the real sandbox, and a driver that plays the
// service's callbacks against a ledgerd.
//
// Usage:
//
//	servicesim [serve] [flags]
//	servicesim env [flags]
//	servicesim drive [flags]
//	servicesim completion bash|zsh|fish|powershell
//
// `servicesim --help` and `servicesim drive --help` list every flag with its
// environment variable and the exit status.
//
// serve (the default command) serves the in-memory fake of package
// provider/providertest on --listen (SERVICESIM_LISTEN, default
// 127.0.0.1:8090) for one provider account, --provider-id
// (SERVICESIM_PROVIDER_ID, default local), accepting HTTP Basic credentials
// --api-key-id / --api-key-secret (SERVICESIM_API_KEY_ID /
// SERVICESIM_API_KEY_SECRET, defaults sim-key / sim-secret, printed at start
// as shell "export SERVICE_…='…'" lines for ledgerctl; the rest of the
// banner is comments). The key carries the provider's transfers.write
// scope, so it can mint sender tokens. `eval "$(servicesim env)"` sets
// the same SERVICE_* variables for the same flags, without serving.
//
// # Sandbox conventions
//
// Like the magic values of other payment sandboxes, some inputs decide
// outcomes:
//
//   - A new participant is pending; the signup check clears it (active)
//     after --signup-delay (SERVICESIM_SIGNUP_DELAY, default 1s).
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
// the service would, then checks the balances they imply; its help says how,
// and package internal/drive does the work.
// It seeds through the admin API (--admin, LEDGER_ADMIN_URL; --admin-token,
// LEDGER_ADMIN_TOKEN), sends callbacks to --callbacks (LEDGER_CALLBACKS_URL)
// and seals them with the signing secret in --secret-file (default the dev
// secret an embedded ledgerd writes: signing-secret in LEDGER_DATA_DIR, else
// in var/ledgerd under the source tree's root). With `go run ./cmd/ledgerd`
// running in another terminal, from anywhere in the source tree:
//
//	go run ./cmd/servicesim drive
package main
