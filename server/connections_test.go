//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// childEnv names the open files limit ("soft:hard", either may be empty
// for unchanged) under which TestLedgerdChild runs ledgerd.
const childEnv = "LEDGERD_TEST_CHILD_NOFILE"

// TestLedgerdChild is not a test: it is ledgerd in a child process of the
// tests below, under the open files limit they set (a limit applies to the
// whole process, so it cannot be lowered for one test among parallel
// ones). It prints "LISTENING <callbacks> <admin>" and runs until its
// stdin closes.
func TestLedgerdChild(t *testing.T) {
	spec, ok := os.LookupEnv(childEnv)
	if !ok {
		t.Skip("the ledgerd child process of TestConnectionsUnderALowFileLimit and TestFileLimitRaised")
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	soft, hard, _ := strings.Cut(spec, ":")
	if soft != "" {
		lim.Cur, _ = strconv.ParseUint(soft, 10, 64)
	}
	if hard != "" {
		lim.Max, _ = strconv.ParseUint(hard, 10, 64)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(nil, os.Getenv, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	err = server.Run(ctx, cfg, server.NewLogger(os.Stderr, false, slog.LevelInfo), server.Hooks{Started: func(cb, adm string) {
		fmt.Printf("LISTENING %s %s\n", cb, adm)
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// child is a ledgerd running in a child process.
type child struct {
	pid              int
	callbacks, admin string
	secret           []byte
	log              *syncWriter
}

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startChild runs ledgerd on a fresh database in a child process under the
// open files limit nofile ("soft:hard").
func startChild(t *testing.T, nofile string) *child {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("open files limits are checked through /proc on Linux")
	}
	c := &child{secret: randomKey(t), log: &syncWriter{}}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLedgerdChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+nofile, "DATABASE_URL="+storetest.URL(t), "LEDGER_PROVIDER_ID=bank-fd", "LEDGER_KEK="+base64.StdEncoding.EncodeToString(randomKey(t)),
		"LEDGER_SIGNING_SECRETS="+base64.StdEncoding.EncodeToString(c.secret), "LEDGER_LISTEN=127.0.0.1:0",
		"LEDGER_ADMIN_LISTEN=127.0.0.1:0", "LEDGER_DATA_DIR="+t.TempDir(), "LEDGER_RECONCILE_EVERY=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = c.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	started := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "LISTENING" {
				started <- f[1:]
			}
		}
		close(started)
	}()
	select {
	case addrs, ok := <-started:
		if !ok {
			t.Fatalf("the ledgerd child exited:\n%s", c.log)
		}
		c.callbacks, c.admin = addrs[0], addrs[1]
	case <-time.After(90 * time.Second):
		t.Fatalf("the ledgerd child did not start:\n%s", c.log)
	}
	return c
}

// metric returns the value of the series named by prefix (name and
// labels) on the child's /metrics, or -1.
func (c *child) metric(t *testing.T, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + c.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// TestConnectionsUnderALowFileLimit: under an open files limit of 256 (soft
// and hard), 300 keep-alive connections left idle on the callback listener
// do not exhaust ledgerd's descriptors: the idlest are closed for new ones,
// and valid callbacks are answered 200 at once. (Before the cap, accept
// failed with EMFILE and a valid callback hung.)
func TestConnectionsUnderALowFileLimit(t *testing.T) {
	t.Parallel()
	c := startChild(t, "256:256")
	// 300 connections, ten at a time, each left idle after one request
	// (405: the callbacks are POST). A batch not answered ends the opening.
	var answered atomic.Int64
	for batch := int64(1); batch <= 30 && answered.Load() == 10*(batch-1); batch++ {
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				conn, err := net.Dial("tcp", c.callbacks)
				if err != nil {
					return
				}
				t.Cleanup(func() { conn.Close() })
				_, _ = io.WriteString(conn, "GET /ledger/authorize HTTP/1.1\r\nHost: ledger\r\n\r\n")
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
					resp.Body.Close()
					answered.Add(1)
				}
			})
		}
		wg.Wait()
	}
	// Valid callbacks on new connections, while the idle ones are open.
	client := &caller.Client{BaseURL: "http://" + c.callbacks + "/ledger", Key: envelope.Key{Secret: c.secret},
		HTTP: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	var took []time.Duration
	for i := range 6 {
		t0 := time.Now()
		r, err := client.Send(context.Background(), claims.Capture, map[string]any{"providerID": "bank-fd",
			"payoutID": fmt.Sprintf("fd-p%d", i), "holdReference": fmt.Sprintf("hold_fd%d", i), "idempotencyKey": fmt.Sprintf("fd-k%d", i)})
		if err != nil || r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("callback %d of 6 after 300 idle connections (%d answered): %+v %v\n%s", i+1, answered.Load(), r, err, c.log)
		}
		took = append(took, time.Since(t0).Round(time.Microsecond))
	}
	if answered.Load() != 300 {
		t.Errorf("%d of the 300 connections answered", answered.Load())
	}
	cap := c.metric(t, `ledgerd_connections_max{listener="callbacks"}`)
	if cap < 16 || cap > 128 {
		t.Errorf("connection cap under 256 descriptors: %v", cap)
	}
	evicted := c.metric(t, `ledgerd_connections_evicted_total{listener="callbacks"}`)
	if evicted < 300-cap {
		t.Errorf("evicted %v of 300 connections with a cap of %v", evicted, cap)
	}
	if refused := c.metric(t, `ledgerd_connections_refused_total{listener="callbacks"}`); refused != 0 {
		t.Errorf("%v connections refused while idle ones could be closed", refused)
	}
	if open := c.metric(t, `ledgerd_connections_open{listener="callbacks"}`); open > cap {
		t.Errorf("open connections %v over the cap %v", open, cap)
	}
	lines := strings.Count(c.log.String(), `"msg":"connection cap reached`)
	if lines == 0 || float64(lines) > evicted/10 {
		t.Errorf("%d log lines for %v evictions", lines, evicted)
	}
	t.Logf("open files limit 256: cap %v per listener; 300 idle connections answered, %v evicted (%d log lines); six callbacks answered 200 in %v",
		cap, evicted, lines, took)
}

// TestFileLimitRaised: ledgerd raises its soft open files limit to the hard
// limit at start, and logs both.
func TestFileLimitRaised(t *testing.T) {
	t.Parallel()
	c := startChild(t, "200:")
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Max open files\s+(\d+)\s+(\d+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no open files limit in:\n%s", b)
	}
	if m[1] != m[2] || m[1] == "200" {
		t.Fatalf("ledgerd's open files limit: soft %s, hard %s", m[1], m[2])
	}
	if !strings.Contains(c.log.String(), `"msg":"open files limit","soft":`+m[1]+`,"hard":`+m[2]) {
		t.Fatalf("the limit is not logged:\n%s", c.log)
	}
}
