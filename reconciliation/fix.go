package reconciliation

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// ReleaseReason is the release_reason of a hold released by a fix.
const ReleaseReason = "reconciliation"

// fix applies every missed_capture and missed_release of ds, each in its own
// transaction, and marks the findings it fixed.
func (r *Reconciler) fix(ctx context.Context, runID string, ds []discrepancy) error {
	for i := range ds {
		d := &ds[i]
		if d.finding.Kind != KindMissedCapture && d.finding.Kind != KindMissedRelease {
			continue
		}
		note, fixed, endedAs, err := r.fixOne(ctx, runID, d)
		if err != nil {
			return fmt.Errorf("reconciliation: fix %s of hold %s: %w", d.finding.Kind, d.hold.HoldReference, err)
		}
		if d.finding.Kind == KindMissedCapture && endedAs == holds.StatusReleased {
			// Released since the snapshot while the service says
			// completed: that is the conflict, not a missed capture.
			d.finding.Kind, d.finding.Severity = KindCaptureReleaseConflict, SeverityOf(KindCaptureReleaseConflict)
		}
		d.finding.Fixed = fixed
		d.finding.Detail += "; " + note
	}
	return nil
}

// fixOne captures or releases one hold if, on the locked row, it is still
// held, and journals the fix in reconciliation_fixes in the same
// transaction.
// endedAs is the hold's status by then when it was no longer held.
func (r *Reconciler) fixOne(ctx context.Context, runID string, d *discrepancy) (note string, fixed bool, endedAs string, err error) {
	err = ledger.InTx(ctx, r.cfg.Pool, func(tx pgx.Tx) error {
		note, fixed, endedAs = "", false, "" // InTx may run this again
		if _, err := tx.Exec(ctx, lockAccountSQL, d.hold.AccountID); err != nil {
			return err
		}
		var status string
		if err := tx.QueryRow(ctx, lockHoldSQL, d.hold.HoldReference).Scan(&status); err != nil {
			return err
		}
		if status != holds.StatusHeld {
			// A late callback or a concurrent run ended it since the
			// snapshot: nothing to apply, and nothing claimed as fixed.
			note, endedAs = "not fixed: the hold is "+status+" by now", status
			return nil
		}
		now := r.now()
		var dec ledger.Decision
		var err error
		action := "capture"
		if d.finding.Kind == KindMissedCapture {
			dec, err = holds.Capture(ctx, tx, holds.CaptureRequest{HoldReference: d.hold.HoldReference, PayoutID: d.hold.PayoutID, Now: now})
		} else {
			action = "release"
			dec, err = holds.Release(ctx, tx, holds.ReleaseRequest{HoldReference: d.hold.HoldReference, PayoutID: d.hold.PayoutID,
				Reason: ReleaseReason, Now: now})
		}
		if err != nil {
			return err
		}
		if !dec.Approved() || dec.Orphan {
			// Cannot happen on a locked held hold of this payout; apply
			// nothing rather than record a fix that did not happen.
			return fmt.Errorf("%s answered %s %s on a held hold", action, dec.Outcome, dec.Reason)
		}
		var txID *string
		if err := tx.QueryRow(ctx, insertFixSQL, runID, d.hold.HoldReference, action, dec.Reference,
			d.payoutStatus, now).Scan(&txID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return errors.New("hold vanished under lock")
			}
			return err
		}
		if txID != nil {
			note = fmt.Sprintf("fixed: captured as %s, journal transaction %s", dec.Reference, *txID)
		} else {
			note = fmt.Sprintf("fixed: released as %s, reason %s", dec.Reference, ReleaseReason)
		}
		fixed = true
		return nil
	})
	return note, fixed, endedAs, err
}
