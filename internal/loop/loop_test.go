package loop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/loop"
)

func TestLoop(t *testing.T) {
	t.Parallel()
	t.Run("RunsImmediatelyAndOnTicksUntilStop", func(t *testing.T) {
		t.Parallel()
		var l loop.Loop
		var n atomic.Int32
		ticked := make(chan struct{}, 10)
		if err := l.Start(context.Background(), time.Millisecond, true, func(context.Context) {
			n.Add(1)
			ticked <- struct{}{}
		}); err != nil {
			t.Fatal(err)
		}
		<-ticked
		<-ticked
		l.Stop()
		after := n.Load()
		if after < 2 {
			t.Fatalf("ran %d times, want at least 2", after)
		}
		time.Sleep(5 * time.Millisecond)
		if n.Load() != after {
			t.Fatal("ran after Stop returned")
		}
	})
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
