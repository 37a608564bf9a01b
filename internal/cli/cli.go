// Package cli holds what the project's command-line programs (ledgerctl,
// servicesim, and loadtest when it moves) share on top of spf13/cobra, so
// that they behave alike:
//
//   - Execute runs a command tree and turns its outcome into an exit code:
//     0, 2 for a usage error (or the code a command declares with
//     UsageExitCode), an ExitError's code, else 1. Errors are printed once,
//     on one line, prefixed with the command's path, or as a JSON Problem
//     when the command was asked for JSON (--json, --output json); help
//     goes to stdout and exits 0 for -h and --help on every command.
//   - Flags may come before the command words (ledgerctl --admin URL
//     accounts get A), positional arguments may be negative numbers
//     (adjust acc -5.25), and "--" ends the flags (normalize).
//   - Env ties a flag to environment variables: the help shows them beside
//     the flag ("(env LEDGER_ADMIN_URL)"), and a flag not given takes the
//     first one set. Defaults shown in help never come from the
//     environment, so a token or a password never appears in help.
//   - A flag whose usage says "(required)" (requiredMark) is checked
//     before the command runs: missing, it is a usage error and nothing
//     is sent.
//   - ExitStatus documents a command's exit codes in its help.
//   - Version is the binary's version for --version (internal/buildinfo).
//   - Endpoint.Explain adds the next step to an error from an HTTP API: the
//     token to pass on a 401, "is it running?" on connection refused.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/provider-ledger/adapter/internal/buildinfo"
)

// UsageError is a command line that does not fit the command: a bad flag,
// a missing or extra argument, a bad combination. Execute prints it with a
// pointer to the command's help and exits with the command's usage code.
type UsageError struct{ Err error }

// Error is the error's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// ExitError ends the program with Code. Err, when not nil, is printed
// first (like any error); a nil Err means the command already said what it
// had to.
type ExitError struct {
	Code int
	Err  error
}

// Error is Err's message, or the exit status when Err is nil.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return "exit status " + strconv.Itoa(e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// WithErrorCode returns run with its errors other than a usage error or an
// ExitError ending the program with code: for commands whose exit status
// table gives errors a code of their own.
func WithErrorCode(code int, run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		var ee *ExitError
		var ue *UsageError
		if err == nil || errors.As(err, &ee) || errors.As(err, &ue) {
			return err
		}
		return &ExitError{Code: code, Err: err}
	}
}

// Annotation keys on commands.
const (
	// UsageExitCode is the exit code of a usage error of the command
	// (default 2), for commands whose codes 1 and 2 mean something else.
	UsageExitCode = "cli.usage-exit-code"
	annExitStatus = "cli.exit-status"
	annGroup      = "cli.group"
	annEnv        = "cli.env" // on flags
)

// ExitStatus documents the command's exit codes; the help prints text
// under "Exit status:". Lines are "CODE  meaning".
func ExitStatus(cmd *cobra.Command, text string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annExitStatus] = strings.TrimRight(text, "\n")
}

// Group makes cmd a command that only holds subcommands: given no
// subcommand, or an unknown one, it is a usage error (cobra would print
// the help and exit 0, hiding the mistake from a script).
func Group(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annGroup] = "true"
	cmd.Args = NoCommand
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return Usagef("missing command: one of %s", strings.Join(names, ", "))
	}
	return cmd
}

// NoCommand refuses arguments as unknown commands, suggesting the closest
// subcommands: the Args of a command that has subcommands but takes no
// arguments itself.
func NoCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
	}
	return Usagef("%s", msg)
}

// NoArgs is cobra.NoArgs as a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("unexpected argument %q", args[0])
	}
	return nil
}

// ExactArgs wants n arguments, a usage error otherwise.
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("want %d argument(s), got %d", n, len(args))
		}
		return nil
	}
}

// MaxArgs wants at most n arguments, a usage error otherwise.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return Usagef("want at most %d argument(s), got %d", n, len(args))
		}
		return nil
	}
}

