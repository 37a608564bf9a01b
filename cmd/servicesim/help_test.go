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

// TestHelp walks every command of servicesim through its help: -h prints
// to stdout and exits 0 everywhere, every flag a help lists is accepted by
// that command (-h stops before anything is served), and the walk reaches
// every command of the tree.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmds := clitest.WalkHelp(t, func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	})
	byPath := map[string]clitest.Command{}
	for _, c := range cmds {
		byPath[strings.Join(c.Path, " ")] = c
	}
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

	for path, envs := range map[string][]string{
		"":      {"SERVICESIM_LISTEN", "SERVICESIM_PROVIDER_ID", "SERVICESIM_API_KEY_ID", "SERVICESIM_API_KEY_SECRET", "SERVICESIM_SIGNUP_DELAY", "drive"},
		"serve": {"SERVICESIM_LISTEN", "SERVICESIM_SIGNUP_DELAY"},
		"drive": {"(env LEDGER_ADMIN_URL)", "(env LEDGER_ADMIN_TOKEN)", "(env LEDGER_PROVIDER_ID)", "Exit status:\n  0  every lifecycle approved"},
	} {
		for _, env := range envs {
			if !strings.Contains(byPath[path].Help, env) {
				t.Errorf("servicesim %s -h does not show %s", path, env)
			}
		}
	}
}
