package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
)

// The bank's controls: tokens, the audit trail, dual control.

func tokensCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "tokens", Short: "Create, list and revoke named admin tokens (scope admin)"})
	create := &cobra.Command{
		Use:   "create NAME --scope SCOPE…",
		Short: "Create a named token with scopes; it is printed once",
		Long: `Create a named admin token (POST /v1/tokens). The token is printed once and
stored nowhere: keep it as a secret. Scopes: read, operate, adjust, approve,
secrets, admin, audit, metrics.`,
		Example: `  ledgerctl tokens create alice --scope read --scope adjust
  ledgerctl tokens create ci-bot --scope operate --expires 2026-12-31T00:00:00Z`,
		Args: cli.ExactArgs(1),
	}
	oc := adminFlags(create, true)
	var scopes []string
	var expires string
	create.Flags().StringArrayVar(&scopes, "scope", nil, "a scope of the token (repeat for several)")
	create.Flags().StringVar(&expires, "expires", "", "RFC 3339 time when the token stops working (default never)")
	create.RunE = adminRun(oc, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		req := &adminapi.TokenCreateRequest{Name: args[0], Scopes: scopes}
		if expires != "" {
			t, err := time.Parse(time.RFC3339, expires)
			if err != nil {
				return cli.Usagef("--expires %q is not an RFC 3339 time", expires)
			}
			req.ExpiresOn = &t
		}
		tok, _, err := c.Tokens.Create(ctx, req)
		if err != nil {
			return err
		}
		if oc.json {
			return printJSON(cmd.OutOrStdout(), tok)
		}
		table(cmd.OutOrStdout(), "TOKEN_ID\tNAME\tSCOPES\tTOKEN", [][]string{{tok.TokenID, tok.Name, strings.Join(tok.Scopes, ","), tok.Token}})
		fmt.Fprintln(cmd.ErrOrStderr(), "the token is shown this once: store it as a secret")
		return nil
	})
	list := &cobra.Command{Use: "list", Short: "List every token, never its value", Args: cli.NoArgs}
	ol := adminFlags(list, true)
	list.RunE = adminRun(ol, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		l, _, err := c.Tokens.List(ctx)
		if err != nil {
			return err
		}
		if ol.json {
			return printJSON(cmd.OutOrStdout(), l)
		}
		rows := make([][]string, 0, len(l.Tokens))
		for _, t := range l.Tokens {
			rows = append(rows, []string{t.TokenID, t.Name, strings.Join(t.Scopes, ","), t.CreatedOn.UTC().Format(time.RFC3339),
				stamp(t.ExpiresOn), stamp(t.RevokedOn)})
		}
		table(cmd.OutOrStdout(), "TOKEN_ID\tNAME\tSCOPES\tCREATED\tEXPIRES\tREVOKED", rows)
		return nil
	})
	revoke := &cobra.Command{Use: "revoke TOKEN_ID", Short: "Revoke a token: every replica refuses it from its next request", Args: cli.ExactArgs(1)}
	or := adminFlags(revoke, false)
	revoke.RunE = adminRun(or, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		if _, err := c.Tokens.Revoke(ctx, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
		return nil
	})
	g.AddCommand(create, list, revoke)
	return g
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func auditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read, export and verify the audit trail (scope audit)",
		Long: `Print the audit trail (GET /v1/audit), oldest first: every admin write and
every refused request, with its actor, scope, route, target and status.
"ledgerctl audit export" writes it as JSON lines with the chain's hashes for an
archive; "ledgerctl audit verify FILE" checks such a file offline.`,
		Args: cli.NoArgs,
	}
	o := adminFlags(cmd, true)
	opts := adminapi.AuditListOptions{}
	var from, to string
	cmd.Flags().StringVar(&opts.Actor, "actor", "", "only this actor's records (a token ID or name)")
	cmd.Flags().StringVar(&from, "from", "", "records at or after this RFC 3339 time")
	cmd.Flags().StringVar(&to, "to", "", "records before this RFC 3339 time")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		var err error
		if opts.From, err = optionalTime("from", from); err != nil {
			return err
		}
		if opts.To, err = optionalTime("to", to); err != nil {
			return err
		}
		var recs []adminapi.AuditRecord
		for r, err := range c.Audit.ListIter(ctx, &opts) {
			if err != nil {
				return err
			}
			recs = append(recs, *r)
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), adminapi.AuditList{Records: append([]adminapi.AuditRecord{}, recs...)})
		}
		rows := make([][]string, 0, len(recs))
		for _, r := range recs {
			rows = append(rows, []string{strconv.FormatInt(r.Seq, 10), r.RecordedAt.UTC().Format(time.RFC3339), r.ActorName + " (" + r.ActorID + ")",
				r.Scope, r.Method + " " + r.Route, r.Target, strconv.Itoa(r.Status), r.Source})
		}
		table(cmd.OutOrStdout(), "SEQ\tAT\tACTOR\tSCOPE\tROUTE\tTARGET\tSTATUS\tSOURCE", rows)
		return nil
	})
	cmd.AddCommand(auditExportCmd(), auditVerifyCmd())
	return cmd
}

func optionalTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, cli.Usagef("--%s %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}

func auditExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the audit trail as JSON lines, with its hashes, for an archive",
		Long: `Write every record of the audit trail (after --after SEQ) as one JSON object
per line, with prevHash and hash, to --output (default stdout). Verify the file
with "ledgerctl audit verify"; keep the last hash it prints outside the
database: the next export, from the seq after it, must start with that hash as
its prevHash.`,
		Example: `  ledgerctl audit export --output audit-2026-03.jsonl`,
		Args:    cli.NoArgs,
	}
	o := adminFlags(cmd, false)
	var output string
	var after int64
	cmd.Flags().StringVar(&output, "output", "", "the file to write (default stdout)")
	cmd.Flags().Int64Var(&after, "after", 0, "only the records after this seq")
	o.timeout = 15 * time.Minute
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		var w io.Writer = cmd.OutOrStdout()
		if output != "" {
			f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for r, err := range c.Audit.ListIter(ctx, &adminapi.AuditListOptions{Limit: 100}) {
			if err != nil {
				return err
			}
			if r.Seq <= after {
				continue
			}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	return cmd
}

func auditVerifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Verify an exported audit trail offline",
		Long: `Recompute every record's hash and check every link of an export (JSON lines,
"ledgerctl audit export"), without the admin API. It prints the first and last
seq, the hash the file starts after, and the last hash; exit 1 and the first
break when the chain is broken.`,
		Args: cli.ExactArgs(1),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		var recs []adminapi.AuditRecord
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for line := 1; sc.Scan(); line++ {
			var r adminapi.AuditRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return fmt.Errorf("%s:%d: not an audit record: %v", args[0], line, err)
			}
			recs = append(recs, r)
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("%s holds no audit record", args[0])
		}
		if err := adminapi.VerifyAuditChain(recs); err != nil {
			return fmt.Errorf("%s: the chain is broken: %w", args[0], err)
		}
		first, last := recs[0], recs[len(recs)-1]
		fmt.Fprintf(cmd.OutOrStdout(), "records %d to %d verify\nstarts after hash %s\nlast hash %s\n", first.Seq, last.Seq, first.PrevHash, last.Hash)
		return nil
	}
	return cmd
}

func adjustmentsCmd() *cobra.Command {
	g := cli.Group(&cobra.Command{Use: "adjustments", Short: "List, approve and reject adjustments under dual control"})
	list := &cobra.Command{Use: "list", Short: "List adjustments under dual control, newest first", Args: cli.NoArgs}
	ol := adminFlags(list, true)
	opts := adminapi.PendingAdjustmentListOptions{}
	list.Flags().StringVar(&opts.AccountID, "account", "", "only this account's")
	list.Flags().StringVar(&opts.Status, "status", "", "pending, posted, rejected or expired")
	list.RunE = adminRun(ol, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		page := adminapi.PendingAdjustmentList{Adjustments: []adminapi.PendingAdjustment{}}
		for p, err := range c.Adjustments.ListIter(ctx, &opts) {
			if err != nil {
				return err
			}
			page.Adjustments = append(page.Adjustments, *p)
		}
		if ol.json {
			return printJSON(cmd.OutOrStdout(), page)
		}
		printPending(cmd.OutOrStdout(), page.Adjustments...)
		return nil
	})
	g.AddCommand(list, pendingCmd("get", "Show an adjustment under dual control", nil),
		pendingCmd("approve", "Approve and post an adjustment (scope approve; not its maker)", (*adminapi.AdjustmentsService).Approve),
		pendingCmd("reject", "Reject an adjustment (scope approve; or withdraw your own)", (*adminapi.AdjustmentsService).Reject))
	return g
}

// pendingCmd is get (decide nil), approve or reject of one adjustment.
func pendingCmd(name, short string, decide func(*adminapi.AdjustmentsService, context.Context, string, *adminapi.AdjustmentDecisionRequest) (*adminapi.PendingAdjustment, *adminapi.Response, error)) *cobra.Command {
	cmd := &cobra.Command{Use: name + " ADJUSTMENT_ID", Short: short, Args: cli.ExactArgs(1)}
	o := adminFlags(cmd, true)
	var note string
	if decide != nil {
		cmd.Flags().StringVar(&note, "note", "", "why (optional, recorded with the decision)")
	}
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		var p *adminapi.PendingAdjustment
		var err error
		if decide == nil {
			p, _, err = c.Adjustments.Get(ctx, args[0])
		} else {
			p, _, err = decide(c.Adjustments, ctx, args[0], &adminapi.AdjustmentDecisionRequest{Note: note})
		}
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), p)
		}
		printPending(cmd.OutOrStdout(), *p)
		return nil
	})
	return cmd
}

func printPending(w io.Writer, ps ...adminapi.PendingAdjustment) {
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, []string{p.AdjustmentID, p.Status, p.AccountID, p.Amount.String() + " " + p.Currency, p.IdempotencyKey,
			p.RequestedBy.Name, p.ExpiresAt.UTC().Format(time.RFC3339), p.TransactionID})
	}
	table(w, "ADJUSTMENT\tSTATUS\tACCOUNT\tAMOUNT\tKEY\tMAKER\tEXPIRES\tTRANSACTION", rows)
}
