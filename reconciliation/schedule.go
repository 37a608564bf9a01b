package reconciliation

import (
	"context"
	"errors"
	"log/slog"
	"time"
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
	conn, err := r.cfg.Pool.Acquire(ctx)
	if err != nil {
		return Report{}, false, err
	}
	var got bool
	if err := conn.QueryRow(ctx, tryLockSQL, LockKey).Scan(&got); err != nil || !got {
		conn.Release()
		return Report{}, false, err
	}
	defer func() {
		// Unlock even when ctx has ended; if that fails, closing the
		// session drops the lock (and the pool discards the connection).
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var unlocked bool
		if err := conn.QueryRow(uctx, unlockSQL, LockKey).Scan(&unlocked); err != nil || !unlocked {
			r.log.Warn("reconciliation: advisory unlock failed; closing the session", "err", err)
			_ = conn.Conn().Close(uctx)
		}
		conn.Release()
	}()
	rep, err = r.Run(ctx, fix)
	return rep, true, err
}

// Start runs a reconciliation every Config.Every (fix as
// Config.FixOnSchedule) until Stop or until ctx ends; a replica that does
// not get the advisory lock skips the tick. Every 0: Start does nothing.
// Starting a started Reconciler is an error.
func (r *Reconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return errors.New("reconciliation: already started")
	}
	if r.cfg.Every == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r.cancel, r.stopped = cancel, make(chan struct{})
	go r.loop(ctx, r.cfg.Every, r.stopped)
	return nil
}

// Stop ends the schedule and waits for a run in progress to return (its
// context is cancelled). Stopping a stopped Reconciler does nothing.
func (r *Reconciler) Stop() {
	r.mu.Lock()
	cancel, stopped := r.cancel, r.stopped
	r.cancel, r.stopped = nil, nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-stopped
}

func (r *Reconciler) loop(ctx context.Context, every time.Duration, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.runOnce(ctx)
		}
	}
}

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
