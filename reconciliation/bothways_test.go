package reconciliation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestReconcilerFindsACompletedPayoutWithNoHold: the service reports a
// payout P completed for 40.00 for a customer of this ledger that has no
// hold of P here: a critical finding names P and its amount.
func TestReconcilerFindsACompletedPayoutWithNoHold(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "lost-", "100.00")
	b.payout(t, s, hold{payoutID: "pay-P", amount: "40.00"}, providertest.PayoutCompleted, time.Time{})
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{"pay-P": "payout_not_debited critical false"})
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s, want critical", rep.Status)
	}
	if d := rep.Findings[0].Detail; !strings.Contains(d, "pay-P") || !strings.Contains(d, "40.00 USD") ||
		!strings.Contains(d, s.account.OwnerExternalID) {
		t.Errorf("detail %q does not name the payout, its amount and the sender", d)
	}
	b.assertStored(t, rep, false)
	storetest.AssertBalances(t, b.db, s.account.AccountID, "100.00", "0.00", "100.00") // nothing applied
}

// TestReconcilerComparesEveryListedPayoutWithItsHold: each status the
// service may report, with no hold here, a released hold, or a hold of
// another amount.
func TestReconcilerComparesEveryListedPayoutWithItsHold(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "both-", "1000.00")
	want := map[string]string{}
	for _, c := range []struct{ status, want string }{
		{providertest.PayoutCompleted, "payout_not_debited critical false"},
		{providertest.PayoutClaiming, "payout_not_debited critical false"},
		{providertest.PayoutAuthorized, "payout_not_held critical false"},
		{providertest.PayoutAccepted, "payout_not_held critical false"},
		{providertest.PayoutPayoutFailed, "payout_not_held critical false"},
		{providertest.PayoutInitiated, ""},
		{providertest.PayoutCancelled, ""},
		{providertest.PayoutExpired, ""},
		{providertest.PayoutDenied, ""},
		{providertest.PayoutFailed, ""},
	} {
		id := storetest.Unique("pay-nohold-")
		b.payout(t, s, hold{payoutID: id, amount: "5.00"}, c.status, time.Time{})
		if c.want != "" {
			want[id] = c.want
		}
	}
	for _, status := range []string{providertest.PayoutAuthorized, providertest.PayoutAccepted} {
		h := b.hold(t, s, "7.00", time.Time{})
		b.release(t, h)
		b.payout(t, s, h, status, time.Time{})
		want[h.payoutID] = "payout_not_held critical false"
	}
	fine := b.hold(t, s, "3.00", time.Time{})
	b.payout(t, s, fine, providertest.PayoutAuthorized, time.Time{})
	mismatch := b.hold(t, s, "10.00", time.Time{})
	b.capture(t, mismatch)
	b.payout(t, s, hold{payoutID: mismatch.payoutID, amount: "12.50"}, providertest.PayoutCompleted, time.Time{})
	want[mismatch.payoutID] = "payout_amount_mismatch critical false"

	rep := b.run(t, false)
	wantMap(t, kinds(rep), want)
	for _, f := range findings(rep, reconciliation.KindPayoutAmountMismatch) {
		if !strings.Contains(f.Detail, "12.50 USD") || !strings.Contains(f.Detail, "10.00 USD") {
			t.Errorf("detail %q does not give both amounts", f.Detail)
		}
	}
	for _, f := range findings(rep, reconciliation.KindPayoutNotHeld) {
		if !strings.Contains(f.Detail, f.Subject) {
			t.Errorf("detail %q does not name the payout", f.Detail)
		}
	}
	b.assertStored(t, rep, false)
	// Fixing touches none of them: each needs a human.
	if rep := b.run(t, true); len(rep.Findings) != len(want) {
		t.Errorf("fix run findings %+v, want the same %d", rep.Findings, len(want))
	} else {
		for _, f := range rep.Findings {
			if f.Fixed {
				t.Errorf("%s %s fixed", f.Kind, f.Subject)
			}
		}
	}
}

// TestReconcilerReadsEveryCustomer: a customer with no hold and no
// destination here is read all the same (its payouts are the ones whose
// holds may have been lost); one the service does not know has nothing to
// compare.
func TestReconcilerReadsEveryCustomer(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	known := b.sender(t, "every-", "50.00")
	storetest.Account(t, b.db, storetest.AccountOpts{Owner: storetest.Unique("unknown-"), Funds: "10.00",
		Source: storetest.Unique("card-")})
	b.payout(t, known, hold{payoutID: "pay-lost", amount: "20.00"}, providertest.PayoutAuthorized, time.Time{})
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{"pay-lost": "payout_not_held critical false"})
	if n := b.paymentsRequests(); n != 2 {
		t.Errorf("payments lists read %d, want one per customer (2)", n)
	}
}
