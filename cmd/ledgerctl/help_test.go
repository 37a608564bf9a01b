package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
)

// TestHelp walks every command of ledgerctl through its help: -h and
// --help print to stdout and exit 0 everywhere, every flag a help lists is
// accepted by that command, and the walk reaches every command of the tree.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmds := clitest.WalkHelp(t, func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	})
	byPath := map[string]clitest.Command{}
	for _, c := range cmds {
		byPath[strings.Join(c.Path, " ")] = c
	}

	t.Run("ReachesEveryCommand", func(t *testing.T) {
		t.Parallel()
		root := newRoot()
		root.InitDefaultHelpCmd()
		root.InitDefaultCompletionCmd()
		var walk func(c *cobra.Command, path []string)
		walk = func(c *cobra.Command, path []string) {
			if _, ok := byPath[strings.Join(path, " ")]; !ok {
				t.Errorf("the help walk did not reach %q: no help lists it", path)
			}
			for _, sub := range c.Commands() {
				if !sub.Hidden {
					walk(sub, append(slices.Clip(path), sub.Name()))
				}
			}
		}
		walk(root, nil)
	})

	t.Run("PerCommandFlags", func(t *testing.T) { helpPerCommandFlags(t, byPath) })

	t.Run("EnvironmentBesideFlags", func(t *testing.T) { helpEnvironmentBesideFlags(t, byPath) })

	t.Run("ExitStatusEverywhere", func(t *testing.T) {
		t.Parallel()
		for path, c := range byPath {
			if !strings.Contains(c.Help, "Exit status:\n  0  ") {
				t.Errorf("ledgerctl %s -h documents no exit status", path)
			}
		}
		if !strings.Contains(byPath["reconcile"].Help, "0  clean: no unfixed, unacknowledged finding\n  1  an unfixed, unacknowledged warning, no such critical finding\n  2  an unfixed, unacknowledged critical finding\n  3  error") {
			t.Errorf("reconcile's exit status:\n%s", byPath["reconcile"].Help)
		}
	})

	t.Run("JSONWhereATableIsPrinted", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"accounts create", "accounts get", "accounts freeze", "accounts unfreeze", "accounts close",
			"adjust", "instruments add", "holds get", "holds list", "secrets list", "reconcile",
			"accounts list", "journal transactions", "journal entries"} {
			if !slices.ContainsFunc(byPath[path].Flags, func(f clitest.Flag) bool { return f.Name == "json" && f.Type == "" }) {
				t.Errorf("ledgerctl %s prints a table but has no --json", path)
			}
		}
	})
}

// helpEnvironmentBesideFlags: a flag a variable can set names it in the
// command's help.
func helpEnvironmentBesideFlags(t *testing.T, byPath map[string]clitest.Command) {
	t.Parallel()
	for path, envs := range map[string][]string{
		"accounts get":                 {"(env LEDGER_ADMIN_URL)", "(env LEDGER_ADMIN_TOKEN)"},
		"migrate":                      {"(env LEDGER_MIGRATION_DATABASE_URL, else DATABASE_URL)"},
		"migrate status":               {"(env LEDGER_MIGRATION_DATABASE_URL, else DATABASE_URL)"},
		"db-url":                       {"(env LEDGER_DATA_DIR)"},
		"provider participants get":    {"(env SERVICE_BASE_URL)", "(env SERVICE_API_KEY_ID)", "(env SERVICE_API_KEY_SECRET)", "(env SERVICE_VERSION)", "(env SERVICE_PROVIDER_ID, else LEDGER_PROVIDER_ID)"},
		"provider secrets create":      {"(env LEDGER_ADMIN_URL)", "(env LEDGER_ADMIN_TOKEN)", "(env SERVICE_BASE_URL)"},
		"provider limit-groups update": {"(env SERVICE_BASE_URL)"},
	} {
		for _, env := range envs {
			if !strings.Contains(byPath[path].Help, env) {
				t.Errorf("ledgerctl %s -h does not show %s", path, env)
			}
		}
	}
}

// helpPerCommandFlags: each command's help lists exactly its flags.
func helpPerCommandFlags(t *testing.T, byPath map[string]clitest.Command) {
	t.Parallel()
	for path, want := range map[string][]string{
		"holds get":      {"admin", "admin-token", "help", "json", "output"},
		"holds list":     {"account", "admin", "admin-token", "all", "cursor", "help", "json", "limit", "output", "payout", "status"},
		"statement":      {"account-id", "admin", "admin-token", "format", "from", "help", "output", "timeout", "to"},
		"secrets retire": {"admin", "admin-token", "help"},
		"secrets add":    {"admin", "admin-token", "from-file", "help", "json", "output"},
		"migrate":        {"database-url", "help"},
		"reconcile":      {"admin", "admin-token", "all", "fix", "full", "help", "json", "output", "timeout"},
		"reconcile ack":  {"admin", "admin-token", "help", "json", "note", "output"},
		"":               {"help", "version"},
	} {
		var got []string
		for _, f := range byPath[path].Flags {
			got = append(got, f.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("ledgerctl %s lists flags %q, want %q", path, got, want)
		}
	}
}
