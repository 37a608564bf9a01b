package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// defaultAdminListen is ledgerd's default LEDGER_ADMIN_LISTEN (a test holds
// it to server.LoadConfig's).
const defaultAdminListen = "127.0.0.1:8081"

// healthcheckTimeout bounds `ledgerd healthcheck` by default: /readyz
// probes the database for at most 2 s.
const healthcheckTimeout = 3 * time.Second

// healthcheck is `ledgerd healthcheck`: it asks the ledgerd whose admin
// listener is LEDGER_ADMIN_LISTEN (or --admin-listen) whether it is ready,
// for a container's HEALTHCHECK (the distroless image has no shell and no
// curl). It prints "ready" and returns 0 when /readyz answers 200, and
// otherwise prints why (the reasons /readyz names, or the error) and
// returns 1, Docker's "unhealthy", whatever went wrong.
func healthcheck(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledgerd healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("admin-listen", "", fmt.Sprintf("ledgerd's admin listener (env LEDGER_ADMIN_LISTEN, default %q); a wildcard host is reached on loopback", defaultAdminListen))
	timeout := fs.Duration("timeout", healthcheckTimeout, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: ledgerd healthcheck [--admin-listen ADDR] [--timeout D]\n\nExit 0 when ledgerd's /readyz answers ready, 1 otherwise.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	addr := *listen
	if addr == "" {
		addr = cmp.Or(getenv("LEDGER_ADMIN_LISTEN"), defaultAdminListen)
	}
	url, err := readyzURL(addr)
	if err != nil {
		fmt.Fprintln(stderr, "ledgerd healthcheck:", err)
		return 1
	}
	ready, why := probeReady(url, *timeout)
	if !ready {
		fmt.Fprintln(stderr, "ledgerd healthcheck: not ready:", why)
		return 1
	}
	fmt.Fprintln(stdout, "ready")
	return 0
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
