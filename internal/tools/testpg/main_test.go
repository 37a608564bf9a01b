package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPrintsTheURLToExport: testpg prints the line to export, and the URL
// in it reaches a server the tests can use (a superuser); Ctrl-C stops it.
func TestPrintsTheURLToExport(t *testing.T) {
	t.Parallel()
	scratch, err := os.MkdirTemp("", "testpg-") // searchable by the postgres OS user when root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	if err := os.Chmod(scratch, 0o711); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-data-dir", filepath.Join(scratch, "testpg")}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no line on stdout (%v), exit %d", err, <-code)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "export TEST_DATABASE_URL='")
	url, ok2 := strings.CutSuffix(url, "'")
	if !ok || !ok2 {
		t.Fatalf("stdout: %q", line)
	}
	go io.Copy(io.Discard, pr)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var super bool
	err = conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super)
	conn.Close(ctx)
	if err != nil || !super {
		t.Fatalf("superuser %v, %v", super, err)
	}
	stop() // Ctrl-C
	if c := <-code; c != 0 {
		t.Fatalf("exit %d after SIGINT", c)
	}
}
