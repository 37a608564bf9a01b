// Package loop runs a background job on an interval: the one start/stop
// loop of ledgerd's background jobs (the keyring loader, the purger of
// stored callback answers, the reconciliation schedule). A job is a Config
// with defaults, one step that tests call directly, and a Loop that calls
// that step on every tick until Stop or until its context ends; a
// cancelled context is not an error. The step is unexported (runOnce) when
// the job's tests live in its package, as the keyring loader's and the
// reconciliation schedule's do; callbacks.Purger exports it (RunOnce),
// since its tests need a database and live in package callbacks_test.
package loop

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Loop calls a function every Interval, from Start until Stop. The zero
// value is ready to use. Safe for concurrent use.
type Loop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// ErrStarted is returned by Start on a running Loop.
var ErrStarted = errors.New("loop: already started")

// Start runs run every interval in a goroutine of its own, first at once
// when immediate is true, until Stop is called or ctx ends. A Loop that
// was stopped may be started again.
func (l *Loop) Start(ctx context.Context, interval time.Duration, immediate bool, run func(context.Context)) error {
	if interval <= 0 {
		return errors.New("loop: the interval must be positive")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		return ErrStarted
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	l.cancel, l.done = cancel, done
	go func() {
		defer close(done)
		if immediate {
			run(ctx)
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				run(ctx)
			}
		}
	}()
	return nil
}

// Stop ends the loop and waits for a run in progress to return (its
// context is cancelled). Stopping a stopped Loop does nothing.
func (l *Loop) Stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Running reports whether the loop is started.
func (l *Loop) Running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancel != nil
}
