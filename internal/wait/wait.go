// Package wait is how a test waits for something another goroutine, a
// process or a database connection brings about: it polls a condition until
// it holds, instead of sleeping a fixed time and hoping it did. A test
// fails only when the condition never comes within a bound far longer than
// any wait takes on a busy machine; how long a wait took is never an
// assertion (performance is measured by benchmarks).
package wait

import (
	"testing"
	"time"
)

// Deadline bounds every wait: far longer than any condition takes to come
// on a busy 2-core machine, so that reaching it means it never will.
const Deadline = 2 * time.Minute

// interval is how often a condition is checked.
const interval = 10 * time.Millisecond

// Until calls cond until it returns true, and fails t (naming what it
// waited for) when Deadline passes first.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !poll(Deadline, cond) {
		t.Fatalf("waited %s for %s", Deadline, what)
	}
}

// UntilErr calls check until it returns nil, and fails t with the last
// error when Deadline passes first: for a condition whose failure says why
// (a status that is not yet the one wanted, a query that still errs).
func UntilErr(t testing.TB, what string, check func() error) {
	t.Helper()
	var last error
	if !poll(Deadline, func() bool { last = check(); return last == nil }) {
		t.Fatalf("waited %s for %s: %v", Deadline, what, last)
	}
}

// poll reports whether cond held before within passed.
func poll(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(interval) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
