package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/provider"
)

func TestServe(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaultServeConfig()
	cfg.SignupDelay = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- serveListener(ctx, ln, cfg, &out, nil) }()

	c, err := provider.NewClient("http://"+ln.Addr().String(), provider.WithProviderID("local"), provider.WithAPIKey("sim-key", "sim-secret"))
	if err != nil {
		t.Fatal(err)
	}
	for ext, want := range map[string]string{"alice": provider.StatusActive, "deny-mallory": provider.StatusDenied} {
		p, _, err := c.Participants.Create(ctx, &provider.ParticipantCreateRequest{ExternalID: ext, GivenName: "A", FamilyName: "B",
			Address: provider.Address{AddressLine1: "1", City: "c", StateOrProvince: "s", PostalCode: "p", Country: "US"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != provider.StatusPending {
			t.Fatalf("%s starts %s", ext, p.Status)
		}
		got, err := c.Participants.Await(ctx, ext, 5*time.Millisecond)
		if err != nil || got.Status != want {
			t.Fatalf("%s: %+v %v", ext, got, err)
		}
	}
	if _, _, err := c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "alice"}); err != nil {
		t.Fatalf("the sandbox key cannot mint: %v", err)
	}
	if _, _, err := c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "deny-mallory"}); err == nil {
		t.Fatal("a denied participant got a token")
	}
	pol, _, err := c.Limits.GetPolicy(ctx)
	if err != nil || pol.DailySendCount == nil || *pol.DailySendCount != 25 {
		t.Fatalf("policy %+v %v", pol, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"export SERVICE_BASE_URL='http://" + ln.Addr().String() + "'", "export SERVICE_API_KEY_ID='sim-key'", "export SERVICE_API_KEY_SECRET='sim-secret'", "deny-"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bogus"}, 2, "unknown command"},
		{[]string{"--signup-delay", "soon"}, 2, "invalid argument"},
		{[]string{"--signup-delay", "-1s"}, 2, "negative"},
		{[]string{"serve", "--api-key-id", ""}, 2, "must not be empty"},
		{[]string{"serve", "extra"}, 2, "unexpected argument"},
		{[]string{"--nope"}, 2, "unknown flag: --nope"},
		{[]string{"--listen", "256.0.0.1:99999"}, 1, "servicesim:"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: code %d stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

// TestRunEnvironment: a flag not given takes its environment variable; a
// flag given wins. Not parallel: it sets the environment.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("SERVICESIM_SIGNUP_DELAY", "soon")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--listen", "256.0.0.1:99999"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "SERVICESIM_SIGNUP_DELAY") {
		t.Errorf("a bad SERVICESIM_SIGNUP_DELAY: code %d stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"--listen", "256.0.0.1:99999", "--signup-delay", "1s"}, &out, &errb); code != 1 {
		t.Errorf("the flag does not win over the environment: code %d stderr %q", code, errb.String())
	}
}
