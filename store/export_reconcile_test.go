package store

import "time"

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
	out["candidates"] = ReconcileQuery{candidatesSQL, []any{cutoff}}
	out["recipients"] = ReconcileQuery{recipientsSQL, []any{now.Add(-31 * 24 * time.Hour)}}
	out["holds_by_payout"] = ReconcileQuery{holdsByPayoutSQL, []any{[]string{"pay_p1", "pay_p2", "pay_p3"}}}
	out["credit_conflicts"] = ReconcileQuery{creditConflictsSQL, nil}
	out["customers"] = ReconcileQuery{customersSQL, []any{"", 500}}
	return out
}
