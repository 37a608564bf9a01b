// Package migratecmd is the migrate command that ledgerctl and ledgerd
// share (`ledgerctl migrate`, `ledgerd migrate`): status, up and up
// --dry-run over package schema, so that both binaries apply the same
// migrations the same way and exit with the same codes. Each binary says
// how its command finds the database (Options.DatabaseFlags), with the
// flags and environment variables of its own configuration.
package migratecmd

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store"
)

// Exit codes of "migrate status".
const (
	// StatusUpToDate: the schema is this build's, function bodies included.
	StatusUpToDate = 0
	// StatusPending: migrations or function files are pending; "migrate
	// up" applies them.
	StatusPending = 1
	// StatusError: a usage error, no database, a database that cannot be
	// read, or a schema newer than this build (which "migrate up" cannot
	// help).
	StatusError = 2
)

// statusExit is the help's table of StatusUpToDate, StatusPending and
// StatusError.
const statusExit = `0  up to date: the schema is at this build's version, with this build's function bodies
1  pending: migrations or function files to apply (migrate up applies them)
2  error: bad flags, no database, the database cannot be read, or its schema is newer than this build`

// Options say how one binary's migrate command finds its database.
type Options struct {
	// Program is the binary's name, for the hints the command prints
	// ("apply with: ledgerctl migrate").
	Program string
	// DatabaseFlags registers the database flags on a command and returns
	// what reads the URL once the flags are parsed ("" for none).
	DatabaseFlags func(cmd *cobra.Command) (url func() string)
	// NoDatabase is the error when the URL is empty: it names the flags
	// and variables to set.
	NoDatabase error
}

// New returns the migrate command with its up and status subcommands.
func New(o Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema migrations and function files to a database (status, up --dry-run)",
		Long: `Apply the pending schema migrations to the database, then the function files
whose body changed (schema/README.md), under tern's session-level advisory
lock, so that it is safe beside starting ledgerd replicas (ledgerd does the
same at start unless LEDGER_MIGRATE=off). Use a direct or session-pooled
URL, never one through a transaction pooler, and a role that may change
the schema (docs/runtime-role.sql's owner).

"` + o.Program + ` migrate" is "` + o.Program + ` migrate up"; "migrate status" shows what
is pending (exit 1 when something is) and "migrate up --dry-run" the SQL
it would run.`,
		Args: cli.NoCommand,
	}
	dbURL := o.DatabaseFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return o.up(cmd, dbURL(), schema.DefaultLockTimeout)
	}
	cmd.AddCommand(o.upCmd(), o.statusCmd())
	return cmd
}

func (o Options) upCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Apply the pending migrations and function files (--dry-run: print them)",
		Long: `Apply the pending schema migrations, then the pending function files, to the
database. With --dry-run print each pending migration's and function file's
name and SQL and change nothing.
While another process migrates, it says "waiting for the migration lock"
and gives up after --lock-timeout.`,
		Args: cli.NoArgs,
	}
	dbURL := o.DatabaseFlags(cmd)
	dryRun := cmd.Flags().Bool("dry-run", false, "print the pending migrations and their SQL; apply nothing")
	timeout := cmd.Flags().Duration("lock-timeout", schema.DefaultLockTimeout, "how long to wait for the migration lock")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *dryRun {
			return o.dryRunUp(cmd, dbURL())
		}
		return o.up(cmd, dbURL(), *timeout)
	}
	return cmd
}

func (o Options) statusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the database's schema version and the pending migrations and function files",
		Long: `Print the schema version of the database, this build's version, and the
migrations and function files pending. It reads two tables and takes no
lock: any role that ledgerd runs as may run it, through a pooler too. The
exit status tells a deploy script what to do: 0 nothing, 1 run migrate up,
2 stop and look.`,
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, statusExit)
	dbURL := o.DatabaseFlags(cmd)
	cmd.RunE = cli.WithErrorCode(StatusError, func(cmd *cobra.Command, _ []string) error {
		url := dbURL()
		if url == "" {
			return o.NoDatabase
		}
		st, err := schema.StatusURL(cmd.Context(), url)
		if err != nil {
			return store.Explain(err)
		}
		o.printStatus(cmd.OutOrStdout(), st)
		switch {
		case st.Newer():
			return errors.New("the database was migrated by a newer build than this one")
		case !st.UpToDate():
			return &cli.ExitError{Code: StatusPending}
		}
		return nil
	})
	return cmd
}

func (o Options) printStatus(w io.Writer, st schema.Status) {
	fmt.Fprintf(w, "database version  %d\nthis build        %d\n", st.Current, st.Latest)
	switch {
	case st.UpToDate():
		fmt.Fprintln(w, "up to date")
	case st.Newer():
		fmt.Fprintf(w, "the database was migrated by a newer build: run that build\n  %s\n", st.Explain())
	default:
		fmt.Fprintf(w, "pending           %d (apply with: %s migrate)\n", len(st.Pending)+len(st.PendingFunctions), o.Program)
		for _, m := range st.Pending {
			fmt.Fprintf(w, "  %3d  %s\n", m.Version, m.Name)
		}
		for _, f := range st.PendingFunctions {
			fmt.Fprintf(w, "       %s\n", f.File())
		}
	}
}

func (o Options) dryRunUp(cmd *cobra.Command, dbURL string) error {
	if dbURL == "" {
		return o.NoDatabase
	}
	st, err := schema.StatusURL(cmd.Context(), dbURL)
	if err != nil {
		return store.Explain(err)
	}
	w := cmd.OutOrStdout()
	o.printStatus(w, st)
	if st.Newer() {
		return errors.New("the database is newer than this build")
	}
	for _, m := range st.Pending {
		fmt.Fprintf(w, "\n-- migration %d: %s (would apply; dry run)\n%s\n", m.Version, m.Name, strings.TrimSpace(m.SQL))
	}
	for _, f := range st.PendingFunctions {
		fmt.Fprintf(w, "\n-- function %s: %s (would apply after the migrations; dry run)\n%s\n", f.Name, f.File(), strings.TrimSpace(f.SQL))
	}
	return nil
}

func (o Options) up(cmd *cobra.Command, dbURL string, timeout time.Duration) error {
	if dbURL == "" {
		return o.NoDatabase
	}
	// Progress (the lock wait, each migration) on stderr, the result on stdout.
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	before, v, err := schema.UpURL(cmd.Context(), dbURL, schema.UpOptions{LockTimeout: timeout, Logger: log})
	if err != nil {
		return store.Explain(err)
	}
	switch {
	case before.UpToDate():
		fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d: up to date\n", v)
	case before.Current == v:
		fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d; functions applied: %d\n", v, len(before.PendingFunctions))
	default:
		fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d (was %d); functions applied: %d\n", v, before.Current, len(before.PendingFunctions))
	}
	return nil
}
