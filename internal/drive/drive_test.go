package drive

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/server/servertest"
	"github.com/provider-ledger/adapter/store/storetest"
)

// startLedgerd runs a real ledgerd in-process until the test ends and
// returns its callback and admin addresses.
func startLedgerd(t *testing.T, secretB64 string) (cb, admin string) {
	t.Helper()
	return servertest.Start(t, map[string]string{"DATABASE_URL": storetest.URL(t), "LEDGER_PROVIDER_ID": "local",
		"LEDGER_SIGNING_SECRETS": secretB64})
}

// newSecret returns a random signing secret in Base64 and a file holding
// it (with a trailing newline, as ledgerd writes it) in dir.
func newSecret(t *testing.T, dir string) (b64, file string) {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b64 = base64.StdEncoding.EncodeToString(key)
	file = filepath.Join(dir, "signing-secret")
	if err := os.WriteFile(file, []byte(b64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return b64, file
}

func TestRun(t *testing.T) {
	t.Parallel()
	b64, secretFile := newSecret(t, t.TempDir())
	cb, admin := startLedgerd(t, b64)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	config := func(payouts, requests int, seed uint64) Config {
		cfg := DefaultConfig()
		cfg.CallbacksURL, cfg.AdminURL, cfg.SecretFile = "http://"+cb+"/ledger", "http://"+admin, secretFile
		cfg.Payouts, cfg.Requests, cfg.Seed = payouts, requests, seed
		return cfg
	}

	t.Run("lifecycles", func(t *testing.T) {
		var out bytes.Buffer
		if err := Run(ctx, config(8, 3, 7), &out); err != nil {
			t.Fatalf("%v\noutput:\n%s", err, out.String())
		}
		s := out.String()
		if n := strings.Count(s, "\npayout "); n != 8 {
			t.Errorf("%d payout lines, want 8:\n%s", n, s)
		}
		if n := strings.Count(s, "\nrequest "); n != 3 {
			t.Errorf("%d request lines, want 3:\n%s", n, s)
		}
		for _, want := range []string{"summary: 8 payouts", "3 requests", "replayed: same answers", "-sender: balance", "-recipient: balance", "\nok\n"} {
			if !strings.Contains(s, want) {
				t.Errorf("output lacks %q:\n%s", want, s)
			}
		}
		// Seed 7 must exercise both a capture and a release.
		if !strings.Contains(s, "capture approved cap_") || !regexp.MustCompile(`release \((cancelled|expired|review_rejected)\) approved rel_`).MatchString(s) {
			t.Errorf("seed 7 did not both capture and release:\n%s", s)
		}
		if strings.Contains(s, "MISMATCH") {
			t.Errorf("mismatch:\n%s", s)
		}
		// 8 payouts × 2 + 3 replayed payouts × 2 + 3 credits × 2.
		if !strings.Contains(s, "28 callbacks sent, 0 retried, 9 replays answered the same") {
			t.Errorf("summary counts:\n%s", s)
		}
		// A second run seeds fresh accounts (unique IDs) with the same seed.
		out.Reset()
		if err := Run(ctx, config(2, 1, 7), &out); err != nil {
			t.Fatalf("second run: %v\n%s", err, out.String())
		}
		if testing.Verbose() {
			t.Log(out.String())
		}
	})

	t.Run("wrong provider is terminal", func(t *testing.T) {
		cfg := config(2, 0, 0)
		cfg.ProviderID = "someone-else"
		var out bytes.Buffer
		err := Run(ctx, cfg, &out)
		if err == nil || errors.As(err, new(SetupError)) {
			t.Fatalf("err %v, want a refusal after setup\n%s", err, out.String())
		}
		if !strings.Contains(err.Error(), "refused: 403") || !strings.Contains(err.Error(), "set --provider-id") {
			t.Errorf("error %q lacks the 403", err)
		}
		if strings.Contains(out.String(), "summary") {
			t.Errorf("a refused run printed a summary:\n%s", out.String())
		}
	})

	t.Run("wrong key is terminal", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		_ = os.WriteFile(other, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600)
		cfg := config(1, 0, 0)
		cfg.SecretFile = other
		err := Run(ctx, cfg, io.Discard)
		if err == nil || errors.As(err, new(SetupError)) || !strings.Contains(err.Error(), "refused: 400") ||
			!strings.Contains(err.Error(), "ledgerd does not know the signing secret of "+other+": pass the one it has with --secret-file") {
			t.Fatalf("err %v, want a 400 after setup", err)
		}
	})
}

// TestRunSetup: what fails before any lifecycle is a SetupError that says
// what to check.
func TestRunSetup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("not base64"), 0o600)
	_, good := newSecret(t, dir)
	for _, tc := range []struct {
		secretFile, admin string
		msgs              []string
	}{
		{filepath.Join(dir, "missing"), "", []string{"reading the signing secret",
			"is ledgerd running in embedded mode (it writes its dev secret there)? Otherwise pass a secret ledgerd has with --secret-file"}},
		{bad, "", []string{bad + ": ", "invalid"}},
		// Nothing listens on port 1: the admin API cannot seed, and the
		// error says what to check.
		{good, "http://127.0.0.1:1", []string{"creating account", "is ledgerd running? (--admin or LEDGER_ADMIN_URL)"}},
	} {
		cfg := DefaultConfig()
		cfg.SecretFile = tc.secretFile
		if tc.admin != "" {
			cfg.AdminURL = tc.admin
		}
		err := Run(context.Background(), cfg, io.Discard)
		if !errors.As(err, new(SetupError)) {
			t.Errorf("%s %s: err %v, want a SetupError", tc.secretFile, tc.admin, err)
			continue
		}
		for _, msg := range tc.msgs {
			if !strings.Contains(err.Error(), msg) {
				t.Errorf("%s %s: error %q lacks %q", tc.secretFile, tc.admin, err, msg)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("the default configuration: %v", err)
	}
	for _, tc := range []struct {
		change func(*Config)
		msg    string
	}{
		{func(c *Config) { c.Payouts = -1 }, "between 0 and 10000"},
		{func(c *Config) { c.Requests = 10001 }, "between 0 and 10000"},
		{func(c *Config) { c.AdminURL = "127.0.0.1:8081" }, `--admin "127.0.0.1:8081" is not an http(s) URL`},
		{func(c *Config) { c.CallbacksURL = "ftp://x/ledger" }, "--callbacks"},
		{func(c *Config) { c.ProviderID = "" }, "--provider-id must not be empty"},
	} {
		cfg := DefaultConfig()
		tc.change(&cfg)
		err := cfg.Validate()
		if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: err %v, want a usage error with %q", cfg, err, tc.msg)
		}
	}
}

