package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/datadir"
)

func dbURLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db-url",
		Short: "Print the URL of ledgerd's embedded database",
		Long: `Print the connection URL of the embedded Postgres that a ledgerd without
DATABASE_URL runs in --data-dir, read from the data directory: the port from
the running cluster, the password from its file. The URL names the libpq
password file (passfile=DATA_DIR/pgpass) rather than carrying the password,
unless --with-password is given:

  psql "$(ledgerctl db-url)"
  ledgerctl migrate status --database-url "$(ledgerctl db-url)"`,
		Args: cli.NoArgs,
	}
	var dataDir string
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "ledgerd's data directory (default var/ledgerd under the source tree's root, else under the working directory)")
	cli.Env(cmd.Flags(), "data-dir", "LEDGER_DATA_DIR")
	withPassword := cmd.Flags().Bool("with-password", false, "put the password in the URL instead of naming the password file")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if dataDir == "" {
			dataDir = datadir.Default()
		}
		u, err := embedpg.RunningURL(dataDir, *withPassword)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), u)
		return nil
	}
	return cmd
}
