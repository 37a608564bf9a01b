package reconciliation_test

import (
	"context"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestAuditChainBrokenIsCritical: a record of the audit trail edited, and
// another deleted, by someone who disabled the triggers: the next run
// reports each break as a critical audit_chain_broken, and its status is
// critical; before the tampering the same trail gives a clean run.
func TestAuditChainBrokenIsCritical(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	ctx := context.Background()
	for i := range 5 {
		if _, err := db.AppendAudit(ctx, ledger.AuditRecord{RecordedAt: time.Now(), ActorID: "tok_x", ActorName: "ops",
			Scope: ledger.ScopeOperate, Method: "POST", Route: "/v1/accounts", Target: "accountID=a", Status: 201 + i%2, Source: "127.0.0.1"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := reconciliation.New(reconciliation.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := r.Run(ctx, false); err != nil || rep.Status != reconciliation.StatusClean {
		t.Fatalf("before: %+v %v", rep, err)
	}
	for _, sql := range []string{
		`ALTER TABLE audit_log DISABLE TRIGGER USER`,
		`UPDATE audit_log SET actor_name = 'someone else' WHERE seq = 2`,
		`DELETE FROM audit_log WHERE seq = 4`,
		`ALTER TABLE audit_log ENABLE TRIGGER USER`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	rep, err := r.Run(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	broken := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Kind == reconciliation.KindAuditChainBroken && f.Severity == reconciliation.SeverityCritical {
			broken[f.Subject] = true
		}
	}
	if rep.Status != reconciliation.StatusCritical || !broken["audit:2"] || !broken["audit:5"] || len(broken) != 2 {
		t.Fatalf("status %s, breaks %v: %+v", rep.Status, broken, rep.Findings)
	}
}
