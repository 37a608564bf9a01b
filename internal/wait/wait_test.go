package wait

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoll: a condition that comes is waited for; one that never comes
// is given up on; UntilErr returns once the check passes.
func TestPoll(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t, "three increments", func() bool { return n.Load() == 3 })
	if poll(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("poll reported a condition that never held")
	}
	calls := 0
	UntilErr(t, "the third check", func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 3 {
		t.Fatalf("UntilErr checked %d times, want 3 (it stops at the first nil)", calls)
	}
}
