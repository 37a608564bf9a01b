package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/drive"
)

// TestDriveUsage: bad flags, a bad secret file and an admin API that cannot
// seed exit 2 with the error once on one line. Package drive tests the
// runs themselves against a real ledgerd.
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
	var cfg drive.Config
	if err := newDriveCmd(&cfg).ParseFlags(nil); err != nil || cfg != drive.DefaultConfig() || cfg.CallbacksURL != "http://127.0.0.1:8080/ledger" ||
		cfg.AdminURL != "http://127.0.0.1:8081" || cfg.ProviderID != "local" || cfg.SecretFile != "" || cfg.Payouts != 10 || cfg.Requests != 5 {
		t.Fatalf("defaults %+v %v", cfg, err)
	}
}

// TestDriveExitStatus: a run's error exits 2 before any lifecycle ran, 1
// after.
func TestDriveExitStatus(t *testing.T) {
	t.Parallel()
	if err := exitError(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
	for _, tc := range []struct {
		err  error
		code int
	}{
		{drive.SetupError{Err: errors.New("creating account")}, 2},
		{errors.New("payout sim-1-p001: refused"), 1},
	} {
		var ee *cli.ExitError
		if err := exitError(tc.err); !errors.As(err, &ee) || ee.Code != tc.code || !errors.Is(err, tc.err) {
			t.Errorf("%v: %v, want exit %d wrapping it", tc.err, err, tc.code)
		}
	}
}

// TestDriveEnvironment: drive finds ledgerd and its dev secret through the
// environment alone (LEDGER_CALLBACKS_URL, LEDGER_ADMIN_URL and the secret
// in LEDGER_DATA_DIR), as the README's walkthrough does: here the admin
// URL is one nothing listens on, so the run reads the secret, announces
// the callback URL and stops at seeding. Not parallel: it sets the
// environment.
func TestDriveEnvironment(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "signing-secret"), []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEDGER_DATA_DIR", dataDir)
	t.Setenv("LEDGER_CALLBACKS_URL", "http://127.0.0.1:1/from-env")
	t.Setenv("LEDGER_ADMIN_URL", "http://127.0.0.1:1")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"drive", "--payouts", "1", "--requests", "1"}, &out, &errb)
	if code != 2 || !strings.Contains(out.String(), "against http://127.0.0.1:1/from-env\n") || !strings.Contains(errb.String(), "creating account") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
