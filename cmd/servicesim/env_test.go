package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
)

// evalInShell runs script (what servicesim printed) through a POSIX shell's
// eval and returns the SERVICE_* variables it then has, one NAME=value per
// line, printed by the shell itself.
func evalInShell(t *testing.T, script string) string {
	t.Helper()
	sh := tooltest.Require(t, "sh")
	const show = `eval "$1" || exit 9
for n in SERVICE_BASE_URL SERVICE_PROVIDER_ID SERVICE_API_KEY_ID SERVICE_API_KEY_SECRET; do
	sh -c 'printf "%s=%s\n" "$1" "$(printenv "$1")"' - "$n"
done`
	out, err := exec.Command(sh, "-c", show, "sh", script).Output()
	if err != nil {
		t.Fatalf("eval failed: %v\n%s", err, script)
	}
	return string(out)
}

// TestEnvEvals: eval "$(servicesim env …)" exports the sandbox's settings
// to the processes the shell starts, exactly, even values holding quotes,
// spaces, $ and backquotes.
func TestEnvEvals(t *testing.T) {
	t.Parallel()
	secret := "it's a $secret `whoami` \"quoted\" \\ end"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"env", "--listen", "127.0.0.1:9099", "--api-key-secret", secret, "--provider-id", "bank one"}, &out, &errb)
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("servicesim env: exit %d, stderr %q", code, errb.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, "export SERVICE_") {
			t.Errorf("line %q is not an export line", l)
		}
	}
	want := "SERVICE_BASE_URL=http://127.0.0.1:9099\nSERVICE_PROVIDER_ID=bank one\nSERVICE_API_KEY_ID=sim-key\nSERVICE_API_KEY_SECRET=" + secret + "\n"
	if got := evalInShell(t, out.String()); got != want {
		t.Errorf("after eval:\n%s\nwant:\n%s", got, want)
	}
	// A wildcard listener is reached on loopback.
	for listen, want := range map[string]string{":8090": "'http://127.0.0.1:8090'", "0.0.0.0:8090": "'http://127.0.0.1:8090'", "[::]:8090": "'http://127.0.0.1:8090'"} {
		out.Reset()
		if code := run(context.Background(), []string{"env", "--listen", listen}, &out, &errb); code != 0 || !strings.Contains(out.String(), "export SERVICE_BASE_URL="+want+"\n") {
			t.Errorf("servicesim env --listen %s: exit %d, %q; want SERVICE_BASE_URL=%s", listen, code, out.String(), want)
		}
	}
	if code := run(context.Background(), []string{"env", "--api-key-secret", ""}, &out, &errb); code != 2 {
		t.Errorf("servicesim env with an empty secret: exit %d, want 2", code)
	}
}

// TestBannerIsShell: the banner serve prints is valid shell whose exports
// point at the address it serves on.
func TestBannerIsShell(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- serveListener(ctx, ln, defaultServeConfig(), &out, nil) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "SERVICE_BASE_URL=http://" + ln.Addr().String() + "\nSERVICE_PROVIDER_ID=local\nSERVICE_API_KEY_ID=sim-key\nSERVICE_API_KEY_SECRET=sim-secret\n"
	if got := evalInShell(t, out.String()); got != want {
		t.Errorf("after eval of the banner:\n%s\nwant:\n%s", got, want)
	}
}
