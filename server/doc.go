// Package server wires ledgerd: it loads the configuration (env vars and
// flags, contract §1), starts the embedded Postgres when DATABASE_URL
// is unset, applies migrations, opens the pool, and serves the callback
// listener and the admin listener (admin API, /metrics, /healthz, /readyz),
// each capped at LEDGER_MAX_CONNECTIONS open connections (listener.go),
// until its context ends, then shuts down gracefully: listeners stop
// accepting, in-flight requests drain, the pool closes and the embedded
// Postgres stops.
//
// cmd/ledgerd only turns signals into a context and errors into an exit
// code; tests drive the whole daemon through Run.
package server
