package callbacks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store/storetest"
)

// cpuClients is how many callbacks the CPU benchmarks keep in flight, as
// loadtest bench's default 16 clients do.
const cpuClients = 16

// processCPU is this process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveAll serves bodies[i] on endpoint through the handler, cpuClients
// at a time, and returns the bodies of the answers (nil for any but 200).
func serveAll(bb *bundle, endpoint string, bodies [][]byte) [][]byte {
	path := "/ledger/" + endpoint
	answers := make([][]byte, len(bodies))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range cpuClients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(bodies[i]))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				bb.server.ServeHTTP(w, r)
				if w.Code == http.StatusOK {
					answers[i] = w.Body.Bytes()
				}
			}
		})
	}
	wg.Wait()
	return answers
}

// serveCPU is serveAll under the benchmark's clock, reporting the
// process's CPU time per callback (cpu-µs/op, user and system): the Go
// side of a callback (open, claims, the statement's driver work, seal, log
// line, metrics), without the HTTP transport and without Postgres's own
// CPU, which runs in other processes. Every answer must be 200.
func serveCPU(b *testing.B, bb *bundle, endpoint string, bodies [][]byte) [][]byte {
	b.Helper()
	b.ResetTimer()
	b.StartTimer()
	cpu0 := processCPU(b)
	answers := serveAll(bb, endpoint, bodies)
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(bodies)), "cpu-µs/op")
	for i, a := range answers {
		if a == nil {
			b.Fatalf("%s %d: not answered 200", endpoint, i)
		}
	}
	return answers
}

// sealBody seals service claims for endpoint into a callback body.
func sealBody(b *testing.B, key envelope.Key, endpoint string, service any) []byte {
	b.Helper()
	c, err := claims.BuildRequest(time.Now(), endpoint, service)
	if err != nil {
		b.Fatal(err)
	}
	token, err := envelope.Seal(key, envelope.FormClaims, c)
	if err != nil {
		b.Fatal(err)
	}
	return []byte(`{"request":"` + token + `"}`)
}

// answerClaim opens a 200 answer body and returns the string claim name
// of its service object, requiring outcome approved.
func answerClaim(b *testing.B, key envelope.Key, body []byte, name string) string {
	b.Helper()
	token, ok := bytes.CutPrefix(body, []byte(`{"response":"`))
	if !ok {
		b.Fatalf("answer %s", body)
	}
	opened, err := envelope.Open(string(bytes.TrimSuffix(token, []byte(`"}`))), []envelope.Key{key})
	if err != nil {
		b.Fatal(err)
	}
	h, err := claims.Parse(opened.Claims)
	if err != nil {
		b.Fatal(err)
	}
	var svc map[string]any
	if err := json.Unmarshal(h.Service, &svc); err != nil || svc["outcome"] != "approved" {
		b.Fatalf("answer %s: %v", h.Service, err)
	}
	s, _ := svc[name].(string)
	return s
}

// BenchmarkCallbackCPU measures the CPU time of the Go side of one
// callback, in process: the handler of ledgerd's callback listener with a
// JSON log line per callback (as ledgerd logs), the real metrics and the
// real Postgres, cpuClients callbacks in flight. Authorize places holds on
// 1,000 funded accounts; capture settles holds placed beforehand. The
// figure to read is cpu-µs/op (the process's CPU, user and system, per
// callback); ns/op is wall time over cpuClients concurrent callbacks.
//
//	go test ./callbacks -run '^$' -bench CallbackCPU -benchtime 3000x -cpuprofile /tmp/cb.prof
func BenchmarkCallbackCPU(b *testing.B) {
	const accounts = 1000
	bb := setup(b, opts{maxInflight: 1000, logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	for c := range accounts {
		storetest.Account(b, bb.db, storetest.AccountOpts{AccountID: fmt.Sprintf("b-%d", c), Owner: fmt.Sprintf("o-%d", c),
			Funds: "1000000", Source: fmt.Sprintf("s-%d", c)})
	}
	run := 0
	authorizes := func(b *testing.B, n int) [][]byte {
		run++
		bodies := make([][]byte, n)
		for i := range bodies {
			c := i % accounts
			bodies[i] = sealBody(b, bb.key, claims.Authorize, authorizeClaims(fmt.Sprintf("cpu-%d-%d", run, i), "k",
				fmt.Sprintf("o-%d", c), fmt.Sprintf("s-%d", c), "1.00", 0))
		}
		return bodies
	}
	b.Run("endpoint=authorize", func(b *testing.B) {
		serveCPU(b, bb, claims.Authorize, authorizes(b, b.N))
	})
	b.Run("endpoint=capture", func(b *testing.B) {
		b.StopTimer()
		held := serveAll(bb, claims.Authorize, authorizes(b, b.N))
		bodies := make([][]byte, b.N)
		for i := range bodies {
			if held[i] == nil {
				b.Fatalf("authorize %d: not answered 200", i)
			}
			hold := answerClaim(b, bb.key, held[i], "holdReference")
			bodies[i] = sealBody(b, bb.key, claims.Capture, captureClaims(fmt.Sprintf("cpu-%d-%d", run, i), "k", hold))
		}
		serveCPU(b, bb, claims.Capture, bodies)
	})
}