// Env ties the flag name of fs to environment variables, the first set
// (and not empty) winning when the flag is not given. The help shows them
// beside the flag.
func Env(fs *pflag.FlagSet, name string, envs ...string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli.Env: no flag " + name)
	}
	_ = fs.SetAnnotation(name, annEnv, envs)
	f.Usage += " (env " + strings.Join(envs, ", else ") + ")"
}

// FlagEnv returns the environment variables Env tied to the flag, in the
// order they are looked up (none for a flag without).
func FlagEnv(f *pflag.Flag) []string { return f.Annotations[annEnv] }

// applyEnv sets every flag of cmd that was not given from its environment
// variables.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		envs := f.Annotations[annEnv]
		if err != nil || f.Changed || len(envs) == 0 {
			return
		}
		for _, name := range envs {
			v, ok := os.LookupEnv(name)
			if !ok || v == "" {
				continue
			}
			if serr := f.Value.Set(v); serr != nil {
				// The value is not echoed: it may be a secret.
				err = Usagef("%s is not a valid --%s: %v", name, f.Name, errorWithoutValue(serr, v))
			}
			return
		}
	})
	return err
}

// requiredMark in a flag's usage makes the flag required: a command run
// without it (nor its environment variable) is a usage error before it
// does anything, a request included. The help shows the mark.
const requiredMark = "(required)"

// checkRequired refuses a command whose flags marked requiredMark are
// empty, naming every one.
func checkRequired(cmd *cobra.Command) error {
	var missing []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Usage, requiredMark) && (f.Value.String() == "" || f.Value.String() == "[]") {
			missing = append(missing, "--"+f.Name)
		}
	})
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return Usagef("required flag %s not given", missing[0])
	}
	return Usagef("required flags not given: %s", strings.Join(missing, ", "))
}

// errorWithoutValue keeps a parse error's message without the value.
func errorWithoutValue(err error, value string) string {
	return strings.ReplaceAll(err.Error(), value, "…")
}

// Execute runs root on args (the program's arguments without its name) and
// returns the exit code. It prints help to stdout, errors to stderr, once.
func Execute(ctx context.Context, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetHelpFunc(help)
	root.SetUsageFunc(func(c *cobra.Command) error { return writeUsage(c.OutOrStderr(), c) })
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{err} })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyEnv(cmd); err != nil {
			return err
		}
		if err := checkOutput(cmd.Flags()); err != nil {
			return err
		}
		return checkRequired(cmd)
	}
	if root.Version != "" {
		root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	}
	args = normalize(root, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	var ee *ExitError
	var ue *UsageError
	switch {
	case errors.As(err, &ee):
		if ee.Err != nil {
			printError(stderr, cmd, args, ee.Err, false, ee.Code, oneLine(ee.Err.Error()))
		}
		return ee.Code
	case errors.As(err, &ue):
		code := 2
		if c, cerr := strconv.Atoi(cmd.Annotations[UsageExitCode]); cerr == nil {
			code = c
		}
		printError(stderr, cmd, args, err, true, code, oneLine(err.Error()))
		return code
	}
	printError(stderr, cmd, args, err, false, 1, oneLine(err.Error()))
	return 1
}

// oneLine joins the lines of a message (a wrapped multi-line error) so an
// error is one line.
func oneLine(s string) string {
	fields := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, "; ")
}

// normalize rewrites args for cobra: the command words first, then every
// flag with its value, then "--" and the positional arguments. So flags
// may come before the command words (ledgerctl --admin URL accounts get
// A) or anywhere after them, and a positional argument may be a negative
// number (adjust acc -5.25), which the flag parser would take for a flag.
// Whether a flag takes a value is looked up on the command reached so
// far, then on its subcommands (where a flag given early is defined): a
// flag that is boolean anywhere there takes none. Arguments after a "--"
// of the caller stay positional. Shell completion requests are left alone.
func normalize(root *cobra.Command, args []string) []string {
	if len(args) > 0 && strings.HasPrefix(args[0], "__complete") {
		return args
	}
	// The commands and flags cobra adds itself, so that they are found.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd := root
	var words, flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case isFlag(a):
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(cmd, a) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		case len(pos) == 0 && findSub(cmd, a) != nil:
			cmd = findSub(cmd, a)
			words = append(words, a)
		default:
			pos = append(pos, a)
		}
	}
	out := append(append([]string{}, words...), flags...)
	if len(pos) > 0 {
		out = append(append(out, "--"), pos...)
	}
	return out
}

