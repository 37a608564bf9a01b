package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
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

const reconcileUsage = `usage: ledgerctl reconcile [--fix] [--json] [--admin URL]

Runs one reconciliation through the admin API (POST /v1/reconciliation/runs)
and prints its findings (KIND SEVERITY SUBJECT DETAIL FIXED), or the report's
JSON with --json. --fix applies missed_capture and missed_release.

exit status:
  0  clean: no unfixed finding
  1  an unfixed warning, no unfixed critical
  2  an unfixed critical finding
  3  error: bad flags, admin API unreachable or answering an error

flags:
`

type reconcileFinding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Subject  string `json:"subject"`
	Detail   string `json:"detail"`
	Fixed    bool   `json:"fixed"`
}

type reconcileReport struct {
	RunID      string             `json:"runID"`
	StartedOn  string             `json:"startedOn"`
	FinishedOn string             `json:"finishedOn"`
	Status     string             `json:"status"`
	Findings   []reconcileFinding `json:"findings"`
}

// runReconcile runs `ledgerctl reconcile [--fix] [--json]`.
func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newFlagSet("reconcile", stderr)
	fix := fs.Bool("fix", false, "apply missed_capture and missed_release")
	fs.DurationVar(&af.timeout, "timeout", 15*time.Minute, "how long to wait for the run (it goes on in ledgerd if this passes)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), reconcileUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return reconcileClean
	}
	if err != nil {
		return reconcileError
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "ledgerctl reconcile: unexpected argument %q\n", pos[0])
		fs.Usage()
		return reconcileError
	}
	var rep reconcileReport
	raw, err := af.call(ctx, "POST", "/v1/reconciliation/runs", map[string]bool{"fix": *fix}, &rep)
	if err != nil {
		fail(stderr, err)
		return reconcileError
	}
	if rep.RunID == "" {
		fmt.Fprintln(stderr, "ledgerctl: the admin API's answer is not a reconciliation report")
		return reconcileError
	}
	// The verdict comes from the findings themselves, not the status
	// member, so that it cannot disagree with what is printed.
	code := reconcileClean
	fixed := 0
	for _, f := range rep.Findings {
		switch {
		case f.Fixed:
			fixed++
		case f.Severity == "warning":
			code = max(code, reconcileWarning)
		default: // critical, or a severity this ledgerctl does not know
			code = reconcileCritical
		}
	}
	if af.json {
		printJSON(stdout, raw)
		return code
	}
	verdict := map[int]string{reconcileClean: "clean", reconcileWarning: "warning", reconcileCritical: "critical"}[code]
	fmt.Fprintf(stdout, "run %s: %s, %d findings, %d fixed\n", rep.RunID, verdict, len(rep.Findings), fixed)
	if len(rep.Findings) == 0 {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tSEVERITY\tSUBJECT\tDETAIL\tFIXED")
	for _, f := range rep.Findings {
		yn := "no"
		if f.Fixed {
			yn = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(f.Kind), cell(f.Severity), cell(f.Subject), cell(f.Detail), yn)
	}
	tw.Flush()
	return code
}

// cell keeps a value on one line and in one column of the table.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
