package reconciliation

import (
	"context"
	"fmt"

	"github.com/provider-ledger/adapter/holds"
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

// fixOne captures or releases one hold if it is still held (the callbacks'
// own decision decides, under their locks), recording the fix in the same
// transaction. endedAs is the hold's status when it was no longer held.
func (r *Reconciler) fixOne(ctx context.Context, runID string, d *discrepancy) (note string, fixed bool, endedAs string, err error) {
	status := holds.StatusReleased
	if d.finding.Kind == KindMissedCapture {
		status = holds.StatusCaptured
	}
	res, err := r.cfg.DB.FixHold(ctx, holds.FixParams{RunID: runID, HoldReference: d.hold.HoldReference, PayoutID: d.hold.PayoutID,
		Status: status, PayoutStatus: d.payoutStatus, Reason: ReleaseReason, Now: r.now()})
	switch {
	case err != nil:
		return "", false, "", err
	case !res.Fixed:
		// A late callback or a concurrent run ended it since the snapshot:
		// nothing applied, and nothing claimed as fixed.
		return "not fixed: the hold is " + res.EndedAs + " by now", false, res.EndedAs, nil
	case res.TransactionID != "":
		return fmt.Sprintf("fixed: captured as %s, journal transaction %s", res.Reference, res.TransactionID), true, "", nil
	}
	return fmt.Sprintf("fixed: released as %s, reason %s", res.Reference, ReleaseReason), true, "", nil
}
