// Command ledgerctl is the operator CLI of the adapter: it drives ledgerd's
// admin API (accounts, adjustments, instruments, holds, signing secrets,
// reconciliation), applies migrations, and calls the service's provider API
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
	"strings"
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
  reconcile [--fix] [--json]           exit 0 clean, 1 warnings, 2 critical, 3 error
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
	args = moveLeadingFlags(args)
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
	case "reconcile":
		return runReconcile(ctx, rest, stdout, stderr)
	case "provider":
		return runProvider(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "ledgerctl: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// moveLeadingFlags moves the flags given before the command word (for
// example `ledgerctl --admin URL accounts get A`) to the end of the
// arguments, where every command parses its flags.
func moveLeadingFlags(args []string) []string {
	var lead []string
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-h" && args[i] != "--help" {
		lead = append(lead, args[i])
		name := strings.TrimLeft(args[i], "-")
		if !strings.Contains(name, "=") && takesValue(name) && i+1 < len(args) {
			lead = append(lead, args[i+1])
			i++
		}
		i++
	}
	if len(lead) == 0 || i >= len(args) {
		return args
	}
	return append(append([]string{}, args[i:]...), lead...)
}

// takesValue reports whether a flag given before the command word takes a
// value: all do but the boolean ones.
func takesValue(name string) bool {
	switch name {
	case "json", "fix", "all", "show-secret", "install":
		return false
	}
	return true
}
