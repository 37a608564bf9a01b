package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
	"github.com/provider-ledger/adapter/server"
)

func runLedgerd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestHelp: ledgerd's command line is the other tools' (internal/cli):
// -h on every command prints its help to stdout and exits 0, every flag a
// help lists is accepted, --version prints the build, and the help and
// exit status of serve, migrate and healthcheck are there.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmds := clitest.WalkHelp(t, func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	})
	byPath := map[string]clitest.Command{}
	for _, c := range cmds {
		byPath[strings.Join(c.Path, " ")] = c
	}
	for path, wants := range map[string][]string{
		"":                {"--listen string", "(env LEDGER_LISTEN)", `(default ":8080")`, "--metrics-public ", "--kek-file string", "Exit status:\n  0  stopped by SIGINT"},
		"migrate":         {"--migration-database-url string", "(env LEDGER_MIGRATION_DATABASE_URL)", "(env DATABASE_URL)"},
		"migrate status":  {"Exit status:\n  0  up to date", "\n  1  pending", "\n  2  error"},
		"migrate up":      {"--dry-run", "--lock-timeout duration"},
		"healthcheck":     {"--admin-listen string", "(env LEDGER_ADMIN_LISTEN)", "Exit status:\n  0  ready\n  1  not ready"},
		"completion":      {"bash"},
		"completion bash": {"Usage:"},
		"help":            {"Usage:"},
		"completion zsh":  {"Usage:"},
		"completion fish": {"Usage:"},
	} {
		c, ok := byPath[path]
		if !ok {
			t.Errorf("the help walk did not reach ledgerd %s", path)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(c.Help, w) {
				t.Errorf("ledgerd %s -h lacks %q:\n%s", path, w, c.Help)
			}
		}
	}
	clitest.CheckVersion(t, "ledgerd", func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestFlagsAreTheSettings: the flags of ledgerd (serve) are exactly
// server.Settings(), each tied to its variable, and the flags of its
// subcommands that read variables read ledgerd's own settings: one
// configuration, held to docs/configuration.md by TestConfigurationDocumented.
func TestFlagsAreTheSettings(t *testing.T) {
	t.Parallel()
	want := map[string]string{}
	for _, s := range server.Settings() {
		want[s.Flag] = s.Env
	}
	for _, f := range clitest.EnvFlags(newRoot()) {
		if len(f.Env) != 1 || want[f.Flag] != f.Env[0] {
			t.Errorf("ledgerd %v: --%s reads %v, which is not the setting %s (--%s)", f.Commands, f.Flag, f.Env, want[f.Flag], f.Flag)
		}
		if slices.Contains(f.Commands, "") {
			delete(want, f.Flag)
		}
	}
	for flag, env := range want {
		t.Errorf("the setting %s (--%s) is not a flag of ledgerd", env, flag)
	}
}

// TestSettingsFromFlagsAndEnvironment: a flag reaches server.LoadConfig as
// a flag and a variable as a variable, so that an error names where the
// value came from and a secret given both ways is refused; Go flag's
// single-dash spelling of ledgerd's earlier command line still works. Not
// parallel: it sets the environment.
func TestSettingsFromFlagsAndEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--request-timeout", "soon"}, `invalid LEDGER_REQUEST_TIMEOUT (--request-timeout): "soon" is not a positive duration`},
		{nil, []string{"-request-timeout", "soon"}, `invalid LEDGER_REQUEST_TIMEOUT (--request-timeout): "soon"`},
		{nil, []string{"-request-timeout=soon"}, `invalid LEDGER_REQUEST_TIMEOUT (--request-timeout): "soon"`},
		{[]string{"LEDGER_REQUEST_TIMEOUT", "later"}, nil, `invalid LEDGER_REQUEST_TIMEOUT: "later" is not`},
		{[]string{"LEDGER_REQUEST_TIMEOUT", "later"}, []string{"--request-timeout", "soon"}, `(--request-timeout): "soon"`},
		{[]string{"LEDGER_METRICS_PUBLIC", "yes please"}, nil, "invalid LEDGER_METRICS_PUBLIC"},
		{nil, []string{"--metrics-public=maybe"}, "invalid LEDGER_METRICS_PUBLIC (--metrics-public)"},
		{[]string{"LEDGER_KEK_FILE", "/nonexistent"}, []string{"--kek", strings.Repeat("A", 43) + "="}, "LEDGER_KEK (--kek) and LEDGER_KEK_FILE are both set"},
		{[]string{"DATABASE_URL", "postgres://x@127.0.0.1:1/x"}, nil, "LEDGER_PROVIDER_ID (--provider-id) is required"},
		{nil, []string{"extra"}, `unknown command "extra"`},
		{nil, []string{"--listen"}, "flag needs an argument"},
	} {
		for _, k := range []string{"LEDGER_REQUEST_TIMEOUT", "LEDGER_METRICS_PUBLIC", "LEDGER_KEK_FILE", "DATABASE_URL", "LEDGER_PROVIDER_ID"} {
			t.Setenv(k, "")
		}
		for i := 0; i < len(c.env); i += 2 {
			t.Setenv(c.env[i], c.env[i+1])
		}
		code, out, errs := runLedgerd(c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "ledgerd: ") || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("env %v, ledgerd %v: exit %d, stdout %q, stderr %q; want 2 and one line with %q", c.env, c.args, code, out, errs, c.want)
		}
	}
	// The flag's value wins; a valid one gets past the check.
	dir := t.TempDir()
	t.Setenv("LEDGER_TLS_CERT", filepath.Join(dir, "env-cert"))
	code, _, errs := runLedgerd("--tls-cert", filepath.Join(dir, "flag-cert"), "--tls-key", filepath.Join(dir, "key"))
	if code != 2 || !strings.Contains(errs, "flag-cert") || strings.Contains(errs, "env-cert") {
		t.Errorf("--tls-cert over LEDGER_TLS_CERT: exit %d %q", code, errs)
	}
}
