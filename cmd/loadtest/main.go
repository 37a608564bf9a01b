// Command loadtest plays the payments service against a ledgerd: callback
// storms with duplicate, concurrent and lost deliveries under the service's
// retry policy, record and replay, an invariant check through the admin API
// and a latency report (design section 6). The work is in package loadtest.
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
