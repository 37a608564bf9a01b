package reconciliation_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
)

// timeZero: now, for a hold or a payout.
var timeZero time.Time

func (b *bundle) runWith(t *testing.T, o reconciliation.RunOptions) reconciliation.Report {
	t.Helper()
	rep, err := b.reconciler(t).RunWith(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

// issues are a report's findings as kind and subject, sorted.
func issues(rep reconciliation.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Kind+" "+f.Subject)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestFirstRunIsFullThenFromTheCheckpoint: the first run reads all of
// history and writes a checkpoint of every account; the next starts from
// it and writes one of the accounts touched since; "full" reads all of
// history again.
func TestFirstRunIsFullThenFromTheCheckpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	busy, idle := b.sender(t, "busy-", "100.00"), b.sender(t, "idle-", "100.00")
	_ = idle
	b.capture(t, b.hold(t, busy, "10.00", timeZero))

	first := b.run(t, false)
	if first.Mode != reconciliation.ModeFull || first.FromCheckpoint != "" || first.Checkpoint == "" || first.Status != reconciliation.StatusClean {
		t.Fatalf("first run %+v, want a clean full run that writes a checkpoint", first)
	}
	accounts := b.count(t, `SELECT count(*) FROM accounts`)
	if n := b.count(t, `SELECT accounts FROM reconciliation_checkpoints WHERE checkpoint_id = $1`, first.Checkpoint); n != accounts {
		t.Errorf("the full run's checkpoint has %d account states, want every account (%d)", n, accounts)
	}
	b.capture(t, b.hold(t, busy, "5.00", timeZero))
	second := b.run(t, false)
	if second.Mode != reconciliation.ModeIncremental || second.FromCheckpoint != first.Checkpoint || second.Checkpoint == "" ||
		second.Status != reconciliation.StatusClean {
		t.Fatalf("second run %+v, want a clean incremental run from %s", second, first.Checkpoint)
	}
	// busy's account alone (a system account's row is not updated: its
	// balance is the journal's).
	if got := b.count(t, `SELECT count(*) FROM reconciliation_account_states WHERE checkpoint_id = $1`, second.Checkpoint); got != 1 {
		t.Errorf("the incremental run wrote %d account states, want 1 (the sender's)", got)
	}
	if got := b.count(t, `SELECT count(*) FROM reconciliation_account_states WHERE checkpoint_id = $1 AND account_id = $2`,
		second.Checkpoint, idle.account.AccountID); got != 0 {
		t.Errorf("the incremental run rewrote the idle account's state")
	}
	if got := b.count(t, `SELECT balance::int FROM reconciliation_account_states WHERE account_id = $1`, busy.account.AccountID); got != 85 {
		t.Errorf("busy's proven balance %d, want 85", got)
	}
	full := b.runWith(t, reconciliation.RunOptions{Full: true})
	if full.Mode != reconciliation.ModeFull || full.FromCheckpoint != "" || full.Checkpoint == "" {
		t.Fatalf("run asked full: %+v", full)
	}
	if got := b.count(t, `SELECT count(*) FROM reconciliation_runs WHERE full_run AND from_checkpoint IS NULL`); got != 2 {
		t.Errorf("%d runs stored as full, want 2", got)
	}
	if got := b.count(t, `SELECT count(*) FROM reconciliation_runs WHERE NOT full_run AND from_checkpoint = $1`, first.Checkpoint); got != 1 {
		t.Errorf("%d runs stored as incremental from the first checkpoint, want 1", got)
	}
}

// TestIncrementalRunFindsDriftSinceTheCheckpoint: after a clean
// checkpoint, money changed behind the adapter's back is critical in the
// run from the checkpoint, as in a full run of the same ledger (the same
// findings); neither run writes a checkpoint, and the run after them is
// full until the drift is gone.
func TestIncrementalRunFindsDriftSinceTheCheckpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, b *bundle, idle, busy sender)
		want   []string // kinds
	}{
		{"BalanceOfAnIdleAccount", func(t *testing.T, b *bundle, idle, _ sender) {
			b.exec(t, `UPDATE accounts SET balance = balance + 7 WHERE account_id = $1`, idle.account.AccountID)
		}, []string{"balance_drift", "currency_imbalance"}},
		{"HeldOfAnIdleAccount", func(t *testing.T, b *bundle, idle, _ sender) {
			b.exec(t, `UPDATE accounts SET held = held + 1 WHERE account_id = $1`, idle.account.AccountID)
		}, []string{"held_drift"}},
		{"LostJournalEntry", func(t *testing.T, b *bundle, _, busy sender) {
			h := b.hold(t, busy, "3.00", timeZero)
			b.capture(t, h)
			b.exec(t, `ALTER TABLE journal DISABLE TRIGGER USER`)
			b.exec(t, `DELETE FROM journal WHERE transaction_id = (SELECT transaction_id FROM hold_settlements WHERE hold_reference = $1)`, h.ref)
			b.exec(t, `ALTER TABLE journal ENABLE TRIGGER USER`)
		}, []string{"balance_drift", "currency_imbalance", "hold_journal_mismatch"}},
		{"LostHoldSettlement", func(t *testing.T, b *bundle, _, busy sender) {
			h := b.hold(t, busy, "2.00", timeZero)
			b.release(t, h)
			b.exec(t, `ALTER TABLE hold_settlements DISABLE TRIGGER USER`)
			b.exec(t, `DELETE FROM hold_settlements WHERE hold_reference = $1`, h.ref)
			b.exec(t, `ALTER TABLE hold_settlements ENABLE TRIGGER USER`)
		}, []string{"held_drift"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{noProvider: true})
			idle, busy := b.sender(t, "idle-", "100.00"), b.sender(t, "busy-", "100.00")
			b.capture(t, b.hold(t, busy, "10.00", timeZero))
			first := b.run(t, false)
			if first.Checkpoint == "" {
				t.Fatalf("first run %+v wrote no checkpoint", first)
			}
			b.capture(t, b.hold(t, busy, "4.00", timeZero)) // activity since
			c.tamper(t, b, idle, busy)
			checkpoints := b.count(t, `SELECT count(*) FROM reconciliation_checkpoints`)

			inc := b.run(t, false)
			if inc.Mode != reconciliation.ModeIncremental || inc.Status != reconciliation.StatusCritical {
				t.Fatalf("run from the checkpoint: %s, %s, findings %v; want incremental and critical", inc.Mode, inc.Status, issues(inc))
			}
			var kinds []string
			for _, f := range inc.Findings {
				kinds = append(kinds, f.Kind)
			}
			slices.Sort(kinds)
			if kinds = slices.Compact(kinds); !slices.Equal(kinds, c.want) {
				t.Errorf("kinds found from the checkpoint %v, want %v (%v)", kinds, c.want, inc.Findings)
			}
			full := b.runWith(t, reconciliation.RunOptions{Full: true})
			if got, want := issues(inc), issues(full); !slices.Equal(got, want) {
				t.Errorf("from the checkpoint: %v\nfull: %v", got, want)
			}
			if inc.Checkpoint != "" || full.Checkpoint != "" || b.count(t, `SELECT count(*) FROM reconciliation_checkpoints`) != checkpoints {
				t.Errorf("a run with critical invariant findings wrote a checkpoint (%q, %q)", inc.Checkpoint, full.Checkpoint)
			}
			if next := b.run(t, false); next.Mode != reconciliation.ModeFull || next.Status != reconciliation.StatusCritical {
				t.Errorf("the run after the drift: %s %s, want full and critical (the drift is open)", next.Mode, next.Status)
			}
		})
	}
}

