package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
)

// acked is what the storm's 200 answers acknowledged: payoutID → hold
// reference, payoutIDs captured, requestID → owner.
type acked struct {
	authorized map[string]string
	captured   map[string]bool
	credited   map[string]string
}

func acknowledged(all []answer) acked {
	a := acked{authorized: map[string]string{}, captured: map[string]bool{}, credited: map[string]string{}}
	for _, x := range all {
		if x.status != http.StatusOK || x.outcome != "approved" {
			continue
		}
		switch x.endpoint {
		case claims.Authorize:
			a.authorized[x.claims["payoutID"].(string)] = x.ref
		case claims.Capture:
			a.captured[x.claims["payoutID"].(string)] = true
		case claims.CreditAccount:
			a.credited[x.claims["requestID"].(string)] = x.claims["requesterExternalID"].(string)
		}
	}
	return a
}

// reconcileWithService runs a reconciliation of db against a fake of the
// service that knows every acknowledged payout (completed when its capture
// was acknowledged) and every acknowledged credit.
func reconcileWithService(t *testing.T, db *store.DB, a acked, workers int) reconciliation.Report {
	t.Helper()
	ctx := context.Background()
	fake := providertest.NewService()
	ts := httptest.NewServer(fake)
	t.Cleanup(ts.Close)
	id, secret := fake.APIKey()
	c, err := provider.NewClient(ts.URL, provider.WithProviderID(fake.ProviderID()), provider.WithAPIKey(id, secret))
	if err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		if _, _, err := c.Participants.Create(ctx, &provider.ParticipantCreateRequest{ExternalID: fmt.Sprintf("owner-f%d", w),
			GivenName: "Pat", FamilyName: "Payer", PhoneNumbers: []string{"+15555550100"},
			Address: provider.Address{AddressLine1: "1 Main St", City: "Springfield", StateOrProvince: "IL", PostalCode: "62701", Country: "US"}}); err != nil {
			t.Fatal(err)
		}
	}
	for p := range a.authorized {
		status := providertest.PayoutAuthorized
		if a.captured[p] {
			status = providertest.PayoutCompleted
		}
		var w, i int
		if _, err := fmt.Sscanf(p, "p-%d-%d", &w, &i); err != nil {
			t.Fatalf("payout %s: %v", p, err)
		}
		if _, err := fake.SeedPayout(fake.ProviderID(), providertest.Payout{PayoutID: p, SenderExternalID: fmt.Sprintf("owner-f%d", w),
			Amount: providertest.USD("1.00"), Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	for r, owner := range a.credited {
		if err := fake.SeedPayment(fake.ProviderID(), owner, providertest.Payment{ID: r, Type: "request", Direction: "received",
			Status: providertest.PayoutCompleted, Amount: providertest.USD("0.25")}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := reconciliation.New(reconciliation.Config{DB: db, Provider: c})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rec.Run(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// requireClean fails on every finding of rep, critical or not, and returns
// the count of findings by severity and kind for the log. It serves storms
// whose database holds nothing but the storm's own accounts, holds and
// requests, and whose storm sends each credit once: no finding is expected
// of them (no deliberate second credit, so no duplicate_credit_attempt), and
// any finding fails.
func requireClean(t *testing.T, rep reconciliation.Report) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, f := range rep.Findings {
		counts[f.Severity+" "+f.Kind]++
		t.Errorf("reconciliation found %s (%s) %s: %s", f.Kind, f.Severity, f.Subject, f.Detail)
	}
	if rep.Status != reconciliation.StatusClean && len(rep.Findings) == 0 {
		t.Errorf("reconciliation's status is %q without a finding", rep.Status)
	}
	return counts
}
