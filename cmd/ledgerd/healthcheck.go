package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
)

// defaultAdminListen is ledgerd's default LEDGER_ADMIN_LISTEN (a test holds
// it to server.LoadConfig's).
const defaultAdminListen = "127.0.0.1:8081"

// healthcheckTimeout bounds `ledgerd healthcheck` by default: /readyz
// probes the database for at most 2 s.
const healthcheckTimeout = 3 * time.Second

// healthcheckCmd is `ledgerd healthcheck`: it asks the ledgerd whose admin
// listener is --admin-listen (LEDGER_ADMIN_LISTEN) whether it is ready,
// for a container's HEALTHCHECK (the distroless image has no shell and no
// curl). It prints "ready" and exits 0 when /readyz answers 200, and
// otherwise prints why (the reasons /readyz names, or the error) and exits
// 1, Docker's "unhealthy", whatever went wrong: Docker reserves 2.
func healthcheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the ledgerd at --admin-listen answers /readyz ready, 1 otherwise",
		Long: `Ask the ledgerd whose admin listener is --admin-listen whether it is ready
(GET /readyz): print "ready" and exit 0, or print why not and exit 1. For a
container's health check: the image has no shell and no curl. A wildcard
host (0.0.0.0, ::) is reached on loopback.`,
		Args:        cli.NoArgs,
		Annotations: map[string]string{cli.UsageExitCode: "1"},
	}
	cli.ExitStatus(cmd, `0  ready
1  not ready, not reachable, or a usage error (Docker reserves 2)`)
	fs := cmd.Flags()
	listen := fs.String("admin-listen", defaultAdminListen, "ledgerd's admin listener; a wildcard host is reached on loopback")
	cli.Env(fs, "admin-listen", "LEDGER_ADMIN_LISTEN")
	timeout := fs.Duration("timeout", healthcheckTimeout, "give up after this long")
	cmd.RunE = cli.WithErrorCode(1, func(cmd *cobra.Command, _ []string) error {
		url, err := readyzURL(*listen)
		if err != nil {
			return err
		}
		if ready, why := probeReady(url, *timeout); !ready {
			return errors.New("not ready: " + why)
		}
		fmt.Fprintln(cmd.OutOrStdout(), "ready")
		return nil
	})
	return cmd
}

// readyzURL is the /readyz URL of the admin listener addr: a wildcard or
// empty host (0.0.0.0, ::) is reached on the matching loopback address.
func readyzURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("LEDGER_ADMIN_LISTEN %q is not host:port", addr)
	}
	switch ip := net.ParseIP(host); {
	case host == "" || ip != nil && ip.Equal(net.IPv4zero):
		host = "127.0.0.1"
	case ip != nil && ip.Equal(net.IPv6unspecified):
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// probeReady GETs url and says whether it answered 200, and if not why.
func probeReady(url string, timeout time.Duration) (bool, string) {
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	var body struct {
		Reasons []struct{ Reason, Detail string }
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &body) != nil || len(body.Reasons) == 0 {
		return false, fmt.Sprintf("%s answered %d", url, resp.StatusCode)
	}
	var reasons []string
	for _, r := range body.Reasons {
		reasons = append(reasons, r.Reason+" ("+r.Detail+")")
	}
	return false, strings.Join(reasons, "; ")
}
