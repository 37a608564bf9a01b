package clitest_test

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
)

// fakeProgram has one good command and one of each defect the walk must
// catch; its help is written by hand, as a buggy program's would be.
func fakeProgram(args []string, stdout, stderr io.Writer) int {
	help := func(w io.Writer, body string) int { fmt.Fprintf(w, "Usage:\n  prog\n\n%s\n", body); return 0 }
	has := func(s string) bool { return slices.Contains(args, s) }
	switch {
	case args[0] == "-h" || args[0] == "--help":
		return help(stdout, "Available Commands:\n  good        fine\n  stderrhelp  help on stderr\n  badexit     -h exits 2\n  badflag     lists a flag it refuses\n\nFlags:\n  -h, --help   help")
	case args[0] == "good":
		if has("--count") && !has("1") || has("--ghost") {
			return 2
		}
		return help(stdout, "Flags:\n      --count int   how many\n      --json        JSON\n  -h, --help        help")
	case args[0] == "stderrhelp":
		return help(stderr, "")
	case args[0] == "badexit":
		fmt.Fprintln(stderr, "unknown flag -h")
		return 2
	case args[0] == "badflag":
		if has("--ghost") {
			fmt.Fprintln(stderr, "unknown flag: --ghost")
			return 2
		}
		return help(stdout, "Flags:\n      --ghost string   listed, not accepted")
	}
	return 2
}

func TestWalk(t *testing.T) {
	t.Parallel()
	cmds, problems := clitest.Walk(fakeProgram)
	var paths []string
	for _, c := range cmds {
		paths = append(paths, strings.Join(c.Path, " "))
	}
	if strings.Join(paths, ",") != ",good,stderrhelp,badflag" {
		t.Errorf("reached %q", paths)
	}
	for _, want := range []string{"stderrhelp -h: wrote to stderr", "badexit -h: exit 2", "badflag --ghost x -h: flag listed in the help is not accepted"} {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, want)
		}
		if !found {
			t.Errorf("no problem %q among %q", want, problems)
		}
	}
	for _, p := range problems {
		if strings.Contains(p, "<prog> good") {
			t.Errorf("a problem with the good command: %s", p)
		}
	}
	if len(problems) != 3 {
		t.Errorf("%d problems, want 3: %q", len(problems), problems)
	}
	good := cmds[1]
	if len(good.Flags) != 3 || good.Flags[0] != (clitest.Flag{Name: "count", Type: "int"}) || good.Flags[1] != (clitest.Flag{Name: "json"}) {
		t.Errorf("flags of good: %+v", good.Flags)
	}
}
