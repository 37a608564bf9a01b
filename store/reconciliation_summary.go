package store

import (
	"context"

	"github.com/provider-ledger/adapter/ledger"
)

// lastRunSQL: runs go one at a time (the lease), so the last started of
// the finished runs is the last finished, found through the started_on
// index.
const lastRunSQL = `WITH last AS (
    SELECT run_id, finished_on FROM reconciliation_runs
    WHERE finished_on IS NOT NULL ORDER BY started_on DESC LIMIT 1)
SELECT l.finished_on, f.severity, count(f.run_id)
FROM last l LEFT JOIN reconciliation_findings f ON f.run_id = l.run_id AND NOT f.fixed
    AND NOT EXISTS (SELECT 1 FROM reconciliation_issues i WHERE i.finding_id = f.finding_id AND i.acknowledged_on IS NOT NULL)
GROUP BY l.finished_on, f.severity`

// ledger.LastRun reads the last finished reconciliation run's time and open
// findings.
func (db *DB) LastRun(ctx context.Context) (ledger.LastRun, error) {
	out := ledger.LastRun{Open: map[string]int{}}
	rows, err := db.pool.Query(ctx, lastRunSQL)
	if err != nil {
		return out, interpret(err)
	}
	defer rows.Close()
	for rows.Next() {
		var severity *string
		var n int
		if err := rows.Scan(&out.FinishedOn, &severity, &n); err != nil {
			return out, interpret(err)
		}
		if severity != nil {
			out.Open[*severity] = n
		}
	}
	return out, interpret(rows.Err())
}