// TestIncrementalAndFullRunsAgree: on the same ledger, with activity of
// every kind since the checkpoint (holds placed, captured and released,
// payouts the service disagrees about), the run from the checkpoint and
// the full run report the same findings; an issue found earlier about an
// account without activity since is reported by the incremental run as
// still open.
func TestIncrementalAndFullRunsAgree(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	quiet, s := b.sender(t, "quiet-", "100.00"), b.sender(t, "agree-", "500.00")
	old := b.hold(t, quiet, "6.00", timeZero)
	b.payout(t, quiet, old, providertest.PayoutCompleted, timeZero) // missed_capture, found before the checkpoint
	first := b.run(t, false)
	if first.Mode != reconciliation.ModeFull || first.Checkpoint == "" {
		t.Fatalf("first run %+v", first)
	}

	held, captured, released := b.hold(t, s, "10.00", timeZero), b.hold(t, s, "20.00", timeZero), b.hold(t, s, "5.00", timeZero)
	cancelled, lost := b.hold(t, s, "7.00", timeZero), hold{payoutID: "pay-lost-" + s.account.OwnerExternalID, amount: "40.00"}
	b.capture(t, captured)
	b.release(t, released)
	b.capture(t, cancelled)
	b.payout(t, s, held, providertest.PayoutCompleted, timeZero)      // missed_capture
	b.payout(t, s, captured, providertest.PayoutCompleted, timeZero)  // agrees
	b.payout(t, s, released, providertest.PayoutCompleted, timeZero)  // capture_release_conflict
	b.payout(t, s, cancelled, providertest.PayoutCancelled, timeZero) // capture_cancel_conflict
	b.payout(t, s, lost, providertest.PayoutCompleted, timeZero)      // payout_not_debited
	inc := b.run(t, false)
	full := b.runWith(t, reconciliation.RunOptions{Full: true})
	if inc.Mode != reconciliation.ModeIncremental || full.Mode != reconciliation.ModeFull {
		t.Fatalf("modes %s, %s", inc.Mode, full.Mode)
	}
	if got, want := issues(inc), issues(full); !slices.Equal(got, want) {
		t.Errorf("from the checkpoint: %v\nfull: %v", got, want)
	}
	for _, want := range []string{"missed_capture " + old.ref, "missed_capture " + held.ref, "capture_release_conflict " + released.ref,
		"capture_cancel_conflict " + cancelled.ref, "payout_not_debited " + lost.payoutID} {
		if !slices.Contains(issues(inc), want) {
			t.Errorf("incremental run: no %s in %v", want, issues(inc))
		}
	}
	if inc.Status != reconciliation.StatusCritical || full.Status != inc.Status {
		t.Errorf("statuses %s (incremental), %s (full), want critical", inc.Status, full.Status)
	}
}

