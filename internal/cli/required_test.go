package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"
)

// TestRequiredFlags: a flag whose usage says "(required)" is checked
// before the command runs: missing or empty it is a usage error naming it
// (every missing one at once) and the command does nothing; its
// environment variable or an alias bound to the same value satisfies it.
// Not parallel: it sets the environment.
func TestRequiredFlags(t *testing.T) {
	ran := 0
	tree := func() *cobra.Command {
		root := Group(&cobra.Command{Use: "prog"})
		var owner, note string
		create := &cobra.Command{Use: "create", Args: NoArgs, RunE: func(*cobra.Command, []string) error { ran++; return nil }}
		create.Flags().StringVar(&owner, "owner", "", "the owner "+requiredMark)
		create.Flags().StringVar(&owner, "owner-external-id", "", "same as --owner")
		create.Flags().StringVar(&note, "note", "", "a note (required)")
		Env(create.Flags(), "note", "PROG_NOTE")
		create.Flags().String("optional", "", "not required")
		root.AddCommand(create)
		return root
	}
	t.Setenv("PROG_NOTE", "")
	for _, c := range []struct {
		args []string
		env  string
		code int
		msg  string
	}{
		{[]string{"create"}, "", 2, "prog create: required flags not given: --note, --owner (see 'prog create --help')\n"},
		{[]string{"create", "--owner", "alice"}, "", 2, "prog create: required flag --note not given (see 'prog create --help')\n"},
		{[]string{"create", "--owner", "", "--note", "n"}, "", 2, "prog create: required flag --owner not given (see 'prog create --help')\n"},
		{[]string{"create", "--owner", "alice", "--note", "n"}, "", 0, ""},
		{[]string{"create", "--owner-external-id", "alice", "--note", "n"}, "", 0, ""},
		{[]string{"create", "--owner", "alice"}, "from the environment", 0, ""},
		{[]string{"create", "-h"}, "", 0, ""},
	} {
		t.Setenv("PROG_NOTE", c.env)
		before := ran
		var out, errb bytes.Buffer
		code := Execute(context.Background(), tree(), c.args, &out, &errb)
		wantRuns := 0
		if c.code == 0 && c.args[len(c.args)-1] != "-h" {
			wantRuns = 1
		}
		if code != c.code || errb.String() != c.msg || ran-before != wantRuns {
			t.Errorf("%v (PROG_NOTE=%q): exit %d, stderr %q, ran %d times; want %d, %q, %d", c.args, c.env, code, errb.String(), ran-before, c.code, c.msg, wantRuns)
		}
	}
}
