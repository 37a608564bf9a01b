package main

import (
	"context"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/server"
)

// gcPercent is the Go garbage collector's target when GOGC is unset: a
// callback allocates little that lives, and the live heap is small (about
// 10 MB under a storm), so collecting a quarter as often costs tens of MB
// and gives the CPU to the callbacks.
const gcPercent = 400

const rootLong = `ledgerd serves the payments service's four ledger callbacks on one listener
(--listen) and the admin API, /metrics, /healthz and /readyz on a second
(--admin-listen). It migrates the database at start (LEDGER_MIGRATE) and
reconciles on a schedule. Every setting is an environment variable and a
flag of the same meaning; the flag wins (docs/configuration.md). With no
DATABASE_URL it runs an embedded Postgres under --data-dir.

"ledgerd migrate" applies the schema as "ledgerctl migrate" does;
"ledgerd healthcheck" is a container's health check.`

const serveExitStatus = `0  stopped by SIGINT or SIGTERM, in-flight callbacks drained
1  could not start, or stopped on an error (logged on stderr)
2  usage error: unknown command, bad flag, or a setting that is invalid or contradicts another`

// run executes one command line (without the program name) and returns
// the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	return cli.Execute(ctx, root, singleDashFlags(root, args), stdout, stderr)
}

// newRoot is ledgerd's command tree: the root serves; its flags are
// server.Settings(), whose environment variables server.LoadConfig reads.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:     "ledgerd",
		Short:   "Serve the ledger callbacks of the payments service and the adapter's admin API",
		Long:    rootLong,
		Version: cli.Version(),
		Args:    cli.NoCommand,
		RunE:    func(cmd *cobra.Command, _ []string) error { return serve(cmd) },
	}
	cli.ExitStatus(root, serveExitStatus)
	fs := root.Flags()
	fs.SortFlags = false // server.Settings()'s order, related settings together
	for _, s := range server.Settings() {
		v := &settingValue{v: s.Default, typ: "string"}
		if s.Bool {
			v.typ = "bool"
		}
		f := fs.VarPF(v, s.Flag, "", s.Usage)
		if s.Bool {
			f.NoOptDefVal = "true"
		}
		cli.Env(fs, s.Flag, s.Env)
	}
	root.AddCommand(migrateCmd(), healthcheckCmd())
	return root
}

// settingValue holds a setting's flag as text: server.LoadConfig checks
// and converts it, as it does the environment's.
type settingValue struct{ v, typ string }

func (s *settingValue) String() string     { return s.v }
func (s *settingValue) Set(v string) error { s.v = v; return nil }
func (s *settingValue) Type() string       { return s.typ }

// serve runs ledgerd until ctx ends. The flags given on the command line
// are handed to server.LoadConfig, which reads the environment itself (so
// that it knows whether a value came from a variable or a flag, and refuses
// a secret given both ways). It logs on the process's stderr.
func serve(cmd *cobra.Command) error {
	settings := map[string]bool{}
	for _, s := range server.Settings() {
		settings[s.Flag] = true
	}
	var args []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if settings[f.Name] {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	cfg, err := server.LoadConfig(args, os.Getenv, io.Discard)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	log := server.NewLogger(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())), cfg.LogLevel)
	if err := server.Run(cmd.Context(), cfg, log, server.Hooks{}); err != nil {
		log.Error("ledgerd stopped", "err", err)
		return &cli.ExitError{Code: 1}
	}
	return nil
}

// singleDashFlags rewrites the flags of ledgerd's earlier command line,
// Go's flag package, which took a long flag after one dash (-listen
// :8080, -version, healthcheck -timeout 5s): "-name" and "-name=value"
// become "--name…" when name is a flag of a command of ledgerd. Arguments
// after "--" are left alone.
func singleDashFlags(root *cobra.Command, args []string) []string {
	long := map[string]bool{"version": true, "help": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if long[name] {
			out[i] = "-" + a
		}
	}
	return out
}
