package reconciliation

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// TryRun runs one reconciliation like Run, unless another run holds the
// lease: then ran is false, and nothing is run or stored.
func (r *Reconciler) TryRun(ctx context.Context, fix bool) (rep Report, ran bool, err error) {
	rep, err = r.Run(ctx, fix)
	var running *RunningError
	if errors.As(err, &running) {
		return Report{}, false, nil
	}
	return rep, err == nil, err
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
		args := []any{"runID", rep.RunID, "mode", rep.Mode, "fromCheckpoint", rep.FromCheckpoint, "checkpoint", rep.Checkpoint,
			"status", rep.Status, "findings", len(rep.Findings), "fixed", fixed, "took", rep.FinishedOn.Sub(rep.StartedOn)}
		for _, s := range rep.Stages {
			args = append(args, s.Name, s.Took.Round(time.Millisecond))
		}
		r.log.Log(ctx, level, "reconciliation: run finished", args...)
	}
}
