package loadtest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
)

// TestClean: after a storm that left holds held, clean releases every one
// of them through release callbacks and closes the storm's accounts; a
// second clean has nothing to do; another prefix is left alone.
func TestClean(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd twice and cleans up after one storm")
	t.Parallel()
	l := startLedgerd(t)
	storm := func(seed string) loadtest.Report {
		report := filepath.Join(t.TempDir(), "report.json")
		code, out, errs := run(t, l.args("storm", "--accounts", "3", "--payouts", "30", "--credits", "4", "--leave-held", "0.5",
			"--seed", seed, "--report", report), loadtest.Hooks{})
		if code != 0 {
			t.Fatalf("storm: exit %d\n%s\n%s", code, out, errs)
		}
		return readReport(t, report)
	}
	victim, bystander := storm("1"), storm("2")
	ctx := context.Background()
	adm, err := adminapi.NewClient(l.admin)
	if err != nil {
		t.Fatal(err)
	}
	heldOf := func(prefix string) int {
		n := 0
		for h, err := range adm.Holds.ListIter(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 100}) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(h.PayoutID, prefix+"-") {
				n++
			}
		}
		return n
	}
	held := heldOf(victim.Prefix)
	if held == 0 {
		t.Fatal("the storm left nothing held")
	}
	clean := func(more ...string) (int, string, string) {
		return run(t, append([]string{"clean", "--callbacks", l.callbacks, "--admin", l.admin, "--provider-id", providerID,
			"--prefix", victim.Prefix}, more...), loadtest.Hooks{})
	}
	code, out, errs := clean("--dry-run")
	if code != 0 || !strings.Contains(out, "held holds to release, 3 accounts (3 not closed)") || heldOf(victim.Prefix) != held {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = clean()
	if code != 0 || !strings.Contains(out, "closed 3 accounts") {
		t.Fatalf("clean: exit %d\n%s\n%s", code, out, errs)
	}
	if n := heldOf(victim.Prefix); n != 0 {
		t.Fatalf("%d holds still held", n)
	}
	for i := range 3 {
		a, _, err := adm.Accounts.Get(ctx, loadtest.AccountID(victim.Prefix, i))
		if err != nil || a.Status != adminapi.AccountClosed || a.Held != "0.00" {
			t.Fatalf("account %d after clean: %+v %v", i, a, err)
		}
	}
	code, out, _ = clean()
	if code != 0 || !strings.Contains(out, "0 held holds to release, 3 accounts (0 not closed)") {
		t.Fatalf("second clean: exit %d\n%s", code, out)
	}
	if heldOf(bystander.Prefix) == 0 {
		t.Error("clean released another prefix's holds")
	}
	if a, _, err := adm.Accounts.Get(ctx, loadtest.AccountID(bystander.Prefix, 0)); err != nil || a.Status != adminapi.AccountOpen {
		t.Errorf("clean touched another prefix's account: %+v %v", a, err)
	}
	// The secret clean installed for its releases is retired.
	list, _, err := adm.SigningSecrets.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.SigningSecrets {
		if s.RetiredOn == nil {
			t.Errorf("signing secret %s still active", s.SecretID)
		}
	}
}
