package store

import (
	"strings"
	"time"
)

// ReconcileQuery is a query of a reconciliation with example arguments.
type ReconcileQuery struct {
	SQL  string
	Args []any
}

// ReconcileSQL returns every query a reconciliation runs (the invariant
// checks by kind, the other checks and the comparison's reads), with
// arguments as a run gives them at now.
func ReconcileSQL(now time.Time) map[string]ReconcileQuery {
	out := map[string]ReconcileQuery{}
	for _, c := range invariantChecks {
		out[c.kind] = ReconcileQuery{SQL: c.sql}
	}
	cutoff := now.Add(-264 * time.Hour)
	out["stale_holds"] = ReconcileQuery{staleHoldsSQL, []any{cutoff, now}}
	out["orphan_captures"] = ReconcileQuery{orphansSQL, []any{"capture"}}
	out["duplicate_credit_attempts"] = ReconcileQuery{duplicateCreditAttemptsSQL, nil}
	out["candidates"] = ReconcileQuery{heldBeforeSQL, []any{cutoff}}
	out["recipients"] = ReconcileQuery{recipientsSQL, []any{now.Add(-31 * 24 * time.Hour)}}
	out["holds_by_payout"] = ReconcileQuery{holdsByPayoutSQL, []any{[]string{"pay_p1", "pay_p2", "pay_p3"}}}
	out["credit_conflicts"] = ReconcileQuery{creditConflictsSQL, nil}
	out["customers"] = ReconcileQuery{customersSQL, []any{"", 500}}
	return out
}

// ReconcileSinceSQL returns every query of a run from a checkpoint whose
// snapshot and xmin are given, with arguments as a run gives them at now.
func ReconcileSinceSQL(now time.Time, snapshot, xmin string, accounts []string) map[string]ReconcileQuery {
	out := map[string]ReconcileQuery{}
	for _, c := range incrementalChecks {
		args := []any{snapshot, xmin}
		if strings.Contains(c.sql, "$3") {
			zero := make([]string, len(accounts))
			for i := range zero {
				zero[i] = "0"
			}
			args = append(args, accounts, zero, zero, zero)
		}
		out[c.kind] = ReconcileQuery{SQL: c.sql, Args: args}
	}
	out["accounts_since"] = ReconcileQuery{touchedAccountsSQL, []any{snapshot, xmin}}
	out["stale_holds"] = ReconcileQuery{staleHoldsOpenSQL, []any{now.Add(-264 * time.Hour), now}}
	out["duplicate_credit_attempts"] = ReconcileQuery{duplicateCreditAttemptsSinceSQL, []any{snapshot, xmin}}
	out["candidates"] = ReconcileQuery{candidatesSinceSQL, []any{snapshot, xmin, now.Add(-264 * time.Hour)}}
	out["recipients"] = ReconcileQuery{recipientsSinceSQL, []any{snapshot, xmin, now.Add(-31 * 24 * time.Hour)}}
	return out
}

// ReconcilePageSQL returns the queries a full run runs a page of owners at
// a time (after, through: the page's range), as of snapshot, with
// arguments as a run gives them at now.
func ReconcilePageSQL(now time.Time, snapshot, after, through string) map[string]ReconcileQuery {
	cutoff := now.Add(-264 * time.Hour)
	return map[string]ReconcileQuery{
		"candidates_page":      {candidatesPageSQL, []any{snapshot, after, false, cutoff, through}},
		"candidates_last_page": {candidatesLastPageSQL, []any{snapshot, through, false, cutoff}},
	}
}
