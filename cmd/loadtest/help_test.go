package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
	"github.com/provider-ledger/adapter/loadtest"
)

// TestHelp walks every command of loadtest through its help: -h prints to
// stdout and exits 0 everywhere, every flag a help lists is accepted by
// that command (-h stops before anything is sent), and the help shows the
// environment variables beside their flags and the exit status.
func TestHelp(t *testing.T) {
	t.Parallel()
	cmds := clitest.WalkHelp(t, func(args []string, stdout, stderr io.Writer) int {
		return loadtest.Run(context.Background(), args, stdout, stderr)
	})
	byPath := map[string]clitest.Command{}
	for _, c := range cmds {
		byPath[strings.Join(c.Path, " ")] = c
	}
	for path, wants := range map[string][]string{
		"":       {"storm", "record", "replay", "spawn", "clean", "bench", "seal", "completion", "Exit status:\n  0  every check passed"},
		"storm":  {"(env LEDGER_ADMIN_URL)", "(env LEDGER_ADMIN_TOKEN)", "(env LEDGER_PROVIDER_ID)", "--rate", "--duration", "--html", "--reconcile-timeout", "Exit status:"},
		"replay": {"--keep-prefix", "--reprefix", "(env LEDGER_ADMIN_URL)"},
		"spawn":  {"(env DATABASE_URL)", "--chaos", "--ceiling", "--html", "--keep"},
		"clean":  {"--prefix", "--dry-run", "(env LEDGER_ADMIN_TOKEN)", "cannot delete"},
		"bench":  {"--ceiling-db", "--clients"},
		"record": {"--out"},
		"seal":   {"--format", "--lifetime", "--seed-accounts", "--secret-file", "(env LEDGER_CALLBACKS_URL)", "vegeta attack -format=json"},
	} {
		c, ok := byPath[path]
		if !ok {
			t.Errorf("the help walk did not reach %q", path)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(c.Help, w) {
				t.Errorf("loadtest %s -h does not show %q", path, w)
			}
		}
	}
}
