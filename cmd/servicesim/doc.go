// Command servicesim is a local sandbox of the payments service's provider
// API, so the adapter and `ledgerctl provider` can be exercised without
// credentials for the real sandbox.
//
// Usage:
//
//	servicesim [serve] [flags]
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
package main
