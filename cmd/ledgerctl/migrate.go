package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/cli/migratecmd"
)

// errNoMigrationDatabase: the migrate commands need a database URL.
var errNoMigrationDatabase = errors.New("no database: set --database-url, LEDGER_MIGRATION_DATABASE_URL or DATABASE_URL " +
	"(ledgerd's embedded database: --database-url \"$(ledgerctl db-url)\")")

// databaseFlag registers --database-url on cmd: the URL migrations run on,
// a direct or session-pooled one with a role that may change the schema.
func databaseFlag(cmd *cobra.Command) func() string {
	var dbURL string
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of ledgerd's database: direct or session-pooled, as a role that may change the schema")
	cli.Env(cmd.Flags(), "database-url", "LEDGER_MIGRATION_DATABASE_URL", "DATABASE_URL")
	return func() string { return dbURL }
}

// migrateCmd is `ledgerctl migrate`, the command `ledgerd migrate` shares.
func migrateCmd() *cobra.Command {
	return migratecmd.New(migratecmd.Options{Program: "ledgerctl", DatabaseFlags: databaseFlag, NoDatabase: errNoMigrationDatabase})
}
