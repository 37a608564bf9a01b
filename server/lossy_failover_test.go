package server_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
)

// TestLossyFailoverIsFoundByReconciliation loses acknowledged money on
// purpose: asynchronous replication, the primary's WAL sender stalled
// (SIGSTOP), the primary killed under a storm of callbacks and the standby
// promoted. A fake of the service then knows every payout and credit the
// storm acknowledged, and a reconciliation of the promoted database must
// name every acknowledged effect that was lost, and nothing else.
func TestLossyFailoverIsFoundByReconciliation(t *testing.T) {
	tooltest.SkipShort(t, "runs a primary and an asynchronous standby of its own and loses a failover under a storm")
	t.Parallel()
	if _, err := embedpg.FindBinaries(""); err != nil {
		t.Fatalf("the failover test runs Postgres servers of its own: %v", err)
	}
	root := t.TempDir() + "/cluster"
	if err := embedpg.MkdirServer(root); err != nil {
		t.Fatal(err)
	}
	primary := newPrimary(t, root, "")
	standby := newStandby(t, root, primary, "standby1")
	primary.waitStreaming("standby1", false)
	if err := primary.exec("postgres", "CREATE DATABASE ledger"); err != nil {
		t.Fatal(err)
	}
	secret, b64 := testSecret()
	var log syncbuf.Buffer
	addrs, failed := launch(t, config(t, "DATABASE_URL", primary.url("ledger"), "LEDGER_PROVIDER_ID", "bank-l",
		"LEDGER_SIGNING_SECRETS", b64, "LEDGER_RECONCILE_EVERY", "0"), &log)
	var d daemon
	select {
	case a := <-addrs:
		d.callbacks, d.admin = a[0], a[1]
	case err := <-failed:
		t.Fatalf("ledgerd did not start: %v\n%s", err, log.String())
	}
	b := newBank(t, &d, "bank-l", secret, "")
	const workers = 6
	for w := range workers {
		b.customer(fmt.Sprintf("acc-f%d", w), fmt.Sprintf("owner-f%d", w), "100000.00")
	}
	waitCaughtUp(t, primary)

	// Stall the WAL sender: from now on nothing reaches the standby.
	var walsender int
	if err := primary.scalar("postgres", `SELECT pid FROM pg_stat_replication WHERE application_name = 'standby1'`, &walsender); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(walsender, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	answers := make(chan []answer, 1)
	var acks atomic.Int64
	seen := func(a answer) {
		if a.status == 200 {
			acks.Add(1)
		}
	}
	go func() { answers <- storm(t, b, workers, stop, seen) }()
	finish := sync.OnceValue(func() []answer { close(stop); return <-answers })
	defer finish() // a failed wait still ends the storm before the test does
	// The storm's acknowledged work, unreplicated.
	wait.Until(t, "the storm's acknowledged answers", func() bool { return acks.Load() >= stormAcks })
	primary.kill()
	all := finish()
	if err := standby.exec("postgres", "SELECT pg_promote(true, 60)"); err != nil {
		t.Fatal(err)
	}

	pool, err := pgxpool.New(context.Background(), standby.url("ledger"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	acked := acknowledged(all)
	lost := lostEffects(t, pool, acked)
	rep := reconcileWithService(t, store.Wrap(pool, nil), acked, workers)
	found := foundEffects(t, rep)
	compareLost(t, lost, found)
	t.Logf("%d answers, %d acknowledged authorizes, %d captures, %d credits; %d acknowledged effects lost, all %d found",
		len(all), len(acked.authorized), len(acked.captured), len(acked.credited), len(lost), len(found))
	if len(lost) == 0 {
		t.Fatal("nothing acknowledged was lost: the WAL sender's stall did not bite, the test proves nothing")
	}
}

// waitCaughtUp waits until the standby has replayed everything the
// primary wrote.
func waitCaughtUp(t *testing.T, primary *pgNode) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var lag int64
		err := primary.scalar("postgres", `SELECT (pg_current_wal_lsn() - replay_lsn)::bigint FROM pg_stat_replication
WHERE application_name = 'standby1'`, &lag)
		if err == nil && lag == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not catch up in 30s: %v", err)
		}
	}
}

// lostEffects reads the promoted database and returns each acknowledged
// effect it lacks as the finding that must name it ("kind subject").
func lostEffects(t *testing.T, pool *pgxpool.Pool, a acked) map[string]bool {
	t.Helper()
	ctx := context.Background()
	status := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT payout_id, hold_reference, status FROM hold_states`)
	if err != nil {
		t.Fatal(err)
	}
	refOf := map[string]string{}
	for rows.Next() {
		var p, ref, s string
		if err := rows.Scan(&p, &ref, &s); err != nil {
			t.Fatal(err)
		}
		status[p], refOf[p] = s, ref
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	credited := map[string]bool{}
	rows, err = pool.Query(ctx, `SELECT request_id FROM credits`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		credited[r] = true
	}
	lost := map[string]bool{}
	for p := range a.authorized {
		switch s, ok := status[p]; {
		case !ok && a.captured[p]:
			lost[reconciliation.KindPayoutNotDebited+" "+p] = true
		case !ok:
			lost[reconciliation.KindPayoutNotHeld+" "+p] = true
		case a.captured[p] && s == "held":
			lost[reconciliation.KindMissedCapture+" "+refOf[p]] = true
		}
	}
	for r := range a.credited {
		if !credited[r] {
			lost[reconciliation.KindMissingCredit+" "+r] = true
		}
	}
	return lost
}

// foundEffects returns the findings of rep that name a lost effect
// ("kind subject"), each of which must be critical; any other finding
// fails the test.
func foundEffects(t *testing.T, rep reconciliation.Report) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	for _, f := range rep.Findings {
		switch f.Kind {
		case reconciliation.KindPayoutNotHeld, reconciliation.KindPayoutNotDebited, reconciliation.KindMissingCredit,
			reconciliation.KindMissedCapture:
			if f.Severity != "critical" {
				t.Errorf("a lost effect found as %s %s, severity %s, want critical", f.Kind, f.Subject, f.Severity)
			}
			found[f.Kind+" "+f.Subject] = true
		default:
			t.Errorf("unexpected finding %s %s: %s", f.Kind, f.Subject, f.Detail)
		}
	}
	return found
}

// compareLost fails on any difference between the acknowledged effects
// lost and those found, listing both.
func compareLost(t *testing.T, lost, found map[string]bool) {
	t.Helper()
	var missed, extra []string
	for k := range lost {
		if !found[k] {
			missed = append(missed, k)
		}
	}
	for k := range found {
		if !lost[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(missed)
	slices.Sort(extra)
	if len(missed) > 0 || len(extra) > 0 {
		t.Fatalf("acknowledged and lost but not found (%d): %v\nfound but not lost (%d): %v", len(missed), missed, len(extra), extra)
	}
}
