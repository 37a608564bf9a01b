// Command ledgerctl is the operator CLI of the adapter: it drives ledgerd's
// admin API (accounts, adjustments, instruments, holds, signing secrets,
// reconciliation) through package adminapi, applies migrations, and calls
// the service's provider API (`ledgerctl provider …`) through package
// provider. `ledgerctl --help` and `ledgerctl <command> --help` describe
// every command, its flags with their environment variables, and its exit
// status.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/provider-ledger/adapter/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line (without the program name) and returns
// the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(ctx, newRoot(), args, stdout, stderr)
}
