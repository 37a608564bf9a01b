package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

// cannedAnswers answers every callback 200 with a sealed answer made
// beforehand: approved, holdReference h-1 for an authorize.
type cannedAnswers map[string][]byte // by path

func (c cannedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, req.Body)
	_ = req.Body.Close()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c[req.URL.Path])), Request: req}, nil
}

// BenchmarkCycleGenerator measures the load generator's own work for one
// bench cycle, without the network: the authorize's and the capture's
// claims written and sealed, each answer opened and checked (the answers
// are sealed beforehand, so their cost is not counted). cpu-µs/op is the
// process's CPU time per cycle (ns/op is wall time, longer on a busy
// machine); the loopback round trips and the scheduler's work for them
// come on top in a real run.
//
//	go test ./loadtest -run '^$' -bench CycleGenerator -benchmem
func BenchmarkCycleGenerator(b *testing.B) {
	secret := make([]byte, envelope.SecretSize)
	_, _ = rand.Read(secret)
	key := envelope.Key{ID: "bench", Secret: secret}.Prepared()
	answer := func(endpoint string, d ledger.Decision) []byte {
		token, err := envelope.Seal(key, envelope.FormClaims, claims.AnswerClaims(time.Now(), endpoint, "k", d))
		if err != nil {
			b.Fatal(err)
		}
		return []byte(`{"response":"` + token + `"}`)
	}
	canned := cannedAnswers{
		"/ledger/" + claims.Authorize: answer(claims.Authorize, ledger.Decision{Outcome: "approved", Reference: "hold_abcdefghijklmnopqrstuvwxyz"}),
		"/ledger/" + claims.Capture:   answer(claims.Capture, ledger.Decision{Outcome: "approved", Reference: "cap_abcdefghijklmnopqrstuvwxyz"}),
	}
	client := &caller.Client{BaseURL: "http://ledgerd.invalid/ledger", Key: key, HTTP: &http.Client{Transport: canned}, RawOnly: true}
	w := &cycleWorker{statuses: map[int]int{}}
	a := accountSeed{OwnerExternalID: "lt7lwxmwy6hl5a-o-0421", SourceToken: "lt7lwxmwy6hl5a-src-0421"}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for range b.N {
		r := w.send(ctx, client, claims.Authorize, authorizeJSON("lt7lwxmwy6hl5a-r0-c3-1234", "local", a, "57.31"))
		if r == nil || r.Outcome() != "approved" {
			b.Fatal("authorize not approved")
		}
		r = w.send(ctx, client, claims.Capture, captureJSON("lt7lwxmwy6hl5a-r0-c3-1234", "local", r.Str("holdReference")))
		if r == nil || r.Outcome() != "approved" {
			b.Fatal("capture not approved")
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
