package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/drive"
	"github.com/provider-ledger/adapter/keyring"
)

const driveLong = `drive plays the service against a running ledgerd: through the admin API it
seeds a funded sender with a source instrument and a recipient with a
destination instrument (IDs unique to the run); then it runs payout
lifecycles (authorize a random amount, 1.00 to 50.00 USD, then capture, or
release for cancelled, expired or review_rejected; every third payout
delivers both callbacks again, which must answer the same) and paid
requests (credit-account, 1.00 to 20.00 USD, delivered twice under one
key). Like the service, it retries 408, 429, 5xx and transport errors with
the same key (5 attempts, backoff from 50ms, Retry-After honoured up to 2s)
and stops at any other non-200. It prints one line per lifecycle and a
summary, then reads both accounts back: the sender must hold funded minus
captured with nothing held, the recipient the sum credited.

The signing secret must be one ledgerd knows: by default the dev secret an
embedded ledgerd writes, ` + keyring.SecretFile + ` in its data directory
(LEDGER_DATA_DIR, else var/ledgerd under the source tree's root).`

const driveExitStatus = `0  every lifecycle approved and the balances match
1  a check failed, or a callback was refused (or retried in vain)
2  usage or setup error: flags, the secret file, seeding through the admin API`

// newDriveCmd returns the drive command, which fills cfg from its flags.
func newDriveCmd(cfg *drive.Config) *cobra.Command {
	*cfg = drive.DefaultConfig()
	cmd := &cobra.Command{
		Use:     "drive",
		Short:   "Play payout and request lifecycles against a running ledgerd and check the balances",
		Long:    driveLong,
		Example: "  go run ./cmd/ledgerd            # in another terminal\n  go run ./cmd/servicesim drive",
		Args:    cli.NoArgs,
	}
	cli.ExitStatus(cmd, driveExitStatus)
	fs := cmd.Flags()
	fs.StringVar(&cfg.CallbacksURL, "callbacks", cfg.CallbacksURL, "callback base URL of the ledgerd under test")
	cli.Env(fs, "callbacks", "LEDGER_CALLBACKS_URL")
	fs.StringVar(&cfg.AdminURL, "admin", cfg.AdminURL, "base URL of ledgerd's admin API")
	cli.Env(fs, "admin", "LEDGER_ADMIN_URL")
	fs.StringVar(&cfg.AdminToken, "admin-token", "", "bearer token of the admin API")
	cli.Env(fs, "admin-token", "LEDGER_ADMIN_TOKEN")
	fs.StringVar(&cfg.ProviderID, "provider-id", cfg.ProviderID, "providerID claim of the callbacks: the provider ledgerd serves")
	cli.Env(fs, "provider-id", "LEDGER_PROVIDER_ID")
	fs.StringVar(&cfg.SecretFile, "secret-file", cfg.SecretFile,
		"file holding the Base64 signing secret (default: an embedded ledgerd's, "+keyring.SecretFile+" in LEDGER_DATA_DIR, else in var/ledgerd under the source tree's root)")
	fs.IntVar(&cfg.Payouts, "payouts", cfg.Payouts, "number of payout lifecycles")
	fs.IntVar(&cfg.Requests, "requests", cfg.Requests, "number of payment request (credit-account) lifecycles")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the amounts and lifecycle choices (0: from the clock)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := cfg.Validate(); err != nil {
			return err
		}
		return exitError(drive.Run(cmd.Context(), *cfg, cmd.OutOrStdout()))
	}
	return cmd
}

// exitError maps an error of drive.Run onto the exit status: 2 for a
// drive.SetupError, else 1; nil stays nil.
func exitError(err error) error {
	var se drive.SetupError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return &cli.ExitError{Code: 2, Err: err}
	}
	return &cli.ExitError{Code: 1, Err: err}
}
