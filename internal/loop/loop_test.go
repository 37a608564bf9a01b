package loop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/provider-ledger/adapter/internal/loop"
)

func TestLoop(t *testing.T) {
	t.Parallel()
	t.Run("StartTwiceIsAnError", func(t *testing.T) {
		t.Parallel()
		var l loop.Loop
		run := func(context.Context) {}
		if err := l.Start(context.Background(), time.Hour, false, run); err != nil {
			t.Fatal(err)
		}
		defer l.Stop()
		if err := l.Start(context.Background(), time.Hour, false, run); !errors.Is(err, loop.ErrStarted) {
			t.Fatalf("second Start: %v", err)
		}
	})
	t.Run("StopCancelsTheRunInProgressAndRestartWorks", func(t *testing.T) {
		t.Parallel()
		var l loop.Loop
		started := make(chan struct{})
		if err := l.Start(context.Background(), time.Hour, true, func(ctx context.Context) {
			close(started)
			<-ctx.Done()
		}); err != nil {
			t.Fatal(err)
		}
		<-started
		l.Stop() // returns only once the run saw its context end
		if l.Running() {
			t.Fatal("running after Stop")
		}
		if err := l.Start(context.Background(), time.Hour, false, func(context.Context) {}); err != nil {
			t.Fatalf("restart: %v", err)
		}
		l.Stop()
		l.Stop() // no-op
	})
	t.Run("ZeroIntervalRefused", func(t *testing.T) {
		t.Parallel()
		var l loop.Loop
		if err := l.Start(context.Background(), 0, false, func(context.Context) {}); err == nil {
			t.Fatal("accepted a zero interval")
		}
	})
}

// TestLoopClock runs the loop on a virtual clock.
func TestLoopClock(t *testing.T) {
	t.Parallel()
	t.Run("RunsImmediatelyAndOnTicksUntilStop", func(t *testing.T) {
		t.Parallel()
		// In a synctest bubble the clock is virtual: a time.Sleep below
		// returns as soon as every goroutine of the bubble is blocked, with
		// the clock moved on, and synctest.Wait returns once the loop's
		// goroutine is blocked again (on its ticker, or gone). Nothing
		// waits in real time, and a loop still ticking after Stop would
		// both run again and leave a goroutine the bubble reports.
		synctest.Test(t, func(t *testing.T) {
			var l loop.Loop
			var n atomic.Int32
			if err := l.Start(context.Background(), time.Minute, true, func(context.Context) { n.Add(1) }); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if got := n.Load(); got != 1 {
				t.Fatalf("ran %d times at Start, want 1 (immediate)", got)
			}
			time.Sleep(3 * time.Minute)
			synctest.Wait()
			if got := n.Load(); got != 4 {
				t.Fatalf("ran %d times after three intervals, want 4", got)
			}
			l.Stop()
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if got := n.Load(); got != 4 {
				t.Fatalf("ran %d times, %d after Stop returned", got, got-4)
			}
		})
	})
	t.Run("ACancelledContextEndsTheLoop", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			var l loop.Loop
			var n atomic.Int32
			ctx, cancel := context.WithCancel(context.Background())
			if err := l.Start(ctx, time.Minute, false, func(context.Context) { n.Add(1) }); err != nil {
				t.Fatal(err)
			}
			cancel()
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			if got := n.Load(); got != 0 {
				t.Fatalf("ran %d times after its context ended", got)
			}
			l.Stop() // returns at once: the loop has ended
		})
	})
}
