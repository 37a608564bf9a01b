// Package clitest checks a command-line program from the outside, through
// its help: WalkHelp runs "-h" on every command the help lists and checks
// that the help goes to stdout with exit status 0, and that every flag it
// lists is accepted by that command.
package clitest

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/provider-ledger/adapter/internal/buildinfo"
	"github.com/provider-ledger/adapter/internal/cli"
)

// Run runs the program on args (without its name) and returns its exit
// status.
type Run func(args []string, stdout, stderr io.Writer) int

// Command is one command the walk reached.
type Command struct {
	Path  []string // the command words after the program's name
	Flags []Flag   // the flags its help lists
	Help  string
}

// Flag is one flag line of a help.
type Flag struct {
	Name string // without dashes
	Type string // the value's type as the help shows it ("" for a boolean)
}

// WalkHelp walks the program's commands through their help and reports
// every problem with t.Errorf. It returns the commands it reached.
func WalkHelp(t testing.TB, run Run) []Command {
	t.Helper()
	cmds, problems := Walk(run)
	for _, p := range problems {
		t.Error(p)
	}
	return cmds
}

// Walk is WalkHelp returning the problems instead of reporting them.
func Walk(run Run) (cmds []Command, problems []string) {
	seen := map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		key := strings.Join(path, " ")
		if seen[key] {
			return
		}
		seen[key] = true
		code, out, errs := call(run, append(append([]string{}, path...), "-h"))
		where := strings.TrimSpace("<prog> " + key + " -h")
		switch {
		case code != 0:
			problems = append(problems, fmt.Sprintf("%s: exit %d, want 0 (stderr %q)", where, code, errs))
			return
		case errs != "":
			problems = append(problems, fmt.Sprintf("%s: wrote to stderr: %q", where, errs))
		case !strings.Contains(out, "Usage:"):
			problems = append(problems, fmt.Sprintf("%s: no usage on stdout: %q", where, out))
			return
		}
		c := Command{Path: path, Help: out, Flags: flagsOf(out)}
		cmds = append(cmds, c)
		for _, f := range c.Flags {
			args := append(append([]string{}, path...), "--"+f.Name)
			if f.Type != "" {
				v, ok := sampleValue(f.Type)
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: flag --%s of a type this walk cannot fill: %s", where, f.Name, f.Type))
					continue
				}
				args = append(args, v)
			}
			args = append(args, "-h")
			if code, fout, ferrs := call(run, args); code != 0 || !strings.Contains(fout, "Usage:") {
				problems = append(problems, fmt.Sprintf("<prog> %s: flag listed in the help is not accepted: exit %d, stderr %q",
					strings.Join(args, " "), code, ferrs))
			}
		}
		for _, sub := range subcommandsOf(out) {
			walk(append(append([]string{}, path...), sub))
		}
	}
	walk(nil)
	return cmds, problems
}

func call(run Run, args []string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// section returns the lines of a help section ("Flags:") up to the next
// blank line.
func section(help, title string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(help, "\n") {
		switch {
		case strings.TrimSpace(l) == title:
			in = true
		case in && strings.TrimSpace(l) == "":
			in = false
		case in:
			lines = append(lines, l)
		}
	}
	return lines
}

var flagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([A-Za-z0-9][A-Za-z0-9-]*)(?: ([A-Za-z0-9]+))?(?:\s{2,}|$)`)

// flagsOf reads the flags of the Flags and Global Flags sections.
func flagsOf(help string) []Flag {
	var out []Flag
	for _, title := range []string{"Flags:", "Global Flags:"} {
		for _, l := range section(help, title) {
			if m := flagLine.FindStringSubmatch(l); m != nil {
				out = append(out, Flag{Name: m[1], Type: m[2]})
			}
		}
	}
	return out
}

// subcommandsOf reads the Available Commands section.
func subcommandsOf(help string) []string {
	var out []string
	for _, l := range section(help, "Available Commands:") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// sampleValue is a valid value of a flag type as pflag names it.
func sampleValue(typ string) (string, bool) {
	switch typ {
	case "string", "stringArray", "strings":
		return "x", true
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "1", true
	case "float32", "float64", "float":
		return "0.5", true
	case "duration":
		return "1s", true
	}
	return "", false
}

// CheckVersion runs the program with --version and checks that it prints,
// on stdout and with exit status 0, its name and this build's version line
// (internal/buildinfo): the release first, then the revision and the Go
// version.
func CheckVersion(t testing.TB, name string, run Run) {
	t.Helper()
	code, out, errs := call(run, []string{"--version"})
	if want := VersionLine(name); code != 0 || out != want || errs != "" {
		t.Errorf("%s --version: exit %d, stdout %q, stderr %q; want exit 0 and %q", name, code, out, errs, want)
	}
}

// VersionLine is what "name --version" prints: "ledgerctl 0.1.0, revision
// 0123456789ab, go1.26.8\n".
func VersionLine(name string) string {
	return name + " " + buildinfo.Read().String() + "\n"
}

// EnvFlag is a flag of a command tree that reads environment variables
// (cli.Env), as the configuration page documents it.
type EnvFlag struct {
	Env      []string // looked up in this order when the flag is not given
	Flag     string   // without dashes
	Default  string   // the flag's default; "" when it has none
	Commands []string // the command paths that have it, without the program's name ("" for the root)
}

// EnvFlags walks root's command tree and returns every flag tied to
// environment variables, one EnvFlag per environment variables, flag and
// default, with the commands that have it.
func EnvFlags(root *cobra.Command) []EnvFlag {
	var out []EnvFlag
	index := map[string]int{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			envs := cli.FlagEnv(f)
			if len(envs) == 0 {
				return
			}
			def := f.DefValue
			key := strings.Join(envs, ",") + "|" + f.Name + "|" + def
			path := strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), root.Name()))
			if i, ok := index[key]; ok {
				out[i].Commands = append(out[i].Commands, path)
				return
			}
			index[key] = len(out)
			out = append(out, EnvFlag{Env: envs, Flag: f.Name, Default: def, Commands: []string{path}})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}
