package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// planSeed gives the planner tables of a few thousand rows (statistics,
// not a consistent ledger): with empty tables any plan is cheap, and a
// plan chosen on a few thousand rows is the one of a few hundred thousand.
const planSeed = `
SELECT ledger_ensure_system_accounts('USD', now());
INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at)
SELECT 'p-acct-' || a, 'p-own-' || a, 'USD', now(), now() FROM generate_series(1, 500) a;
INSERT INTO instruments (token, kind, account_id, created_at)
SELECT 'p-dst-' || a, 'destination', 'p-acct-' || a, now() FROM generate_series(1, 500, 2) a;
INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
SELECT 'hold_p' || h, 'pay-p' || h, 'p-acct-' || (h % 500 + 1), 'src', 'USD', 1, now() - h * interval '1 minute'
FROM generate_series(1, 5000) h;
INSERT INTO hold_settlements (hold_reference, status, reference, transaction_id, settled_at)
SELECT 'hold_p' || h, 'captured', 'cap_p' || h, md5('t' || h)::uuid, now() FROM generate_series(1, 4000) h;
INSERT INTO open_holds (hold_reference, account_id, currency, amount, placed_at)
SELECT 'hold_p' || h, 'p-acct-' || (h % 500 + 1), 'USD', 1, now() - h * interval '1 minute' FROM generate_series(4001, 5000) h;
INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
SELECT md5('t' || h)::uuid, 'capture', 'cap_p' || h, 'pay-p' || h, 'p-acct-' || (h % 500 + 1), 'settlement:USD', 'USD', -1, now()
FROM generate_series(1, 4000) h;
INSERT INTO adjustments (idempotency_key, account_id, amount, memo, transaction_id, created_at)
SELECT 'fund', 'p-acct-' || a, 100, '', md5('a' || a)::uuid, now() FROM generate_series(1, 500) a;
INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
SELECT md5('a' || a)::uuid, 'adjustment', 'fund', '', 'p-acct-' || a, 'core:USD', 'USD', 100, now() FROM generate_series(1, 500) a;
INSERT INTO credits (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
SELECT 'req-' || c, 'cred_' || c, 'p-acct-' || (c % 250 * 2 + 1), 'p-dst-' || (c % 250 * 2 + 1), 'USD', 1, md5('c' || c)::uuid, now()
FROM generate_series(1, 1000) c;
INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
SELECT md5('c' || c)::uuid, 'credit', 'cred_' || c, 'req-' || c, 'p-acct-' || (c % 250 * 2 + 1), 'settlement:USD', 'USD', 1, now()
FROM generate_series(1, 1000) c;
INSERT INTO callback_credit (scope, idempotency_key, fingerprint, subject, outcome, reference, key_fingerprint, received_at, last_received_at)
SELECT '', 'k-' || c, sha256(('k-' || c)::bytea), 'req-' || c, 'approved', 'cred_' || c, 'kf', now(), now() FROM generate_series(1, 1000) c;
INSERT INTO orphans (kind, hold_reference, reference, created_at)
SELECT 'capture', 'hold_x' || o, 'cap_x' || o, now() FROM generate_series(1, 10) o;
ANALYZE accounts, instruments, holds, hold_settlements, open_holds, journal, adjustments, credits, callback_credit, orphans;`

// TestReconciliationQueriesAreLinear: no query of a reconciliation runs a
// subquery per row (a SubPlan) or a nested loop over a sequential scan
// (each outer row scanning a table again): each is a scan, a hash join, or
// a loop over index lookups, so that a ledger ten times larger costs about
// ten times more, not a hundred (the checks of I3 and I4 once took 87 s at
// 15,700 captured holds that way).
func TestReconciliationQueriesAreLinear(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.DB(t)
	if _, err := pool.Exec(ctx, planSeed); err != nil {
		t.Fatal(err)
	}
	queries := store.ReconcileSQL(time.Now())
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range queries {
			if !yield(k) {
				return
			}
		}
	}) {
		q := queries[name]
		var raw []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+q.SQL, q.Args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plans []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, raw, err)
		}
		if bad := quadratic(plans[0].Plan); bad != "" {
			t.Errorf("%s: %s:\n%s", name, bad, textPlan(ctx, pool, q))
		}
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string     `json:"Node Type"`
	Relationship string     `json:"Parent Relationship"`
	Relation     string     `json:"Relation Name"`
	Plans        []planNode `json:"Plans"`
}

// quadratic says what in the plan runs once per row of another input: a
// SubPlan, or a nested loop whose inner side scans a table; "" if nothing.
func quadratic(n planNode) string {
	if n.Relationship == "SubPlan" {
		return fmt.Sprintf("a subquery per row (SubPlan: %s)", n.NodeType)
	}
	if n.NodeType == "Nested Loop" && len(n.Plans) == 2 {
		if rel := seqScan(n.Plans[1]); rel != "" {
			return "a nested loop scans " + rel + " once per outer row"
		}
	}
	for _, c := range n.Plans {
		if bad := quadratic(c); bad != "" {
			return bad
		}
	}
	return ""
}

