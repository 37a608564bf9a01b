package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
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
and print its findings (KIND SEVERITY SUBJECT DETAIL FIXED), or the report's
JSON with --json. --fix applies missed_capture and missed_release. The run
goes on in ledgerd (15 minutes at most) if --timeout passes first.`,
		Args:        cli.NoArgs,
		Annotations: map[string]string{cli.UsageExitCode: "3"},
	}
	cli.ExitStatus(cmd, `0  clean: no unfixed finding
1  an unfixed warning, no unfixed critical finding
2  an unfixed critical finding
3  error: bad flags, admin API unreachable or answering an error`)
	o := adminFlags(cmd, true)
	var fix bool
	cmd.Flags().BoolVar(&fix, "fix", false, "apply missed_capture and missed_release")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 15*time.Minute, "how long to wait for the run")
	run := adminRun(o, func(ctx context.Context, c *adminapi.Client, cmd *cobra.Command, _ []string) error {
		rep, _, err := c.Reconciliation.Run(ctx, &adminapi.ReconciliationRunRequest{Fix: fix})
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
			printReport(cmd, rep, code)
		}
		if code != reconcileClean {
			return &cli.ExitError{Code: code}
		}
		return nil
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		var ee *cli.ExitError
		var ue *cli.UsageError
		if err == nil || errors.As(err, &ee) || errors.As(err, &ue) {
			return err
		}
		return &cli.ExitError{Code: reconcileError, Err: err}
	}
	return cmd
}

// verdict comes from the findings themselves, not the status member, so
// that it cannot disagree with what is printed.
func verdict(findings []adminapi.Finding) int {
	code := reconcileClean
	for _, f := range findings {
		switch {
		case f.Fixed:
		case f.Severity == adminapi.SeverityWarning:
			code = max(code, reconcileWarning)
		default: // critical, or a severity this ledgerctl does not know
			code = reconcileCritical
		}
	}
	return code
}

func printReport(cmd *cobra.Command, rep *adminapi.ReconciliationRun, code int) {
	fixed := 0
	rows := make([][]string, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		yn := "no"
		if f.Fixed {
			fixed++
			yn = "yes"
		}
		rows = append(rows, []string{f.Kind, f.Severity, f.Subject, f.Detail, yn})
	}
	name := map[int]string{reconcileClean: "clean", reconcileWarning: "warning", reconcileCritical: "critical"}[code]
	fmt.Fprintf(cmd.OutOrStdout(), "run %s: %s, %d findings, %d fixed\n", rep.RunID, name, len(rep.Findings), fixed)
	if len(rows) > 0 {
		table(cmd.OutOrStdout(), "KIND\tSEVERITY\tSUBJECT\tDETAIL\tFIXED", rows)
	}
}
