package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
)

// fakeLedger answers callbacks from a script of statuses, then approves;
// every 200 answer is sealed like ledgerd's.
type fakeLedger struct {
	mu     sync.Mutex
	script []int
	calls  int
	key    envelope.Key
	ref    func(call int) string
}

func (f *fakeLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls++
	call := f.calls
	status := http.StatusOK
	if len(f.script) > 0 {
		status, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if status != http.StatusOK {
		w.Header().Set("Content-Type", "application/problem+json")
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"type":"urn:provider-ledger:problem:scripted","status":%d}`, status)
		return
	}
	var body struct{ Request string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	opened, err := envelope.Open(body.Request, []envelope.Key{f.key})
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h, _ := claims.Parse(opened.Claims)
	var svc map[string]any
	_ = json.Unmarshal(h.Service, &svc)
	claims, _ := claims.BuildResponse(time.Now(), map[string]any{"outcome": "approved", "holdReference": f.ref(call), "idempotencyKey": svc["idempotencyKey"]})
	token, _ := opened.Reply(claims)
	_ = json.NewEncoder(w).Encode(map[string]string{"response": token})
}

func testRunner(t *testing.T, f *fakeLedger) *runner {
	t.Helper()
	f.key = envelope.Key{ID: "k", Secret: bytes.Repeat([]byte{7}, 32)}
	if f.ref == nil {
		f.ref = func(int) string { return "hold-1" }
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m := newModel("p")
	m.payouts["p-1"] = &payoutModel{}
	return newRunner(&caller.Client{BaseURL: srv.URL + "/ledger", Key: f.key, HTTP: srv.Client()}, loop{conc: 1}, m, time.Now())
}

func newRound() *roundState { return &roundState{finals: map[int]string{}} }

func authStats(x *runner) *endpointStats { return x.stats[endpointIndex(claims.Authorize)] }

func authorizeRequest() request {
	return request{Seq: 1, Endpoint: claims.Authorize, Service: map[string]any{"payoutID": "p-1", "providerID": "bank", "idempotencyKey": "k-1"}}
}

// TestRetryPolicy: 408, 429 and 5xx are retried with the same key until an
// answer; other 4xx stop at once and fail the run.
func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	t.Run("RetriesRetryableStatuses", func(t *testing.T) {
		t.Parallel()
		f := &fakeLedger{script: []int{503, 429, 408, 500}}
		x := testRunner(t, f)
		svc, _ := x.send(context.Background(), authorizeRequest(), false, time.Time{}, true)
		st := authStats(x)
		if svc == nil || str(svc, "holdReference") != "hold-1" || f.calls != 5 || st.retried != 4 || st.sent != 5 || st.ok != 1 || x.nProblem != 0 {
			t.Fatalf("svc %v calls %d stats %+v problems %v", svc, f.calls, st, x.problems)
		}
		if st.statuses[503] != 1 || st.statuses[429] != 1 || st.statuses[408] != 1 || st.statuses[500] != 1 {
			t.Fatalf("statuses %v", st.statuses)
		}
	})
	for _, status := range []int{400, 403, 404, 413, 422} {
		t.Run("StopsOn"+http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			f := &fakeLedger{script: []int{status}}
			x := testRunner(t, f)
			if svc, _ := x.send(context.Background(), authorizeRequest(), false, time.Time{}, true); svc != nil || f.calls != 1 || x.nProblem != 1 ||
				!strings.Contains(x.problems[0], "terminal status") {
				t.Fatalf("svc %v calls %d problems %v", svc, f.calls, x.problems)
			}
		})
	}
	t.Run("RetriesTransportErrors", func(t *testing.T) {
		t.Parallel()
		x := newRunner(&caller.Client{BaseURL: "http://127.0.0.1:1/ledger", Key: envelope.Key{Secret: bytes.Repeat([]byte{7}, 32)}}, loop{conc: 1}, nil, time.Now())
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if svc, _ := x.send(ctx, authorizeRequest(), false, time.Time{}, true); svc != nil {
			t.Fatal("an answer from nowhere")
		}
		if st := authStats(x); st.transport < 2 || st.retried < 1 {
			t.Fatalf("transport errors were not retried: %+v", st)
		}
	})
}

// TestDeliver: the delivery plan's repeats are sent, counted and checked
// for consistency; an answer that differs for one key fails the check.
func TestDeliver(t *testing.T) {
	t.Parallel()
	t.Run("RepeatsAgree", func(t *testing.T) {
		t.Parallel()
		f := &fakeLedger{}
		x := testRunner(t, f)
		r := authorizeRequest()
		r.Delivery = delivery{Duplicate: true, Concurrent: true, Drop: true}
		x.deliver(context.Background(), newRound(), r, time.Time{})
		st := authStats(x)
		// drop (1) + two concurrent sends + one duplicate. The dropped send
		// may time out client-side before it reaches the server (a drop is
		// a timeout of 0.2 to 10 ms), so the server sees 3 or 4 calls.
		if (f.calls != 3 && f.calls != 4) || st.sent != 4 || st.replays != 2 || st.dropped != 1 || st.requests != 1 || x.nProblem != 0 {
			t.Fatalf("calls %d stats %+v problems %v", f.calls, st, x.problems)
		}
		if repeated, diffs, n := x.consistency(); repeated != 1 || n != 0 {
			t.Fatalf("consistency: %d %v", repeated, diffs)
		}
		if ref := x.model.holdRef("p-1"); ref != "hold-1" {
			t.Fatalf("hold reference in the model: %q", ref)
		}
	})
	t.Run("DifferentAnswersFail", func(t *testing.T) {
		t.Parallel()
		f := &fakeLedger{ref: func(call int) string { return "hold-" + string(rune('0'+call)) }}
		x := testRunner(t, f)
		r := authorizeRequest()
		r.Delivery = delivery{Duplicate: true}
		x.deliver(context.Background(), newRound(), r, time.Time{})
		if repeated, diffs, n := x.consistency(); repeated != 1 || n != 1 || !strings.Contains(diffs[0], "hold-1") || !strings.Contains(diffs[0], "hold-2") {
			t.Fatalf("consistency: %d %d %v", repeated, n, diffs)
		}
	})
	t.Run("SecondAttemptMustMatch", func(t *testing.T) {
		t.Parallel()
		f := &fakeLedger{ref: func(call int) string { return "hold-" + string(rune('0'+call)) }}
		x := testRunner(t, f)
		rs := newRound()
		x.deliver(context.Background(), rs, authorizeRequest(), time.Time{})
		second := authorizeRequest()
		second.Seq, second.SecondOf = 2, 1
		second.Service = clone(second.Service)
		second.Service["idempotencyKey"] = "k-2"
		x.deliver(context.Background(), rs, second, time.Time{})
		if x.nProblem != 1 || !strings.Contains(x.problems[0], "second attempt") {
			t.Fatalf("problems %v", x.problems)
		}
	})
	t.Run("CaptureWithoutHoldIsNotSent", func(t *testing.T) {
		t.Parallel()
		f := &fakeLedger{}
		x := testRunner(t, f)
		x.deliver(context.Background(), newRound(), request{Seq: 3, Endpoint: claims.Capture, HoldOf: "p-9", Service: map[string]any{"idempotencyKey": "k"}}, time.Time{})
		if f.calls != 0 || x.nProblem != 1 {
			t.Fatalf("calls %d problems %v", f.calls, x.problems)
		}
	})
}

// TestPlan: a generated storm is deterministic, funds every payout, refers
// only backwards, and survives a write/read round trip, with or without a
// new prefix.
func TestPlan(t *testing.T) {
	t.Parallel()
	shape := Shape{Seed: 3, Prefix: "ltaxq1", ProviderID: "bank", Accounts: 3, Payouts: 60, Credits: 20, Duplicates: 0.1,
		ConcurrentDupes: 0.1, Drop: 0.1, CaptureRatio: 0.5, LeaveHeld: 0.2, SecondAttempts: 0.3}
	p := Generate(shape)
	again, _ := json.Marshal(Generate(shape))
	if b, _ := json.Marshal(p); !bytes.Equal(b, again) {
		t.Fatal("Generate is not deterministic")
	}
	e := newModel(shape.Prefix)
	if err := e.add(p); err != nil {
		t.Fatal(err)
	}
	seen := map[int]request{}
	payouts := map[string]bool{}
	lastPhase := 0
	for _, r := range p.Requests {
		if r.Phase < lastPhase {
			t.Fatalf("seq %d: phase %d after %d", r.Seq, r.Phase, lastPhase)
		}
		lastPhase = r.Phase
		if r.SecondOf != 0 {
			first, ok := seen[r.SecondOf]
			if !ok || first.Phase >= r.Phase || first.Endpoint != r.Endpoint || str(first.Service, "idempotencyKey") == str(r.Service, "idempotencyKey") {
				t.Fatalf("seq %d: second attempt of %d: %+v", r.Seq, r.SecondOf, first)
			}
		}
		if r.HoldOf != "" && !payouts[r.HoldOf] {
			t.Fatalf("seq %d: %s of a payout not authorized before", r.Seq, r.Endpoint)
		}
		if r.Endpoint == claims.Authorize {
			payouts[str(r.Service, "payoutID")] = true
		}
		if !strings.HasPrefix(str(r.Service, "idempotencyKey"), shape.Prefix+"-") {
			t.Fatalf("seq %d: key without the run prefix", r.Seq)
		}
		seen[r.Seq] = r
	}
	for _, a := range p.Header.Accounts {
		if am := e.accounts[a.AccountID]; am.balance-am.held < 0 {
			t.Fatalf("account %s is not funded for its payouts", a.AccountID)
		}
	}
	var buf bytes.Buffer
	if err := writePlan(&buf, p); err != nil {
		t.Fatal(err)
	}
	back, err := readPlan(bytes.NewReader(buf.Bytes()), "")
	if err != nil || len(back.Requests) != len(p.Requests) || back.Header.Prefix != shape.Prefix {
		t.Fatalf("read back: %v", err)
	}
	if eb := newModel(shape.Prefix); eb.add(back) != nil || len(eb.payouts) != 60 {
		t.Fatalf("expectation of the read-back storm: %v", err)
	}
	fresh, err := readPlan(bytes.NewReader(buf.Bytes()), "ltzzz9")
	if err != nil || fresh.Header.Prefix != "ltzzz9" || strings.Contains(func() string { b, _ := json.Marshal(fresh); return string(b) }(), shape.Prefix) {
		t.Fatalf("reprefixed: %v", err)
	}
	for _, bad := range []string{"", `{"kind":"header","version":99}`, buf.String() + `{"seq":1,"endpoint":"refund","service":{"idempotencyKey":"k"}}` + "\n"} {
		if _, err := readPlan(strings.NewReader(bad), ""); err == nil {
			t.Errorf("Read accepted %.60q", bad)
		}
	}
}
