package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
)

const rootLong = `ledgerctl is the operator CLI of the provider ledger adapter. It drives
ledgerd's admin API (accounts, adjustments, instruments, holds, the
journal, statements, signing secrets, reconciliation, tokens, the audit
trail, dual control), applies schema
migrations, and calls the service's provider API (ledgerctl provider …).

Admin commands reach ledgerd with --admin (env LEDGER_ADMIN_URL, default
http://127.0.0.1:8081) and send --admin-token (env LEDGER_ADMIN_TOKEN) as a
bearer token. Admin and provider commands print an answer as a table, or as
the API's JSON with --output json (-o json; --json on admin commands); the
commands that write a document (statement, audit export) write it as it is,
to --output FILE or stdout. Flags may come before the command words:
ledgerctl --admin URL accounts get ACCOUNT_ID.`

const exitStatus = `0  success
1  the API answered an error, or could not be reached
2  usage error: unknown command, bad flag or arguments`

func newRoot() *cobra.Command {
	root := cli.Group(&cobra.Command{
		Use:     "ledgerctl",
		Short:   "Operator CLI of the provider ledger adapter",
		Long:    rootLong,
		Version: cli.Version(),
	})
	cli.ExitStatus(root, exitStatus)
	root.AddCommand(migrateCmd(), dbURLCmd(), accountsCmd(), adjustCmd(), instrumentsCmd(), holdsCmd(), journalCmd(), statementCmd(),
		secretsCmd(), reconcileCmd(), tokensCmd(), auditCmd(), adjustmentsCmd(), providerCmdTree())
	return root
}

// defaultAdminURL is ledgerd's default admin listener.
const defaultAdminURL = "http://127.0.0.1:8081"

// callTimeout bounds one admin call (reconcile has its own --timeout).
const callTimeout = 30 * time.Second

// adminOpts are the flags of a command that calls the admin API.
type adminOpts struct {
	url, token string
	json       bool
	timeout    time.Duration
}

// adminFlags registers --admin and --admin-token on cmd, and --json when
// the command prints a table.
func adminFlags(cmd *cobra.Command, withJSON bool) *adminOpts {
	o := &adminOpts{timeout: callTimeout}
	fs := cmd.Flags()
	fs.StringVar(&o.url, "admin", defaultAdminURL, "base URL of ledgerd's admin API")
	cli.Env(fs, "admin", "LEDGER_ADMIN_URL")
	fs.StringVar(&o.token, "admin-token", "", "bearer token of the admin API")
	cli.Env(fs, "admin-token", "LEDGER_ADMIN_TOKEN")
	if withJSON {
		fs.BoolVar(&o.json, "json", false, "print the API's JSON instead of a table (--output json)")
		cli.OutputFlag(fs, &o.json)
	}
	return o
}

// client returns an admin API client and a context bounded by the timeout.
func (o *adminOpts) client(ctx context.Context) (*adminapi.Client, context.Context, context.CancelFunc, error) {
	c, err := adminapi.NewClient(o.url, adminapi.WithToken(o.token), adminapi.WithUserAgent("ledgerctl/1"))
	if err != nil {
		return nil, nil, nil, cli.Usagef("--admin %q is not an http(s) URL (the admin listener of ledgerd, e.g. %s)", o.url, defaultAdminURL)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	return c, ctx, cancel, nil
}

// adminRun wraps a command body that calls the admin API: errors get their
// next step.
func adminRun(o *adminOpts, body func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, ctx, cancel, err := o.client(cmd.Context())
		if err != nil {
			return err
		}
		defer cancel()
		return cli.AdminAPI.Explain(body(ctx, c, cmd, args))
	}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// table writes a header and rows, aligned.
func table(w io.Writer, header string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		for i, c := range r {
			r[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// cell keeps a value on one line and in one column of a table.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// oneOf returns the value given either as the argument at i or by the flag;
// both given and different is a usage error.
func oneOf(args []string, i int, flagName, flagValue, what string) (string, error) {
	var arg string
	if i < len(args) {
		arg = args[i]
	}
	switch {
	case arg != "" && flagValue != "" && arg != flagValue:
		return "", cli.Usagef("%s given twice: %q and --%s %q", what, arg, flagName, flagValue)
	case arg != "":
		return arg, nil
	case flagValue != "":
		return flagValue, nil
	}
	return "", cli.Usagef("give the %s as an argument or with --%s", what, flagName)
}

func accountsCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "accounts", Short: "Create, read, list, freeze, unfreeze and close accounts"})
	g.AddCommand(accountCreateCmd(), accountGetCmd(), accountListCmd())
	for _, s := range []struct{ name, status, short string }{
		{"freeze", adminapi.AccountFrozen, "Freeze an account: new holds refused, adjustments allowed"},
		{"unfreeze", adminapi.AccountOpen, "Open a frozen account again"},
		{"close", adminapi.AccountClosed, "Close an account, for good: holds placed before can still settle"},
	} {
		g.AddCommand(accountStatusCmd(s.name, s.status, s.short))
	}
	return g
}

func printAccount(w io.Writer, o *adminOpts, a *adminapi.Account) error {
	if o.json {
		return printJSON(w, a)
	}
	table(w, "ACCOUNT\tOWNER\tCURRENCY\tBALANCE\tHELD\tAVAILABLE\tSTATUS",
		[][]string{{a.AccountID, a.OwnerExternalID, a.Currency, a.Balance.String(), a.Held.String(), a.Available.String(), a.Status}})
	return nil
}

func accountCreateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create [ACCOUNT_ID]",
		Short: "Create an account (POST /v1/accounts)",
		Example: `  ledgerctl accounts create acc-alice --owner alice --currency USD
  ledgerctl accounts create --account-id acc-alice --owner-external-id alice`,
		Args: cli.MaxArgs(1),
	}
	o := adminFlags(cmd, true)
	var id, owner, currency, status string
	fs := cmd.Flags()
	fs.StringVar(&id, "account-id", "", "the account's ID (instead of the ACCOUNT_ID argument)")
	fs.StringVar(&owner, "owner", "", "the owner's externalID at the service (required)")
	fs.StringVar(&owner, "owner-external-id", "", "same as --owner")
	fs.StringVar(&currency, "currency", "USD", "ISO 4217 currency code")
	fs.StringVar(&status, "status", adminapi.AccountOpen, "open or frozen")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		accountID, err := oneOf(args, 0, "account-id", id, "account ID")
		if err != nil {
			return err
		}
		a, _, err := c.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: accountID, OwnerExternalID: owner, Currency: currency, Status: status})
		if err != nil {
			return err
		}
		return printAccount(cmd.OutOrStdout(), o, a)
	})
	return cmd
}

func accountGetCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "get [ACCOUNT_ID]", Short: "Show an account and its balances", Args: cli.MaxArgs(1)}
	o := adminFlags(cmd, true)
	var id string
	cmd.Flags().StringVar(&id, "account-id", "", "the account (instead of the ACCOUNT_ID argument)")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		accountID, err := oneOf(args, 0, "account-id", id, "account ID")
		if err != nil {
			return err
		}
		a, _, err := c.Accounts.Get(ctx, accountID)
		if err != nil {
			return err
		}
		return printAccount(cmd.OutOrStdout(), o, a)
	})
	return cmd
}

func accountStatusCmd(name, status, short string) *cobra.Command {
	cmd := &cobra.Command{Use: name + " [ACCOUNT_ID]", Short: short, Args: cli.MaxArgs(1)}
	o := adminFlags(cmd, true)
	var id string
	cmd.Flags().StringVar(&id, "account-id", "", "the account (instead of the ACCOUNT_ID argument)")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		accountID, err := oneOf(args, 0, "account-id", id, "account ID")
		if err != nil {
			return err
		}
		a, _, err := c.Accounts.Update(ctx, accountID, &adminapi.AccountUpdateRequest{Status: adminapi.Ptr(status)})
		if err != nil {
			return err
		}
		return printAccount(cmd.OutOrStdout(), o, a)
	})
	return cmd
}

func adjustCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "adjust [ACCOUNT_ID AMOUNT]",
		Short: "Credit or debit an account by a signed amount",
		Long: `Credit (positive AMOUNT) or debit (negative AMOUNT) an account: POST
/v1/accounts/{accountID}/adjustments. The idempotency key makes a retry a
replay: the same key with the same amount answers the first transaction.`,
		Example: `  ledgerctl adjust acc-alice 100.00 --key deposit-1 --memo "opening balance"
  ledgerctl adjust acc-alice -5.25 --key fee-1
  ledgerctl adjust --account-id acc-alice --amount 12.00 --idempotency-key z`,
		Args: cli.MaxArgs(2),
	}
	o := adminFlags(cmd, true)
	var id, amount, key, memo string
	fs := cmd.Flags()
	fs.StringVar(&id, "account-id", "", "the account (instead of the first argument)")
	fs.StringVar(&amount, "amount", "", "the signed amount (instead of the second argument)")
	fs.StringVar(&key, "key", "", "idempotency key (required; the same key replays)")
	fs.StringVar(&key, "idempotency-key", "", "same as --key")
	fs.StringVar(&memo, "memo", "", "memo recorded on the journal transaction")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		accountID, err := oneOf(args, 0, "account-id", id, "account ID")
		if err != nil {
			return err
		}
		amt, err := oneOf(args, 1, "amount", amount, "amount")
		if err != nil {
			return err
		}
		if key == "" {
			return cli.Usagef("--key is required (an idempotency key: the same key replays the adjustment)")
		}
		adj, _, err := c.Accounts.Adjust(ctx, accountID, &adminapi.AdjustmentRequest{Amount: adminapi.Ptr(adminapi.Amount(amt)), IdempotencyKey: key, Memo: memo})
		if err != nil {
			return err
		}
		if p := adj.Pending; p != nil {
			// Over the approval threshold: no money moved yet.
			if o.json {
				return printJSON(cmd.OutOrStdout(), p)
			}
			printPending(cmd.OutOrStdout(), *p)
			fmt.Fprintf(cmd.ErrOrStderr(), "awaiting approval by another actor: ledgerctl adjustments approve %s\n", p.AdjustmentID)
			return nil
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), adj)
		}
		table(cmd.OutOrStdout(), "TRANSACTION\tBALANCE\tHELD\tAVAILABLE", [][]string{{adj.TransactionID, adj.Balance.String(), adj.Held.String(), adj.Available.String()}})
		return nil
	})
	return cmd
}

func instrumentsCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "instruments", Short: "Map the tokens the service sends to accounts"})
	cmd := &cobra.Command{
		Use:     "add",
		Short:   "Map a token to an account (POST /v1/instruments)",
		Example: `  ledgerctl instruments add --token card-alice --kind source --account acc-alice`,
		Args:    cli.NoArgs,
	}
	o := adminFlags(cmd, true)
	var token, kind, account string
	fs := cmd.Flags()
	fs.StringVar(&token, "token", "", "the token the service sends as fundingSource or fundingDestination")
	fs.StringVar(&kind, "kind", adminapi.KindSource, "source or destination")
	fs.StringVar(&account, "account", "", "the account the token maps to")
	fs.StringVar(&account, "account-id", "", "same as --account")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		in, _, err := c.Instruments.Add(ctx, &adminapi.Instrument{Token: token, Kind: kind, AccountID: account})
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), in)
		}
		table(cmd.OutOrStdout(), "TOKEN\tKIND\tACCOUNT", [][]string{{in.Token, in.Kind, in.AccountID}})
		return nil
	})
	g.AddCommand(cmd)
	return g
}

func holdsCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "holds", Short: "Read holds"})
	get := &cobra.Command{Use: "get HOLD_REFERENCE", Short: "Show a hold", Args: cli.ExactArgs(1)}
	og := adminFlags(get, true)
	get.RunE = adminRun(og, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		h, _, err := c.Holds.Get(ctx, args[0])
		if err != nil {
			return err
		}
		if og.json {
			return printJSON(cmd.OutOrStdout(), h)
		}
		printHolds(cmd.OutOrStdout(), []adminapi.Hold{*h})
		return nil
	})

	list := &cobra.Command{
		Use:   "list",
		Short: "List holds, newest first",
		Long: `List holds, newest first: one page (--limit, --cursor), or every page with
--all. With --json a page is the API's {holds, nextCursor, hasMore}.`,
		Args: cli.NoArgs,
	}
	ol := adminFlags(list, true)
	opts := adminapi.HoldListOptions{}
	var all bool
	fs := list.Flags()
	fs.StringVar(&opts.PayoutID, "payout", "", "only the hold of this payoutID")
	fs.StringVar(&opts.AccountID, "account", "", "only the holds on this account")
	fs.StringVar(&opts.Status, "status", "", "held, captured or released")
	fs.IntVar(&opts.Limit, "limit", 25, "page size, 1 to 100")
	fs.StringVar(&opts.Cursor, "cursor", "", "nextCursor of the previous page")
	fs.BoolVar(&all, "all", false, "follow nextCursor through every page")
	list.RunE = adminRun(ol, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		page := &adminapi.HoldList{Holds: []adminapi.Hold{}}
		if all {
			for h, err := range c.Holds.ListIter(ctx, &opts) {
				if err != nil {
					return err
				}
				page.Holds = append(page.Holds, *h)
			}
		} else {
			var err error
			if page, _, err = c.Holds.List(ctx, &opts); err != nil {
				return err
			}
		}
		if ol.json {
			return printJSON(cmd.OutOrStdout(), page)
		}
		printHolds(cmd.OutOrStdout(), page.Holds)
		if page.HasMore {
			fmt.Fprintf(cmd.ErrOrStderr(), "more holds: --cursor %s, or --all\n", page.NextCursor)
		}
		return nil
	})
	g.AddCommand(get, list)
	return g
}

func printHolds(w io.Writer, hs []adminapi.Hold) {
	rows := make([][]string, 0, len(hs))
	for _, h := range hs {
		rows = append(rows, []string{h.HoldReference, h.PayoutID, h.AccountID, h.Amount.String() + " " + h.Currency, h.Status,
			h.CaptureReference + h.ReleaseReference, h.PlacedAt.UTC().Format(time.RFC3339)})
	}
	table(w, "HOLD\tPAYOUT\tACCOUNT\tAMOUNT\tSTATUS\tREFERENCE\tPLACED", rows)
}