// TestRetryPolicy: 408/429/5xx and transport errors are retried with the
// same claims; another 4xx stops at once.
func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	statuses := []int{503, 429, 408, 422}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(statuses[min(i, len(statuses)-1)])
		_, _ = w.Write([]byte(`{"type":"urn:provider-ledger:problem:x"}`))
	}))
	defer srv.Close()
	d := &driver{cb: &caller.Client{BaseURL: srv.URL + "/ledger", Key: envelope.Key{Secret: make([]byte, 32)}}}
	_, err := d.send(context.Background(), callback{claims.Capture, "k", claims.CaptureService(holds.CaptureRequest{IdempotencyKey: "k"})})
	if err == nil || !strings.Contains(err.Error(), "refused: 422") || d.sent != 4 || d.retry != 3 {
		t.Fatalf("err %v, sent %d, retried %d; want a 422 after 3 retries", err, d.sent, d.retry)
	}
}

// TestRunFindsDevSecret: with no SecretFile, Run finds an embedded
// ledgerd's dev secret in LEDGER_DATA_DIR, as the README's walkthrough
// does. Not parallel: it sets the environment.
func TestRunFindsDevSecret(t *testing.T) {
	if got, want := DefaultSecretFile(), filepath.Join(datadir.Default(), "signing-secret"); os.Getenv("LEDGER_DATA_DIR") == "" && got != want {
		t.Fatalf("default secret file %s, want %s", got, want)
	}
	dataDir := t.TempDir()
	b64, _ := newSecret(t, dataDir)
	cb, admin := startLedgerd(t, b64)
	t.Setenv("LEDGER_DATA_DIR", dataDir)
	if got, want := DefaultSecretFile(), filepath.Join(dataDir, "signing-secret"); got != want {
		t.Fatalf("with LEDGER_DATA_DIR=%s the default secret file is %s, want %s", dataDir, got, want)
	}
	cfg := DefaultConfig()
	cfg.CallbacksURL, cfg.AdminURL, cfg.Payouts, cfg.Requests = "http://"+cb+"/ledger", "http://"+admin, 1, 1
	var out bytes.Buffer
	if err := Run(context.Background(), cfg, &out); err != nil || !strings.HasSuffix(out.String(), "\nok\n") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}
