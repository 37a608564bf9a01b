package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/keyring"
)

// Exit codes of ledgerctl secrets rekey.
const (
	rekeyDone      = 0
	rekeyRemaining = 1
	rekeyError     = 3
)

// rekeyCmd is step 2 of a KEK rotation: re-encrypt every active signing
// secret under the answering replica's current KEK.
func rekeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rekey",
		Short: "Re-encrypt the signing secrets under the current KEK (step 2 of a KEK rotation)",
		Long: `Re-encrypt every active signing secret under the current KEK of the replica
that answers (POST /v1/keyring/rekey): step 2 of a KEK rotation, once every
replica runs with LEDGER_KEK=<new KEK> and LEDGER_KEK_PREVIOUS=<old KEK>.
Idempotent and safe to run on several replicas at once; a secret the replica
cannot decrypt is left untouched and listed. Give --kek-fingerprint (from
"ledgerctl secrets kek-fingerprint") so that a replica given the KEKs the wrong
way round refuses (409) instead of moving the secrets back under the old KEK.
Exit status 0 means no active secret needs the previous KEK any more: only
then drop LEDGER_KEK_PREVIOUS (step 3).`,
		Args:        cli.NoArgs,
		Annotations: map[string]string{cli.UsageExitCode: "3"},
	}
	cli.ExitStatus(cmd, `0  every active secret is under the current KEK
1  secrets remain under another KEK (listed): do not drop LEDGER_KEK_PREVIOUS yet
3  error: bad flags, admin API unreachable or answering an error (409: the replica's current KEK is not --kek-fingerprint)`)
	o := adminFlags(cmd, true)
	var kekFP string
	cmd.Flags().StringVar(&kekFP, "kek-fingerprint", "", "fingerprint of the new KEK (ledgerctl secrets kek-fingerprint); the replica must have it as LEDGER_KEK")
	run := adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		res, _, err := c.SigningSecrets.Rekey(ctx, &adminapi.KeyringRekeyRequest{KEKFingerprint: kekFP})
		if err != nil {
			return err
		}
		if o.json {
			err = printJSON(cmd.OutOrStdout(), res)
		} else {
			printRekey(cmd.OutOrStdout(), res)
		}
		if err != nil {
			return err
		}
		if res.Remaining > 0 {
			return &cli.ExitError{Code: rekeyRemaining}
		}
		return nil
	})
	cmd.RunE = cli.WithErrorCode(rekeyError, run)
	return cmd
}

func printRekey(w io.Writer, r *adminapi.KeyringRekey) {
	prev := "none"
	if r.PreviousKEKFingerprint != nil {
		prev = *r.PreviousKEKFingerprint
	}
	fmt.Fprintf(w, "re-encrypted %d secrets under KEK %s (previous KEK %s); %d active secrets under it, %d under another KEK\n",
		r.Rekeyed, r.KEKFingerprint, prev, r.Current, r.Remaining)
	if r.Remaining == 0 {
		return
	}
	rows := make([][]string, 0, len(r.RemainingSecrets))
	for _, s := range r.RemainingSecrets {
		rows = append(rows, []string{s.SecretID, s.Fingerprint, s.KEKFingerprint, s.Reason})
	}
	table(w, "SECRET ID\tFINGERPRINT\tKEK\tREASON", rows)
}

// kekFingerprintCmd prints the fingerprint of a KEK, computed here: what
// ledgerd logs, lists and exposes for its KEKs, and what rekey
// --kek-fingerprint takes.
func kekFingerprintCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kek-fingerprint",
		Short: "Print the fingerprint of a KEK, read from a file or standard input",
		Long: `Print the fingerprint of a KEK (the Base64 of 32 bytes, as in LEDGER_KEK_FILE),
read from --from-file or standard input, never from the command line. The
fingerprint identifies the KEK without revealing it: ledgerd logs it at start,
"ledgerctl secrets list" shows it for each secret (KEK), the metric
ledgerd_keyring_kek_info carries it, and "ledgerctl secrets rekey
--kek-fingerprint" takes it. Nothing is sent anywhere.`,
		Args: cli.NoArgs,
	}
	cli.ExitStatus(cmd, `0  printed
1  error: the file cannot be read or does not hold the Base64 of 32 bytes`)
	var from string
	cmd.Flags().StringVar(&from, "from-file", "-", "file holding the Base64 KEK (- for standard input)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		b64, err := readSecret(cmd.InOrStdin(), from)
		if err != nil {
			return err
		}
		kek, err := envelope.ParseSecret(b64)
		if err != nil || len(kek) != keyring.KEKSize {
			return fmt.Errorf("%s does not hold the Base64 of %d bytes", from, keyring.KEKSize)
		}
		defer clear(kek)
		fmt.Fprintln(cmd.OutOrStdout(), keyring.KEKFingerprint(kek))
		return nil
	}
	return cmd
}
