// Command ledgerctl is the operator CLI of the adapter: it drives ledgerd's
// admin API (accounts, adjustments, instruments, holds, signing secrets),
// applies migrations, and calls the service's provider API
// (`ledgerctl provider …`).
//
// Admin commands take --admin URL (env LEDGER_ADMIN_URL, default
// http://127.0.0.1:8081) and send LEDGER_ADMIN_TOKEN as a bearer token when
// set. Output is a readable table, or the API's JSON with --json.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: ledgerctl <command> [flags]

commands:
  migrate                              apply schema migrations to DATABASE_URL
  accounts create|get|freeze|unfreeze|close
  adjust ACCOUNT AMOUNT --key K [--memo M]
  instruments add --token T --kind source|destination --account A
  holds get REF | holds list [--payout P] [--status S] [--limit N] [--all]
  secrets list|add|generate|retire
  provider …                           the service's provider API (ledgerctl provider -h)

Run 'ledgerctl <command> -h' for a command's flags.
`

// run executes one command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "accounts":
		return runAccounts(ctx, rest, stdout, stderr)
	case "adjust":
		return runAdjust(ctx, rest, stdout, stderr)
	case "instruments":
		return runInstruments(ctx, rest, stdout, stderr)
	case "holds":
		return runHolds(ctx, rest, stdout, stderr)
	case "secrets":
		return runSecrets(ctx, rest, stdout, stderr)
	case "provider":
		return runProvider(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "ledgerctl: unknown command %q\n\n%s", cmd, usage)
	return 2
}
