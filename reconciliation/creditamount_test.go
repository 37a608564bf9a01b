package reconciliation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestReconcilerReportsACreditAskedForAnotherAmount: request R credited
// 1.00, then asked again under a new key for 2.00: the second is answered
// amount_mismatch (nothing credited) and the run reports it critical, with
// both amounts, without a provider.
func TestReconcilerReportsACreditAskedForAnotherAmount(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	dst := storetest.Unique("dst-")
	r := storetest.Account(t, b.db, storetest.AccountOpts{Dest: dst})
	credit := func(key, amount string) ledger.Answer {
		a, err := b.db.Credit(context.Background(), ledger.CreditParams{Key: key, Fingerprint: []byte(key + amount),
			KeyFingerprint: "kf", Now: time.Now(), RequestID: "req-R", Destination: dst, Requester: r.OwnerExternalID,
			Currency: "USD", Amount: decimal.RequireFromString(amount), CreditReference: ledger.NewReference("cred_"),
			TransactionID: ledger.NewTransactionID()})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := credit("k1", "1.00"); a.State != ledger.StateNew || !a.Approved() {
		t.Fatalf("first credit %+v", a)
	}
	if a := credit("k2", "2.00"); a.State != ledger.StateAmountMismatch || a.Approved() {
		t.Fatalf("second credit, another amount: %+v, want amount_mismatch", a)
	}
	storetest.AssertBalances(t, b.db, r.AccountID, "1.00", "0", "1.00")
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{"req-R": "credit_amount_mismatch critical false"})
	if d := rep.Findings[0].Detail; !strings.Contains(d, "1.00 USD") || !strings.Contains(d, "2.00 USD") {
		t.Errorf("detail %q does not give both amounts", d)
	}
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s, want critical", rep.Status)
	}
	b.assertStored(t, rep, false)
}
