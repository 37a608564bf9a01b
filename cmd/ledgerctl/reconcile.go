package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/ledger"
)

// Exit codes of `ledgerctl reconcile`. 1 and 2 are the run's verdict, so an
// error (bad flags, the admin API unreachable or answering an error) is 3,
// never taken for a verdict by a script.
const (
	reconcileClean    = 0
	reconcileWarning  = 1
	reconcileCritical = 2
	reconcileError    = 3
)

func reconcileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Run a reconciliation and print its findings",
		Long: `Run one reconciliation through the admin API (POST /v1/reconciliation/runs)
and print its new and unacknowledged findings (FINDING KIND SEVERITY SUBJECT
DETAIL FIXED), all of them with --all, or the report's JSON with --json.
--fix applies missed_capture and missed_release. A run starts from the last
checkpoint (what is new since it) unless --full, which reads all of history
(the first run always does). The run goes on in ledgerd
(15 minutes at most) if --timeout passes first. One run at a time across
replicas: while another runs, the admin API answers 409 (exit 3).
"ledgerctl reconcile ack FINDING --note TEXT" acknowledges a finding: later
runs report it acknowledged and it no longer counts towards the exit status.`,
		Args:        cli.NoArgs,
		Annotations: map[string]string{cli.UsageExitCode: "3"},
	}
	cli.ExitStatus(cmd, `0  clean: no unfixed, unacknowledged finding
1  an unfixed, unacknowledged warning, no such critical finding
2  an unfixed, unacknowledged critical finding
3  error: bad flags, admin API unreachable or answering an error (409: a run is in progress)`)
	o := adminFlags(cmd, true)
	var fix, all, full bool
	cmd.Flags().BoolVar(&fix, "fix", false, "apply missed_capture and missed_release")
	cmd.Flags().BoolVar(&full, "full", false, "read all of history instead of starting from the last checkpoint")
	cmd.Flags().BoolVar(&all, "all", false, "print acknowledged findings too (the history); the exit status counts only unacknowledged ones")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 15*time.Minute, "how long to wait for the run")
	run := adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		rep, _, err := c.Reconciliation.Run(ctx, &adminapi.ReconciliationRunRequest{Fix: fix, Full: full})
		if err != nil {
			return err
		}
		if rep.RunID == "" {
			return errors.New("the admin API's answer is not a reconciliation report")
		}
		code := verdict(rep.Findings)
		out := cmd.OutOrStdout()
		if o.json {
			if err := printJSON(out, rep); err != nil {
				return err
			}
		} else {
			printReport(cmd, rep, code, all)
		}
		if code != reconcileClean {
			return &cli.ExitError{Code: code}
		}
		return nil
	})
	cmd.RunE = cli.WithErrorCode(reconcileError, run)
	cmd.AddCommand(ackCmd())
	return cmd
}

func ackCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ack FINDING",
		Short: "Acknowledge a reconciliation finding with a note",
		Long: `Acknowledge a finding by its FINDING ID (the first column of ledgerctl reconcile,
findingID in its JSON): later runs report it acknowledged, and it no longer
counts towards their status and exit code, until it is resolved (a run no
longer sees it); seen again after that, it is new.`,
		Args: cli.ExactArgs(1),
	}
	cli.ExitStatus(cmd, `0  acknowledged
1  error: bad flags, unknown finding, admin API unreachable or answering an error`)
	o := adminFlags(cmd, true)
	var note string
	cmd.Flags().StringVar(&note, "note", "", "why the finding needs no further action (required)")
	cmd.RunE = adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, args []string) error {
		ack, _, err := c.Reconciliation.Acknowledge(ctx, args[0], note)
		if err != nil {
			return err
		}
		if o.json {
			return printJSON(cmd.OutOrStdout(), ack)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "acknowledged %s (%s %s), first seen by run %s: %s\n",
			ack.FindingID, ack.Kind, ack.Subject, ack.FirstRunID, ack.Note)
		return nil
	})
	return cmd
}

// verdict comes from the findings themselves, not the status member, so
// that it cannot disagree with what is printed.
func verdict(findings []ledger.Finding) int {
	code := reconcileClean
	for _, f := range findings {
		switch {
		case f.Fixed, f.Acknowledged:
		case f.Severity == adminapi.SeverityWarning:
			code = max(code, reconcileWarning)
		default: // critical, or a severity this ledgerctl does not know
			code = reconcileCritical
		}
	}
	return code
}

// printReport prints the run's header and its findings: the unacknowledged
// ones, or all with all (acknowledged ones marked).
func printReport(cmd *cobra.Command, rep *adminapi.ReconciliationRun, code int, all bool) {
	fixed, acked := 0, 0
	rows := make([][]string, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		yn := "no"
		if f.Fixed {
			fixed++
			yn = "yes"
		}
		severity := f.Severity
		switch {
		case f.Acknowledged:
			acked++
			severity += " (acknowledged)"
			if !all {
				continue
			}
		case f.New:
			severity += " (new)"
		}
		rows = append(rows, []string{f.FindingID, f.Kind, severity, f.Subject, f.Detail, yn})
	}
	name := map[int]string{reconcileClean: "clean", reconcileWarning: "warning", reconcileCritical: "critical"}[code]
	fmt.Fprintf(cmd.OutOrStdout(), "run %s: %s, %d findings, %d fixed, %d acknowledged\n", rep.RunID, name, len(rep.Findings), fixed, acked)
	switch {
	case rep.FromCheckpoint != "":
		fmt.Fprintf(cmd.OutOrStdout(), "%s run from checkpoint %s", rep.Mode, rep.FromCheckpoint)
	case rep.Mode != "":
		fmt.Fprintf(cmd.OutOrStdout(), "%s run", rep.Mode)
	}
	if rep.Mode != "" && rep.Checkpoint != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "; wrote checkpoint %s", rep.Checkpoint)
	}
	if rep.Mode != "" {
		fmt.Fprintln(cmd.OutOrStdout())
	}
	if len(rows) > 0 {
		table(cmd.OutOrStdout(), "FINDING\tKIND\tSEVERITY\tSUBJECT\tDETAIL\tFIXED", rows)
	}
}
