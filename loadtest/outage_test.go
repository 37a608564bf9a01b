package loadtest_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
)

// outageProxy stands between the storm and ledgerd's callbacks. From its
// start-th callback it has an outage of length callbacks (none when
// length < 0: it never ends): every other callback reaches ledgerd, which
// applies it, and its answer is lost (the connection closed); the rest are
// answered 503 without reaching ledgerd. GETs (the storm's probe) always
// pass.
type outageProxy struct {
	next          http.Handler
	start, length int

	mu                   sync.Mutex
	calls, lost, refused int
}

func (p *outageProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.next.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.calls++
	n := p.calls - p.start
	down := n >= 0 && (p.length < 0 || n < p.length)
	if down && n%2 == 0 {
		p.lost++
	} else if down {
		p.refused++
	}
	p.mu.Unlock()
	switch {
	case !down:
		p.next.ServeHTTP(w, r)
	case n%2 == 0:
		p.next.ServeHTTP(httptest.NewRecorder(), r) // applied, answer lost
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
	default:
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"type":"urn:test:outage","status":503}`))
	}
}

func proxied(t *testing.T, l *ledgerd, p *outageProxy) *ledgerd {
	t.Helper()
	u, err := url.Parse(l.callbacks)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the storm's own timeouts cancel forwarded callbacks
	p.next = rp
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return &ledgerd{callbacks: srv.URL + "/ledger", admin: l.admin, dbURL: l.dbURL}
}

// TestStormOutage: an outage long enough for the storm to give requests up
// (some applied by ledgerd with their answers lost, some never received)
// is resolved by resending them once ledgerd answers again: the money
// checks are exact and pass, and the report counts them as given up and
// resolved, not lost.
func TestStormOutage(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd through an outage")
	t.Parallel()
	// Each request is given up after at most 30 attempts, so 300 failed
	// attempts give up at least 10.
	p := &outageProxy{start: 20, length: 300}
	l := proxied(t, startLedgerd(t), p)
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errs := run(t, stormArgs(l, report, "--give-up-after", "200ms"), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	o := r.Overall
	if o.GivenUp < 10 || o.Resolved != o.GivenUp || o.Unresolved != 0 || o.Lost != 0 || p.lost < 100 {
		t.Fatalf("overall %+v; the proxy lost %d answers of applied callbacks and refused %d", o, p.lost, p.refused)
	}
	for _, name := range []string{"accounts:", "holds:", "requests:", "replays:"} {
		if c := check(r, name); c == nil || !c.OK || c.Checked == 0 || c.Unsettled != 0 {
			t.Errorf("%s check %+v", name, c)
		}
	}
	if rc := r.Reconciliation; !rc.Checked || rc.Unexpected != 0 {
		t.Errorf("reconciliation %+v", rc)
	}
	if !strings.Contains(out, "given up after retries") || !strings.Contains(errs, "resending") {
		t.Errorf("the summary does not say what was given up:\n%s\n%s", out, errs)
	}
}

// TestStormOutageUnresolved: an outage that never ends leaves requests
// unresolved: the run fails on them, while the money checks leave out only
// what they touch and find nothing lost.
func TestStormOutageUnresolved(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd through an outage")
	t.Parallel()
	p := &outageProxy{start: 30, length: -1}
	l := proxied(t, startLedgerd(t), p)
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errs := run(t, stormArgs(l, report, "--give-up-after", "100ms", "--resolve-timeout", "300ms"), loadtest.Hooks{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	o := r.Overall
	if o.GivenUp == 0 || o.Unresolved != o.GivenUp || o.Resolved != 0 || o.Lost != 0 {
		t.Fatalf("overall %+v", o)
	}
	req := check(r, "requests:")
	if req == nil || req.OK || !strings.Contains(strings.Join(req.Detail, "\n"), "unresolved") {
		t.Fatalf("requests check %+v", req)
	}
	acc, holds := check(r, "accounts:"), check(r, "holds:")
	if acc == nil || !acc.OK || acc.Unsettled == 0 || holds == nil || !holds.OK || holds.Unsettled == 0 {
		t.Fatalf("money checks %+v %+v", acc, holds)
	}
}

// TestThresholds: the run completes, then each failed --threshold is
// named and makes the exit status 1; passed ones are listed as checks; a
// threshold that does not parse is a usage error before anything is sent.
func TestThresholds(t *testing.T) {
	tooltest.SkipShort(t, "storms a ledgerd")
	t.Parallel()
	l := startLedgerd(t)
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errs := run(t, stormArgs(l, report, "--threshold", "p99<3600s", "--threshold", "errors<=100%",
		"--threshold", "authorize:p50<1us"), loadtest.Hooks{})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	r := readReport(t, report)
	for name, ok := range map[string]bool{"threshold p99<3600s:": true, "threshold errors<=100%:": true, "threshold authorize:p50<1us:": false,
		"accounts:": true, "holds:": true, "requests:": true} {
		if c := check(r, name); c == nil || c.OK != ok {
			t.Errorf("%s %+v, want ok %v", name, c, ok)
		}
	}
	if !strings.Contains(out, "FAIL threshold authorize:p50<1us: p50 ") {
		t.Errorf("the failed threshold is not named:\n%s", out)
	}
	code, out, errs = run(t, stormArgs(l, report, "--threshold", "p99<250"), loadtest.Hooks{})
	if code != 2 || !strings.Contains(errs, "needs a unit") {
		t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errs)
	}
}
