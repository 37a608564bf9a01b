package main

import (
	"cmp"
	"errors"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/cli/migratecmd"
)

// errNoDatabase: ledgerd migrate needs an external database.
var errNoDatabase = errors.New("no database: set LEDGER_MIGRATION_DATABASE_URL (--migration-database-url) or DATABASE_URL (--database-url); " +
	"the embedded database is migrated by ledgerd at start")

// databaseFlags registers ledgerd's two database settings on cmd: the
// migrations run on LEDGER_MIGRATION_DATABASE_URL, else DATABASE_URL, as
// they do when ledgerd migrates at start.
func databaseFlags(cmd *cobra.Command) func() string {
	fs := cmd.Flags()
	dbURL := fs.String("database-url", "", "Postgres URL of ledgerd's database")
	cli.Env(fs, "database-url", "DATABASE_URL")
	migURL := fs.String("migration-database-url", "", "direct or session-pooled Postgres URL for migrations, as a role that may change the schema (default --database-url)")
	cli.Env(fs, "migration-database-url", "LEDGER_MIGRATION_DATABASE_URL")
	return func() string { return cmp.Or(*migURL, *dbURL) }
}

// migrateCmd is `ledgerd migrate`: `ledgerctl migrate` with ledgerd's
// settings, so that an image holding ledgerd alone can migrate.
func migrateCmd() *cobra.Command {
	return migratecmd.New(migratecmd.Options{Program: "ledgerd", DatabaseFlags: databaseFlags, NoDatabase: errNoDatabase})
}
