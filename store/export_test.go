package store

import "github.com/jackc/pgx/v5/pgxpool"

// CallSQL returns the SQL of each server-side function call, by function.
func CallSQL() map[string]string {
	return map[string]string{
		"cb_authorize": authorizeCall.sql, "cb_capture": captureCall.sql,
		"cb_release": releaseCall.sql, "cb_credit": creditCall.sql,
		"ledger_adjustment_decide": decideCall.sql, "audit_append": appendAuditSQL,
	}
}

// InvariantSQL returns each invariant check's SQL, by kind.
func InvariantSQL() map[string]string {
	out := map[string]string{}
	for _, c := range invariantChecks {
		out[c.kind] = c.sql
	}
	return out
}

// BatchLocksSQL is the statement that locks a group commit batch's
// accounts.
const BatchLocksSQL = batchLocks

// Pool returns db's pool, for tests that hold its connections.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// HoldReadSQL returns the SQL of the reads of open holds, by name.
func HoldReadSQL() map[string]string {
	return map[string]string{"outstanding": outstandingSQL, "listHeld": listHeldSQL}
}
