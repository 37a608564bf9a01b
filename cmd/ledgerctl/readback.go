package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
)

// Reading the ledger back: accounts list, journal transactions|entries,
// statement.

// parseTime reads an RFC 3339 time or a date (midnight UTC), as the admin
// API does; "" is the zero time.
func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, cli.Usagef("--%s %q is neither an RFC 3339 time (2026-03-01T09:30:00Z) nor a date (2026-03-01)", flag, v)
}

// collect gathers every item of an iterator.
func collect[T any](seq iter.Seq2[*T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// morePages tells, on stderr, how to read on.
func morePages(cmd *cobra.Command, what string, hasMore bool, cursor string) {
	if hasMore {
		fmt.Fprintf(cmd.ErrOrStderr(), "more %s: --cursor %s, or --all\n", what, cursor)
	}
}

func accountListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List accounts in accountID order (GET /v1/accounts)",
		Long: `List customer accounts in accountID order (byte order), filtered by
currency, status and owner: one page (--limit, --cursor), or every page with
--all. With --json a page is the API's {accounts, nextCursor, hasMore}.`,
		Example: `  ledgerctl accounts list --currency USD --status frozen
  ledgerctl accounts list --owner alice --all --json`,
		Args: cli.NoArgs,
	}
	o := adminFlags(cmd, true)
	opts := adminapi.AccountListOptions{}
	var all bool
	fs := cmd.Flags()
	fs.StringVar(&opts.Currency, "currency", "", "only accounts in this currency")
	fs.StringVar(&opts.Status, "status", "", "open, frozen or closed")
	fs.StringVar(&opts.OwnerExternalID, "owner", "", "only this owner's accounts")
	fs.StringVar(&opts.OwnerExternalID, "owner-external-id", "", "same as --owner")
	fs.IntVar(&opts.Limit, "limit", 25, "page size, 1 to 100")
	fs.StringVar(&opts.Cursor, "cursor", "", "nextCursor of the previous page")
	fs.BoolVar(&all, "all", false, "follow nextCursor through every page")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		page := &adminapi.AccountList{}
		var err error
		if all {
			page.Accounts, err = collect(c.Accounts.ListIter(ctx, &opts))
		} else {
			page, _, err = c.Accounts.List(ctx, &opts)
		}
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), page)
		}
		rows := make([][]string, 0, len(page.Accounts))
		for _, a := range page.Accounts {
			rows = append(rows, []string{a.AccountID, a.OwnerExternalID, a.Currency, a.Balance.String(), a.Held.String(), a.Available.String(), a.Status})
		}
		table(cmd.OutOrStdout(), "ACCOUNT\tOWNER\tCURRENCY\tBALANCE\tHELD\tAVAILABLE\tSTATUS", rows)
		morePages(cmd, "accounts", page.HasMore, page.NextCursor)
		return nil
	})
	return cmd
}

// journalFlags are the flags of the journal listings.
type journalFlags struct {
	opts     adminapi.JournalListOptions
	from, to string
	all      bool
}

func (j *journalFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&j.opts.AccountID, "account", "", "only this account's (a customer account, or settlement:USD, core:USD, …)")
	fs.StringVar(&j.opts.AccountID, "account-id", "", "same as --account")
	fs.StringVar(&j.from, "from", "", "created at or after: an RFC 3339 time or a date (midnight UTC)")
	fs.StringVar(&j.to, "to", "", "created before: an RFC 3339 time or a date (midnight UTC)")
	fs.IntVar(&j.opts.Limit, "limit", 25, "page size, 1 to 100")
	fs.StringVar(&j.opts.Cursor, "cursor", "", "nextCursor of the previous page")
	fs.BoolVar(&j.all, "all", false, "follow nextCursor through every page")
}

func (j *journalFlags) options() (*adminapi.JournalListOptions, error) {
	var err error
	if j.opts.From, err = parseTime("from", j.from); err != nil {
		return nil, err
	}
	if j.opts.To, err = parseTime("to", j.to); err != nil {
		return nil, err
	}
	return &j.opts, nil
}

// journalCmd returns the journal command group: transactions and entries.
func journalCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{
		Use:   "journal",
		Short: "Read the journal: transactions and their double entries",
		Long: `Read the journal, oldest first, by account and time range. Each transaction
is one transfer between a customer account and a system account
(settlement:<CUR> for captures and credits, core:<CUR> for adjustments),
as two entries that sum to zero. A transaction is visible once it
commits, up to the request timeout after its time: a reader following the
journal reads up to a few minutes ago (--to) and moves on.`,
	})
	g.AddCommand(journalTransactionsCmd(), journalEntriesCmd())
	return g
}

// journalTransactionsCmd returns journal transactions, which lists journal
// transactions with their entries.
func journalTransactionsCmd() *cobra.Command {
	tx := &cobra.Command{
		Use:   "transactions",
		Short: "List journal transactions, oldest first (GET /v1/journal/transactions)",
		Example: `  ledgerctl journal transactions --from 2026-03-01 --to 2026-04-01 --all --json
  ledgerctl journal transactions --account acc-alice`,
		Args: cli.NoArgs,
	}
	ot := adminFlags(tx, true)
	var jt journalFlags
	jt.register(tx)
	tx.RunE = adminRun(ot, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		opts, err := jt.options()
		if err != nil {
			return err
		}
		page := &adminapi.JournalTransactionList{}
		if jt.all {
			page.Transactions, err = collect(c.Journal.ListTransactionsIter(ctx, opts))
		} else {
			page, _, err = c.Journal.ListTransactions(ctx, opts)
		}
		if err != nil {
			return err
		}
		if ot.json {
			return printJSON(cmd.OutOrStdout(), page)
		}
		table(cmd.OutOrStdout(), "CREATED\tTRANSACTION\tKIND\tACCOUNT\tAMOUNT\tCURRENCY\tREFERENCE", transactionRows(page.Transactions))
		morePages(cmd, "transactions", page.HasMore, page.NextCursor)
		return nil
	})
	return tx
}

