package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
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
	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// startLedgerd runs a real ledgerd in-process until the test ends and
// returns its callback and admin addresses.
func startLedgerd(t *testing.T, secretB64 string) (cb, admin string) {
	t.Helper()
	kek := make([]byte, 32) // LEDGER_KEK: required with DATABASE_URL
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": storetest.URL(t), "LEDGER_PROVIDER_ID": "local", "LEDGER_KEK": base64.StdEncoding.EncodeToString(kek),
		"LEDGER_SIGNING_SECRETS": secretB64, "LEDGER_LISTEN": "127.0.0.1:0",
		"LEDGER_ADMIN_LISTEN": "127.0.0.1:0", "LEDGER_DATA_DIR": t.TempDir()}
	cfg, err := server.LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, nil, server.Hooks{Started: func(cb, adm string) { started <- [2]string{cb, adm} }})
	}()
	select {
	case a := <-started:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ledgerd: %v", err)
			}
		})
		return a[0], a[1]
	case err := <-done:
		cancel()
		t.Fatalf("ledgerd did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("ledgerd did not start within 60s")
	}
	return "", ""
}

func TestDrive(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b64 := base64.StdEncoding.EncodeToString(key)
	secretFile := filepath.Join(t.TempDir(), "signing-secret")
	if err := os.WriteFile(secretFile, []byte(b64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cb, admin := startLedgerd(t, b64)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := func(extra ...string) []string {
		return append([]string{"drive", "--callbacks", "http://" + cb + "/ledger", "--admin", "http://" + admin,
			"--secret-file", secretFile}, extra...)
	}

	t.Run("lifecycles", func(t *testing.T) {
		var out, errb bytes.Buffer
		if code := run(ctx, args("--payouts", "8", "--requests", "3", "--seed", "7"), &out, &errb); code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
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
		if code := run(ctx, args("--payouts", "2", "--requests", "1", "--seed", "7"), &out, &errb); code != 0 {
			t.Fatalf("second run: exit %d\n%s\n%s", code, out.String(), errb.String())
		}
		if testing.Verbose() {
			t.Log(out.String())
		}
	})

	t.Run("wrong provider is terminal", func(t *testing.T) {
		var out, errb bytes.Buffer
		if code := run(ctx, args("--provider-id", "someone-else", "--payouts", "2"), &out, &errb); code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "refused: 403") || !strings.Contains(errb.String(), "set --provider-id") {
			t.Errorf("stderr %q lacks the 403", errb.String())
		}
		if strings.Contains(out.String(), "summary") {
			t.Errorf("a refused run printed a summary:\n%s", out.String())
		}
	})

	t.Run("wrong key is terminal", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		_ = os.WriteFile(other, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600)
		var out, errb bytes.Buffer
		if code := run(ctx, append(args("--payouts", "1"), "--secret-file", other), &out, &errb); code != 1 ||
			!strings.Contains(errb.String(), "refused: 400") || !strings.Contains(errb.String(), "ledgerd does not know the signing secret of "+other+": pass the one it has with --secret-file") {
			t.Fatalf("exit %d, want 1 with a 400\n%s", code, errb.String())
		}
	})
}

func TestDriveUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("not base64"), 0o600)
	good := filepath.Join(dir, "good")
	_ = os.WriteFile(good, []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"drive", "--nope"}, 2, "unknown flag: --nope"},
		{[]string{"drive", "--payouts", "many"}, 2, "invalid argument"},
		{[]string{"drive", "--payouts", "-1"}, 2, "between 0 and 10000"},
		{[]string{"drive", "extra"}, 2, "unexpected argument"},
		{[]string{"drive", "--admin", "127.0.0.1:8081"}, 2, "not an http(s) URL"},
		{[]string{"drive", "--provider-id", ""}, 2, "must not be empty"},
		{[]string{"drive", "--secret-file", filepath.Join(dir, "missing")}, 2, "reading the signing secret"},
		{[]string{"drive", "--secret-file", filepath.Join(dir, "missing")}, 2, "is ledgerd running in embedded mode (it writes its dev secret there)? Otherwise pass a secret ledgerd has with --secret-file"},
		{[]string{"drive", "--secret-file", bad}, 2, "invalid"},
		// Nothing listens on port 1: the admin API cannot seed, and the
		// error says what to check.
		{[]string{"drive", "--secret-file", good, "--admin", "http://127.0.0.1:1"}, 2, "creating account"},
		{[]string{"drive", "--secret-file", good, "--admin", "http://127.0.0.1:1"}, 2, "is ledgerd running? (--admin or LEDGER_ADMIN_URL)"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: code %d stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
		if n := strings.Count(errb.String(), "\n"); n != 1 {
			t.Errorf("%v: %d lines on stderr, want the error once on one line: %q", tc.args, n, errb.String())
		}
	}
	var cfg driveConfig
	if err := newDriveCmd(&cfg).ParseFlags(nil); err != nil || cfg != defaultDriveConfig() || cfg.CallbacksURL != "http://127.0.0.1:8080/ledger" ||
		cfg.AdminURL != "http://127.0.0.1:8081" || cfg.ProviderID != "local" || cfg.SecretFile != "" || cfg.Payouts != 10 || cfg.Requests != 5 {
		t.Fatalf("defaults %+v %v", cfg, err)
	}
}

// TestDriveRetryPolicy: 408/429/5xx and transport errors are retried with the
// same claims; another 4xx stops at once.
func TestDriveRetryPolicy(t *testing.T) {
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

// TestDriveEnvironment: drive finds ledgerd and its dev secret through the
// environment alone (LEDGER_CALLBACKS_URL, LEDGER_ADMIN_URL and the
// secret in LEDGER_DATA_DIR), as the README's walkthrough does. Not
// parallel: it sets the environment.
func TestDriveEnvironment(t *testing.T) {
	if got, want := defaultSecretFile(), filepath.Join(datadir.Default(), "signing-secret"); os.Getenv("LEDGER_DATA_DIR") == "" && got != want {
		t.Fatalf("default secret file %s, want %s", got, want)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b64 := base64.StdEncoding.EncodeToString(key)
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "signing-secret"), []byte(b64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cb, admin := startLedgerd(t, b64)
	t.Setenv("LEDGER_DATA_DIR", dataDir)
	t.Setenv("LEDGER_CALLBACKS_URL", "http://"+cb+"/ledger")
	t.Setenv("LEDGER_ADMIN_URL", "http://"+admin)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"drive", "--payouts", "1", "--requests", "1"}, &out, &errb); code != 0 || !strings.HasSuffix(out.String(), "\nok\n") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