// isFlag: "-x", "--name"; not "-", and not a negative number.
func isFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	c := a[1]
	return !(c >= '0' && c <= '9' || c == '.')
}

func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag a (no "=") expects the next
// argument as its value.
func takesValue(cmd *cobra.Command, a string) bool {
	name := strings.TrimLeft(a, "-")
	short := !strings.HasPrefix(a, "--")
	if name == "help" || short && name == "h" {
		return false
	}
	lookup := func(c *cobra.Command) *pflag.Flag {
		fs := c.Flags() // local and persistent; inherited ones below
		if short {
			if f := fs.ShorthandLookup(name); f != nil {
				return f
			}
			return c.InheritedFlags().ShorthandLookup(name)
		}
		if f := fs.Lookup(name); f != nil {
			return f
		}
		return c.InheritedFlags().Lookup(name)
	}
	if f := lookup(cmd); f != nil {
		return f.NoOptDefVal == ""
	}
	// Not on this command: a flag of a subcommand given early. It takes a
	// value unless it is boolean on any of them; unknown, it takes none
	// (the parser will refuse it).
	found, boolean := false, false
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if f := lookup(sub); f != nil {
				found = true
				boolean = boolean || f.NoOptDefVal != ""
			}
			walk(sub)
		}
	}
	walk(cmd)
	return found && !boolean
}

// Version describes the running binary for --version, as ledgerd's does:
// the release (buildinfo.Version), the VCS revision when the build recorded
// it, and the Go version.
func Version() string { return buildinfo.Read().String() }

// VersionOf describes another Go binary from its build info (read with
// debug/buildinfo): its module version, the VCS revision and the Go
// version. The release a binary was stamped with is not in its build info:
// run it with --version for that.
func VersionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		v += ", revision " + rev[:min(12, len(rev))]
		if modified == "true" {
			v += " (modified)"
		}
	} else {
		v += ", revision unknown (built without VCS information)"
	}
	return v + ", " + bi.GoVersion
}

// help writes cmd's help to stdout: its description, then its usage.
func help(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	if d := strings.TrimSpace(cmd.Long); d != "" {
		fmt.Fprintf(w, "%s\n\n", d)
	} else if cmd.Short != "" {
		fmt.Fprintf(w, "%s\n\n", cmd.Short)
	}
	_ = writeUsage(w, cmd)
}

// writeUsage is cobra's usage (Usage, Examples, Available Commands, Flags,
// Global Flags) without a usage line of its own for a group, plus the
// command's exit status.
func writeUsage(w io.Writer, c *cobra.Command) error {
	fmt.Fprint(w, "Usage:")
	if c.Runnable() && c.Annotations[annGroup] == "" {
		fmt.Fprintf(w, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n  %s [command]", c.CommandPath())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(w, "\n\nExamples:\n%s", strings.TrimRight(c.Example, "\n"))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprint(w, "\n\nAvailable Commands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(w, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\n\nFlags:\n%s", strings.TrimRight(c.LocalFlags().FlagUsages(), " \n"))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\n\nGlobal Flags:\n%s", strings.TrimRight(c.InheritedFlags().FlagUsages(), " \n"))
	}
	if s := exitStatus(c); s != "" {
		fmt.Fprintf(w, "\n\nExit status:\n%s", s)
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	fmt.Fprintln(w)
	return nil
}

// exitStatus is the command's documented exit status, or its nearest
// ancestor's.
func exitStatus(c *cobra.Command) string {
	for p := c; p != nil; p = p.Parent() {
		if s := p.Annotations[annExitStatus]; s != "" {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				lines[i] = "  " + l
			}
			return strings.Join(lines, "\n")
		}
	}
	return ""
}