// transactionRows lays transactions out as table rows: one per entry, the
// transaction's own columns on its first.
func transactionRows(txs []adminapi.JournalTransaction) [][]string {
	rows := make([][]string, 0, 2*len(txs))
	for _, t := range txs {
		for i, e := range t.Entries {
			row := []string{"", "", "", e.AccountID, e.Amount.String(), "", ""}
			if i == 0 {
				row = []string{t.CreatedAt.UTC().Format(adminapi.TimestampFormat), t.TransactionID, t.Kind, e.AccountID,
					e.Amount.String(), t.Currency, t.Reference}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// journalEntriesCmd returns journal entries, which lists journal entries,
// of one account or of all.
func journalEntriesCmd() *cobra.Command {
	en := &cobra.Command{
		Use:   "entries",
		Short: "List journal entries, oldest first (GET /v1/journal/entries)",
		Long: `List journal entries, oldest first: with --account, that account's (one per
transaction; amounts signed, positive a credit); without, every entry, two
per transaction (the customer account's, then the system account's).`,
		Example: `  ledgerctl journal entries --account acc-alice --from 2026-03-01
  ledgerctl journal entries --account core:USD --all --json`,
		Args: cli.NoArgs,
	}
	oe := adminFlags(en, true)
	var je journalFlags
	je.register(en)
	en.RunE = adminRun(oe, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		opts, err := je.options()
		if err != nil {
			return err
		}
		page := &adminapi.JournalEntryList{}
		if je.all {
			page.Entries, err = collect(c.Journal.ListEntriesIter(ctx, opts))
		} else {
			page, _, err = c.Journal.ListEntries(ctx, opts)
		}
		if err != nil {
			return err
		}
		if oe.json {
			return printJSON(cmd.OutOrStdout(), page)
		}
		table(cmd.OutOrStdout(), "CREATED\tTRANSACTION\tACCOUNT\tAMOUNT\tCURRENCY\tKIND\tCONTRA\tREFERENCE\tMEMO", entryRows(page.Entries))
		morePages(cmd, "entries", page.HasMore, page.NextCursor)
		return nil
	})
	return en
}

// entryRows lays journal entries out as table rows, one per entry.
func entryRows(entries []adminapi.JournalEntry) [][]string {
	rows := make([][]string, 0, len(entries))
	for _, e := range entries {
		rows = append(rows, []string{e.CreatedAt.UTC().Format(adminapi.TimestampFormat), e.TransactionID, e.AccountID,
			e.Amount.String(), e.Currency, e.Kind, e.ContraAccountID, e.Reference, e.Memo})
	}
	return rows
}

// statementTimeout bounds a statement download: it is streamed, and may be
// large.
const statementTimeout = 10 * time.Minute

func statementCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "statement [ACCOUNT_ID] --from FROM --to TO",
		Short: "Export an account's statement for a period, as CSV or camt.053 XML",
		Long: `Export an account's statement for the period [--from, --to): the opening
balance, every entry, the closing balance (GET
/v1/accounts/{accountID}/statement). --format csv (the default) writes RFC
4180 CSV; --format camt053 an ISO 20022 camt.053.001.08 document. The
statement goes to standard output, or to --output FILE: written to a
temporary file beside it and renamed when complete, so that a failed
download leaves no partial statement behind.`,
		Example: `  ledgerctl statement acc-alice --from 2026-03-01 --to 2026-04-01 > march.csv
  ledgerctl statement acc-alice --from 2026-03-01 --to 2026-04-01 --format camt053 --output march.xml`,
		Args: cli.MaxArgs(1),
	}
	o := adminFlags(cmd, false)
	var id, from, to, format, output string
	fs := cmd.Flags()
	fs.StringVar(&id, "account-id", "", "the account (instead of the ACCOUNT_ID argument)")
	fs.StringVar(&from, "from", "", "start of the period, included: an RFC 3339 time or a date (midnight UTC); required")
	fs.StringVar(&to, "to", "", "end of the period, excluded; required")
	fs.StringVar(&format, "format", adminapi.StatementCSV, "csv or camt053")
	fs.StringVarP(&output, "output", "o", "", "write to this file instead of standard output")
	fs.DurationVar(&o.timeout, "timeout", statementTimeout, "give up after this long")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		accountID, err := oneOf(args, 0, "account-id", id, "account ID")
		if err != nil {
			return err
		}
		if from == "" || to == "" {
			return cli.Usagef("--from and --to are required: the statement's period")
		}
		opts := &adminapi.StatementOptions{Format: format}
		if opts.From, err = parseTime("from", from); err != nil {
			return err
		}
		if opts.To, err = parseTime("to", to); err != nil {
			return err
		}
		if output == "" {
			_, err = c.Accounts.Statement(ctx, accountID, opts, cmd.OutOrStdout())
			return err
		}
		return writeAtomically(output, func(w io.Writer) error {
			_, err := c.Accounts.Statement(ctx, accountID, opts, w)
			return err
		})
	})
	return cmd
}

// writeAtomically writes a file by way of a temporary file in the same
// directory, renamed over path only when write succeeded. The file is
// readable by its owner only (0600): a statement is a customer's.
func writeAtomically(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename: a no-op
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
