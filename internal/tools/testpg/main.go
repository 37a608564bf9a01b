// Command testpg runs an embedded Postgres for the test suite, for a
// machine whose own cluster is missing or asks for a password (Debian's):
//
//	go run ./internal/tools/testpg          # in another terminal; Ctrl-C stops it
//	export TEST_DATABASE_URL='…'            # the line it prints
//	go test ./...
//
// Once the server is ready it prints `export TEST_DATABASE_URL='URL'` on
// stdout and writes the URL to the file named by -url-file (which .ci/run
// waits for); it stops the server on SIGINT or SIGTERM. The cluster lives
// in -data-dir (default var/testpg under the source tree's root) and is
// kept for the next run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/internal/datadir"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testpg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", datadir.Path("var/testpg"), "cluster directory")
	urlFile := fs.String("url-file", "", "also write the URL to this file (0600) once the server is ready")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := embedpg.Start(ctx, embedpg.Config{DataDir: *dir, Logger: log, StartTimeout: 120 * time.Second})
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "testpg: interrupted:", err)
		return 1
	} else if err != nil {
		fmt.Fprintln(stderr, "testpg:", err)
		return 1
	}
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(srv.URL()), 0o600); err != nil {
			fmt.Fprintln(stderr, "testpg:", err)
			_ = srv.Stop(context.Background())
			return 1
		}
	}
	fmt.Fprintf(stdout, "export TEST_DATABASE_URL='%s'\n", srv.URL())
	fmt.Fprintf(stderr, "testpg: Postgres ready in %s; export the line above where you run go test; Ctrl-C stops it\n", *dir)
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Stop(stopCtx); err != nil {
		fmt.Fprintln(stderr, "testpg:", err)
		return 1
	}
	return 0
}
