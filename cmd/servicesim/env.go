package main

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
)

// writeExports writes the SERVICE_* settings that point ledgerctl provider
// (and ledgerd) at a sandbox as POSIX shell export lines, each value
// single-quoted, so that a shell can eval them whatever they hold.
func writeExports(w io.Writer, baseURL string, cfg serveConfig) {
	for _, kv := range [][2]string{
		{"SERVICE_BASE_URL", baseURL},
		{"SERVICE_PROVIDER_ID", cfg.ProviderID},
		{"SERVICE_API_KEY_ID", cfg.APIKeyID},
		{"SERVICE_API_KEY_SECRET", cfg.APIKeySecret},
	} {
		fmt.Fprintf(w, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
}

// baseURL is the URL a client on this machine reaches the sandbox
// listening on addr at: a wildcard or empty host (0.0.0.0, ::) is reached
// on loopback.
func baseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// shellQuote single-quotes s for a POSIX shell: inside single quotes
// nothing is special but the single quote itself, written '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const envLong = `Print the SERVICE_* export lines of the sandbox that "servicesim serve" runs
with the same flags and environment, and exit, so that a shell can take
them while the sandbox runs elsewhere:

  servicesim &
  eval "$(servicesim env)"
  ledgerctl provider limits get

The banner "servicesim serve" prints at start is valid shell too (its other
lines are comments): servicesim > sim.env & … . ./sim.env. With --listen on
port 0 only the banner knows the port.`

// newEnvCmd returns the env command.
func newEnvCmd() *cobra.Command {
	cfg := defaultServeConfig()
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the SERVICE_* export lines for the sandbox's flags (eval \"$(servicesim env)\")",
		Long:  envLong,
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkServeConfig(cfg); err != nil {
				return err
			}
			writeExports(cmd.OutOrStdout(), baseURL(cfg.Listen), cfg)
			return nil
		},
	}
	cli.ExitStatus(cmd, `0  printed
2  usage error: bad flag or arguments`)
	serveFlags(cmd, &cfg)
	return cmd
}
