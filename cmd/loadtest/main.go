// Command loadtest plays the payments service against a ledgerd: callback
// storms with duplicate, concurrent and lost deliveries under the service's
// retry policy, record and replay, sealed requests for vegeta or k6
// (`loadtest seal`), an invariant check through the admin API
// and reconciliation, JSON and HTML reports, soak and chaos runs, the
// throughput bench, and `loadtest spawn`, which builds, starts, storms,
// checks and tears down a ledgerd in one command (contract §6). The
// work is in package loadtest; `loadtest --help` describes every command.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/provider-ledger/adapter/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := loadtest.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
