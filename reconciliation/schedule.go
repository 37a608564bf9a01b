package reconciliation

import (
	"context"
	"log/slog"
)

// LockKey is the Postgres advisory lock key that scheduled runs take, so one
// replica at a time runs the schedule ("reconcil" in ASCII).
const LockKey int64 = 0x7265636f6e63696c

// TryRun runs one reconciliation like Run, but only if no other session
// holds the advisory lock LockKey; ran is false (and nothing is run or
// stored) when one does. The lock is a session lock on a connection taken
// from the pool for the whole run, so the pool needs a second connection
// for the run itself.
func (r *Reconciler) TryRun(ctx context.Context, fix bool) (rep Report, ran bool, err error) {
	unlock, ok, err := r.cfg.DB.TryLock(ctx, LockKey)
	if err != nil || !ok {
		return Report{}, false, err
	}
	defer unlock()
	rep, err = r.Run(ctx, fix)
	return rep, true, err
}

// Start runs a reconciliation every Config.Every (fix as
// Config.FixOnSchedule) until Stop or until ctx ends; a replica that does
// not get the advisory lock skips the tick. Every 0: Start does nothing.
// Starting a started Reconciler is an error.
func (r *Reconciler) Start(ctx context.Context) error {
	if r.cfg.Every == 0 {
		return nil
	}
	return r.loop.Start(ctx, r.cfg.Every, false, r.runOnce)
}

// Stop ends the schedule and waits for a run in progress to return (its
// context is cancelled). Stopping a stopped Reconciler does nothing.
func (r *Reconciler) Stop() { r.loop.Stop() }

// runOnce is one tick of the schedule.
func (r *Reconciler) runOnce(ctx context.Context) {
	rep, ran, err := r.TryRun(ctx, r.cfg.FixOnSchedule)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping: not an error.
	case err != nil:
		r.log.Error("reconciliation: run failed", "err", err)
	case !ran:
		r.log.Debug("reconciliation: skipped, another replica is running it")
	default:
		fixed := 0
		for _, f := range rep.Findings {
			if f.Fixed {
				fixed++
			}
		}
		level := slog.LevelInfo
		if rep.Status != StatusClean {
			level = slog.LevelWarn
		}
		r.log.Log(ctx, level, "reconciliation: run finished", "runID", rep.RunID, "status", rep.Status,
			"findings", len(rep.Findings), "fixed", fixed, "took", rep.FinishedOn.Sub(rep.StartedOn))
	}
}
