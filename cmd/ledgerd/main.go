// Command ledgerd serves the ledger callbacks of the payments service and
// the adapter's admin API. Configuration is env vars and flags (see
// `ledgerd -h` and docs/configuration.md); with nothing set it runs an embedded
// Postgres under var/ledgerd (at the root of the source tree when run from
// inside one). Its command line is the other tools' (spf13/cobra through
// internal/cli): `ledgerd` serves, `ledgerd migrate [status|up]` applies
// the schema as `ledgerctl migrate` does, `ledgerd healthcheck` exits 0
// when a running ledgerd is ready (a container's health check), and
// `ledgerd --version` prints the build.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
