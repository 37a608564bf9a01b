package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/schema"
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
			return explainDB(err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d\n", v)
		return nil
	}
	return cmd
}

// explainDB summarizes a connection error of pgx (several lines, one per
// address tried) as the host, the port and the cause, with the next step.
func explainDB(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	at := fmt.Sprintf("cannot connect to Postgres at %s:%d", ce.Config.Host, ce.Config.Port)
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: connection refused; is Postgres running there? (--database-url or DATABASE_URL)", at)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: no such host; check the host in --database-url or DATABASE_URL", at)
	case errors.As(err, &pgErr):
		return fmt.Errorf("%s: %s; check the user, password and database in --database-url or DATABASE_URL", at, pgErr.Message)
	}
	cause := errors.Unwrap(ce)
	if cause == nil {
		return fmt.Errorf("%s", at)
	}
	first, _, _ := strings.Cut(cause.Error(), "\n")
	return fmt.Errorf("%s: %s", at, first)
}