// seqScan returns the table a subtree scans sequentially, if any.
func seqScan(n planNode) string {
	if n.NodeType == "Seq Scan" {
		return n.Relation
	}
	for _, c := range n.Plans {
		if rel := seqScan(c); rel != "" {
			return rel
		}
	}
	return ""
}

// historySeed adds history to planSeed: settled holds, ten times the open
// ones, as a ledger that has run a while has.
const historySeed = `
INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
SELECT 'hold_q' || h, 'pay-q' || h, 'p-acct-' || (h % 500 + 1), 'src', 'USD', 1, now() - interval '30 days'
FROM generate_series(1, 50000) h;
INSERT INTO hold_settlements (hold_reference, status, reference, reason, settled_at)
SELECT 'hold_q' || h, 'released', 'rel_q' || h, 'cancelled', now() - interval '30 days' FROM generate_series(1, 50000) h;
ANALYZE holds, hold_settlements;`

// historyTables are the tables that grow with every payout.
var historyTables = []string{"journal", "holds", "hold_settlements", "credits", "adjustments", "callback_credit"}

// TestIncrementalQueriesReadOnlyWhatIsNew: after a checkpoint, no query of
// a run from it scans a table that grows with history: each reaches the
// rows since the checkpoint through an index (recorded_xid) and their
// counterparts by key, so that its cost is the activity since, whatever
// the history.
func TestIncrementalQueriesReadOnlyWhatIsNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.DB(t)
	if _, err := pool.Exec(ctx, planSeed+historySeed); err != nil {
		t.Fatal(err)
	}
	// A checkpoint taken when nothing else ran (a transaction of another
	// database on the server, open since before the seed, would hold the
	// real snapshot's xmin back and make the seed look new).
	var xmin string
	if err := pool.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&xmin); err != nil {
		t.Fatal(err)
	}
	snapshot := xmin + ":" + xmin + ":"
	queries := store.ReconcileSinceSQL(time.Now(), snapshot, xmin, []string{"p-acct-1", "p-acct-2"})
	for _, name := range slices.Sorted(maps.Keys(queries)) {
		q := queries[name]
		var raw []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+q.SQL, q.Args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plans []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, raw, err)
		}
		if rel := scansOf(plans[0].Plan, historyTables); rel != "" {
			t.Errorf("%s scans %s:\n%s", name, rel, textPlan(ctx, pool, q))
		}
	}
}

// scansOf returns the first of tables the plan scans sequentially, if any.
func scansOf(n planNode, tables []string) string {
	if n.NodeType == "Seq Scan" && slices.Contains(tables, n.Relation) {
		return n.Relation
	}
	for _, c := range n.Plans {
		if rel := scansOf(c, tables); rel != "" {
			return rel
		}
	}
	return ""
}

// textPlan is q's plan as EXPLAIN prints it.
func textPlan(ctx context.Context, pool *pgxpool.Pool, q store.ReconcileQuery) string {
	var text strings.Builder
	rows, _ := pool.Query(ctx, "EXPLAIN "+q.SQL, q.Args...)
	for rows.Next() {
		var l string
		_ = rows.Scan(&l)
		text.WriteString(l + "\n")
	}
	rows.Close()
	return text.String()
}

// TestCandidatesPageReadsOnlyItsOwners: the query of a page of a full
// run's candidates scans neither a history table nor the accounts: it
// reaches the page's owners through their index, and each account's holds
// since the cutoff through theirs, so that a run of many pages reads each
// hold since the cutoff once, whatever the history and the number of
// pages.
func TestCandidatesPageReadsOnlyItsOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.DB(t)
	if _, err := pool.Exec(ctx, planSeed+historySeed); err != nil {
		t.Fatal(err)
	}
	var snapshot string
	if err := pool.QueryRow(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snapshot); err != nil {
		t.Fatal(err)
	}
	queries := store.ReconcilePageSQL(time.Now(), snapshot, "p-own-1", "p-own-105")
	for _, name := range slices.Sorted(maps.Keys(queries)) {
		q := queries[name]
		var raw []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+q.SQL, q.Args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plans []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, raw, err)
		}
		if rel := scansOf(plans[0].Plan, append(slices.Clone(historyTables), "accounts")); rel != "" {
			t.Errorf("%s scans %s:\n%s", name, rel, textPlan(ctx, pool, q))
		}
		if bad := quadratic(plans[0].Plan); bad != "" {
			t.Errorf("%s: %s:\n%s", name, bad, textPlan(ctx, pool, q))
		}
	}
}