// TestIncrementalRunsDuringCallbacks: runs from checkpoints while
// callbacks place, capture and release holds on the same accounts, from
// several goroutines: no run finds anything, each writes a checkpoint, and
// a full run at the end agrees (clean).
func TestIncrementalRunsDuringCallbacks(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	var senders []sender
	for i := range 4 {
		senders = append(senders, b.sender(t, fmt.Sprintf("storm%d-", i), "100000.00"))
	}
	if first := b.run(t, false); first.Checkpoint == "" {
		t.Fatalf("first run %+v", first)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if err := b.callbacks(senders[(w+i)%len(senders)], i%3 == 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var runs []reconciliation.Report
	for range 8 {
		rep, err := b.reconciler(t).Run(context.Background(), false)
		if err != nil {
			t.Errorf("run: %v", err)
			break
		}
		runs = append(runs, rep)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, rep := range runs {
		if rep.Mode != reconciliation.ModeIncremental || len(rep.Findings) != 0 || rep.Checkpoint == "" {
			t.Errorf("run %d during the callbacks: %s, findings %v, checkpoint %q", i, rep.Mode, rep.Findings, rep.Checkpoint)
		}
	}
	settled := b.count(t, `SELECT count(*) FROM hold_settlements`)
	if settled < 10 {
		t.Errorf("only %d holds settled during the runs: no concurrency tested", settled)
	}
	if last := b.run(t, false); len(last.Findings) != 0 {
		t.Errorf("last incremental run: %v", last.Findings)
	}
	if full := b.runWith(t, reconciliation.RunOptions{Full: true}); len(full.Findings) != 0 {
		t.Errorf("full run: %v", full.Findings)
	}
}

// callbacks places a hold on s's account and captures or releases it,
// through the callbacks' store functions.
func (b *bundle) callbacks(s sender, release bool) error {
	ctx := context.Background()
	payout := "pay-" + ledger.NewReference("p")
	d, err := b.db.Authorize(ctx, holds.AuthorizeParams{Key: "k-" + payout, Fingerprint: make([]byte, 32),
		KeyFingerprint: "test", Now: b.clock(), PayoutID: payout, ExternalID: s.account.OwnerExternalID, FundingSource: s.source,
		Currency: "USD", Amount: decimal.RequireFromString("1.25"), FraudDeny: 0.9, FraudStepUp: 0.75,
		HoldReference: ledger.NewReference("hold_")})
	if err != nil || !d.Approved() {
		return fmt.Errorf("authorize: %+v %v", d, err)
	}
	if release {
		reason := "cancelled"
		_, err = b.db.Release(ctx, holds.ReleaseParams{Reason: &reason, Key: "r-" + payout, Fingerprint: make([]byte, 32),
			KeyFingerprint: "test", Now: b.clock(), PayoutID: &payout, HoldReference: d.Reference,
			ReleaseReference: ledger.NewReference("rel_")})
	} else {
		_, err = b.db.Capture(ctx, holds.CaptureParams{Key: "c-" + payout, Fingerprint: make([]byte, 32),
			KeyFingerprint: "test", Now: b.clock(), PayoutID: payout, HoldReference: d.Reference,
			CaptureReference: ledger.NewReference("cap_"), TransactionID: ledger.NewTransactionID()})
	}
	return err
}
