package storetest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// EachSubtestAlone proves that every subtest of each parent test (a
// decision table of the calling package) sets up what it needs: it lists
// the parent's subtests by running it once, then runs each subtest alone
// in a process of its own, the test binary again with
// -test.run '^Parent$/^Sub$', two at a time, and fails for each that does
// not pass there. A row that leans on an earlier row's effects, or a
// parent that checks state its subtests share, fails here.
func EachSubtestAlone(t *testing.T, parents ...string) {
	t.Helper()
	for _, parent := range parents {
		subs := subtests(t, parent)
		if len(subs) == 0 {
			t.Errorf("%s has no subtests: nothing to run alone", parent)
		}
		sem := make(chan struct{}, 2)
		var wg sync.WaitGroup
		for _, sub := range subs {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				out, err := runTest(t, "^"+regexp.QuoteMeta(parent)+"$/^"+regexp.QuoteMeta(sub)+"$")
				if err != nil || !bytes.Contains(out, []byte("--- PASS: "+parent+"/"+sub+" ")) {
					t.Errorf("%s/%s does not pass alone (%v):\n%s", parent, sub, err, out)
				}
			})
		}
		wg.Wait()
	}
}

// subtests runs parent once and returns the names of its direct subtests.
func subtests(t *testing.T, parent string) []string {
	t.Helper()
	out, err := runTest(t, "^"+regexp.QuoteMeta(parent)+"$")
	if err != nil {
		t.Fatalf("%s fails as a whole (%v):\n%s", parent, err, out)
	}
	var subs []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(string(out), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "=== RUN   "+parent+"/")
		if ok && !strings.Contains(name, "/") && !seen[name] {
			seen[name] = true
			subs = append(subs, name)
		}
	}
	return subs
}

// runTest runs the current test binary's tests matching pattern, verbose.
func runTest(t *testing.T, pattern string) ([]byte, error) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", pattern, "-test.v", "-test.count=1")
	return cmd.CombinedOutput()
}
