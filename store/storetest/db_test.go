package storetest

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// fakeT is a test as create and reachable see it: it records failures and
// clean-ups instead of acting on them, so a test can play a failed test.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	msgs     []string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}
func (f *fakeT) fail(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
	f.msgs = append(f.msgs, fmt.Sprintf(format, a...))
}
func (f *fakeT) Fatalf(format string, a ...any) { f.fail(format, a...); runtime.Goexit() }
func (f *fakeT) Errorf(format string, a ...any) { f.fail(format, a...) }
func (f *fakeT) Fatal(a ...any)                 { f.fail("%s", fmt.Sprint(a...)); runtime.Goexit() }
func (f *fakeT) Logf(string, ...any)            {}
func (f *fakeT) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }

// run runs fn as the body of the fake test: a Fatal ends it.
func run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// end runs the clean-ups, last first, each to its end or its Fatal, as
// the testing package does.
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		run(f.cleanups[i])
	}
}

// exists reports whether the database of url is on the test server.
func exists(t *testing.T, url string) bool {
	t.Helper()
	name := url[strings.LastIndex(url, "/")+1:]
	name, _, _ = strings.Cut(name, "?")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverConfig(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestDrop: a test's database does not outlive it, whatever became of the
// test, unless asked to be kept.
func TestDrop(t *testing.T) {
	t.Run("Passed", func(t *testing.T) {
		t.Parallel()
		f := &fakeT{TB: t}
		var url string
		run(func() { url = EmptyURL(f) })
		if !exists(t, url) {
			t.Fatal("not created")
		}
		f.end()
		if exists(t, url) || f.failed {
			t.Fatalf("left behind (%v)", f.msgs)
		}
	})
	t.Run("Failed", func(t *testing.T) {
		t.Parallel()
		f := &fakeT{TB: t}
		var url string
		run(func() { url = URL(f) })
		f.Errorf("the test failed")
		f.end()
		if exists(t, url) {
			t.Fatal("the database of a failed test was left behind")
		}
	})
}

// TestKeepFailed: PGTEST_KEEP_FAILED keeps a failed test's database. Not
// parallel: it sets the environment.
func TestKeepFailed(t *testing.T) {
	t.Setenv("PGTEST_KEEP_FAILED", "1")
	f := &fakeT{TB: t}
	var url string
	run(func() { url = EmptyURL(f) })
	f.Errorf("the test failed")
	f.end()
	if !exists(t, url) {
		t.Fatal("not kept")
	}
	drop(t, serverConfig(t), url[strings.LastIndex(url, "/")+1:strings.Index(url, "?")])
	if exists(t, url) {
		t.Fatal("not dropped after all")
	}
}

// TestHintOnce: without a server, the first test says why and how to get
// one, the others say so in one line. Not parallel: it sets the
// environment.
func TestHintOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("TEST_DATABASE_URL", "postgres://postgres@"+addr+"/postgres")
	var fs []*fakeT
	for range 3 {
		f := &fakeT{TB: t}
		run(func() { URL(f) })
		f.end()
		fs = append(fs, f)
	}
	first := strings.Join(fs[0].msgs, "\n")
	if !strings.Contains(first, "cannot connect to Postgres at "+addr+": connection refused") || !strings.Contains(first, Hint) {
		t.Fatalf("first: %s", first)
	}
	for _, f := range fs[1:] {
		if len(f.msgs) != 1 || strings.Contains(f.msgs[0], "\n") || strings.Contains(f.msgs[0], "testpg") ||
			!strings.Contains(f.msgs[0], "no test database server at "+addr) {
			t.Fatalf("later: %q", f.msgs)
		}
	}
}
