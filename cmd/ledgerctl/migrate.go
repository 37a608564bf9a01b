package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store"
)

func migrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema migrations to a database",
		Long: `Apply the schema migrations to the database of --database-url, under an
advisory lock (ledgerd does the same at start unless LEDGER_MIGRATE=off; its
embedded database it migrates itself).`,
		Args: cli.NoArgs,
	}
	var dbURL string
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of ledgerd's database")
	cli.Env(cmd.Flags(), "database-url", "DATABASE_URL")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if dbURL == "" {
			return errNoDatabase
		}
		v, err := schema.MigrateURL(cmd.Context(), dbURL)
		if err != nil {
			return store.Explain(err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d\n", v)
		return nil
	}
	return cmd
}
