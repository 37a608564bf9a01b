package main

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

// errNoMigrationDatabase: the migrate commands need a database URL.
var errNoMigrationDatabase = errors.New("no database: set --database-url, LEDGER_MIGRATION_DATABASE_URL or DATABASE_URL " +
	"(ledgerd's embedded database: --database-url \"$(ledgerctl db-url)\")")

// databaseFlag registers --database-url on cmd: the URL migrations run on,
// a direct or session-pooled one with a role that may change the schema.
func databaseFlag(cmd *cobra.Command) *string {
	var dbURL string
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of ledgerd's database: direct or session-pooled, as a role that may change the schema")
	cli.Env(cmd.Flags(), "database-url", "LEDGER_MIGRATION_DATABASE_URL", "DATABASE_URL")
	return &dbURL
}

func migrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema migrations and function files to a database (status, up --dry-run)",
		Long: `Apply the pending schema migrations to the database of --database-url, then
the function files whose body changed (schema/README.md), under tern's
session-level advisory lock, so that it is safe beside starting ledgerd
replicas (ledgerd does the same at start unless LEDGER_MIGRATE=off).
Use a direct or session-pooled URL, never one through a transaction pooler,
and a role that may change the schema (docs/runtime-role.sql's owner).

"ledgerctl migrate" is "ledgerctl migrate up"; "migrate status" shows what
is pending and "migrate up --dry-run" the SQL it would run.`,
		Args: cli.NoCommand,
	}
	dbURL := databaseFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return up(cmd, *dbURL, schema.DefaultLockTimeout)
	}
	cmd.AddCommand(migrateUpCmd(), migrateStatusCmd())
	return cmd
}

func migrateUpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Apply the pending migrations and function files (--dry-run: print them)",
		Long: `Apply the pending schema migrations, then the pending function files, to the
database of --database-url. With --dry-run print each pending migration's
and function file's name and SQL and change nothing.
While another process migrates, it says "waiting for the migration lock"
and gives up after --lock-timeout.`,
		Args: cli.NoArgs,
	}
	dbURL := databaseFlag(cmd)
	dryRun := cmd.Flags().Bool("dry-run", false, "print the pending migrations and their SQL; apply nothing")
	timeout := cmd.Flags().Duration("lock-timeout", schema.DefaultLockTimeout, "how long to wait for the migration lock")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *dryRun {
			return dryRunUp(cmd, *dbURL)
		}
		return up(cmd, *dbURL, *timeout)
	}
	return cmd
}

func migrateStatusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the database's schema version and the pending migrations and function files",
		Long: `Print the schema version of the database of --database-url, this build's
version, and the migrations and function files pending. It reads two
tables and takes no lock: any role that ledgerd runs as may run it,
through a pooler too.`,
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, `0  the schema is at this build's version, with this build's function bodies
1  migrations or function files are pending, the schema is newer than this build, or an error
2  usage error`)
	dbURL := databaseFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *dbURL == "" {
			return errNoMigrationDatabase
		}
		st, err := schema.StatusURL(cmd.Context(), *dbURL)
		if err != nil {
			return store.Explain(err)
		}
		printStatus(cmd.OutOrStdout(), st)
		if !st.UpToDate() {
			return &cli.ExitError{Code: 1}
		}
		return nil
	}
	return cmd
}

func printStatus(w io.Writer, st schema.Status) {
	fmt.Fprintf(w, "database version  %d\nthis build        %d\n", st.Current, st.Latest)
	switch {
	case st.UpToDate():
		fmt.Fprintln(w, "up to date")
	case st.Newer():
		fmt.Fprintf(w, "the database was migrated by a newer build: run that build\n  %s\n", st.Explain())
	default:
		fmt.Fprintf(w, "pending           %d (apply with: ledgerctl migrate)\n", len(st.Pending)+len(st.PendingFunctions))
		for _, m := range st.Pending {
			fmt.Fprintf(w, "  %3d  %s\n", m.Version, m.Name)
		}
		for _, f := range st.PendingFunctions {
			fmt.Fprintf(w, "       %s\n", f.File())
		}
	}
}

func dryRunUp(cmd *cobra.Command, dbURL string) error {
	if dbURL == "" {
		return errNoMigrationDatabase
	}
	st, err := schema.StatusURL(cmd.Context(), dbURL)
	if err != nil {
		return store.Explain(err)
	}
	w := cmd.OutOrStdout()
	printStatus(w, st)
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

func up(cmd *cobra.Command, dbURL string, timeout time.Duration) error {
	if dbURL == "" {
		return errNoMigrationDatabase
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
