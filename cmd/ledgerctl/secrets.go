package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
)

// secretsCmd manages the adapter's keyring of signing secrets. A secret to
// add is read from a file or standard input, never from the command line
// (where shell history and ps would keep it).
func secretsCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "secrets", Short: "Manage the signing secrets that open the callbacks (ledgerd's keyring)"})

	list := &cobra.Command{Use: "list", Short: "List the signing secrets, active and retired, newest first", Args: cli.NoArgs}
	ol := adminFlags(list, true)
	list.RunE = adminRun(ol, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		l, _, err := c.SigningSecrets.List(ctx)
		if err != nil {
			return err
		}
		if ol.json {
			return printJSON(cmd.OutOrStdout(), l)
		}
		rows := make([][]string, 0, len(l.SigningSecrets))
		for _, s := range l.SigningSecrets {
			retired := "-"
			if s.RetiredOn != nil {
				retired = s.RetiredOn.UTC().Format(time.RFC3339)
			}
			rows = append(rows, []string{s.SecretID, s.Fingerprint, s.KEKFingerprint, s.AddedOn.UTC().Format(time.RFC3339), retired})
		}
		table(cmd.OutOrStdout(), "SECRET ID\tFINGERPRINT\tKEK\tADDED\tRETIRED", rows)
		return nil
	})

	add := &cobra.Command{
		Use:   "add",
		Short: "Add a signing secret of your own to the keyring",
		Long: `Add a signing secret (the Base64 of 32 bytes) to the keyring, read from
--from-file or standard input: never from the command line, where shell
history and ps would keep it.`,
		Args: cli.NoArgs,
	}
	oa := adminFlags(add, true)
	var from string
	add.Flags().StringVar(&from, "from-file", "-", "file holding the Base64 secret (- for standard input)")
	add.RunE = adminRun(oa, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		secret, err := readSecret(cmd.InOrStdin(), from)
		if err != nil {
			return err
		}
		out, resp, err := c.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Secret: secret})
		if err != nil {
			return err
		}
		return printSecret(cmd.OutOrStdout(), oa, out, resp)
	})

	gen := &cobra.Command{Use: "generate", Short: "Have ledgerd generate a signing secret, shown once", Args: cli.NoArgs}
	og := adminFlags(gen, true)
	gen.RunE = adminRun(og, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		out, resp, err := c.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Generate: true})
		if err != nil {
			return err
		}
		return printSecret(cmd.OutOrStdout(), og, out, resp)
	})

	retire := &cobra.Command{Use: "retire SECRET_ID", Short: "Retire a signing secret: it no longer opens callbacks", Args: cli.ExactArgs(1)}
	or := adminFlags(retire, false)
	retire.RunE = adminRun(or, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		if _, err := c.SigningSecrets.Retire(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "secret %s retired\n", args[0])
		return nil
	})

	g.AddCommand(list, add, gen, retire, rekeyCmd(), kekFingerprintCmd())
	return g
}

func printSecret(w io.Writer, o *adminOpts, out *adminapi.SigningSecretCreated, resp *adminapi.Response) error {
	if o.json {
		return printJSON(w, out)
	}
	verb := "added"
	if resp.StatusCode == http.StatusOK {
		verb = "was already active"
	}
	fmt.Fprintf(w, "secret %s %s (fingerprint %s)\n", out.SecretID, verb, out.Fingerprint)
	if out.Secret != "" {
		fmt.Fprintf(w, "secret (shown once, store it now): %s\n", out.Secret)
	}
	return nil
}

func readSecret(stdin io.Reader, path string) (string, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("no secret read from %s: it should hold the Base64 of 32 bytes", path)
	}
	return line, nil
}
