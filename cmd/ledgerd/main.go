// Command ledgerd serves the ledger callbacks of the payments service and
// the adapter's admin API. Configuration is env vars and flags (see
// `ledgerd -h` and docs/configuration.md); with nothing set it runs an embedded
// Postgres under var/ledgerd (at the root of the source tree when run from
// inside one). `ledgerd --version` prints the build; `ledgerd healthcheck`
// exits 0 when a running ledgerd is ready (a container's health check).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"golang.org/x/term"

	"github.com/provider-ledger/adapter/internal/buildinfo"
	"github.com/provider-ledger/adapter/server"
)

// gcPercent is the Go garbage collector's target when GOGC is unset: a
// callback allocates little that lives, and the live heap is small (about
// 10 MB under a storm), so collecting a quarter as often costs tens of MB
// and gives the CPU to the callbacks.
const gcPercent = 400

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	cfg, err := server.LoadConfig(os.Args[1:], os.Getenv, os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Println("\nledgerd healthcheck [--admin-listen ADDR] [--timeout D]: exit 0 when the ledgerd at LEDGER_ADMIN_LISTEN is ready, 1 otherwise.")
		os.Exit(0)
	}
	if errors.Is(err, server.ErrVersion) {
		fmt.Println("ledgerd", buildinfo.Read())
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledgerd:", err)
		os.Exit(2)
	}
	log := server.NewLogger(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())), cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, cfg, log, server.Hooks{}); err != nil {
		log.Error("ledgerd stopped", "err", err)
		os.Exit(1)
	}
}
