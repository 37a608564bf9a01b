// Command testpg runs an embedded Postgres for the test suite when none
// answers on 127.0.0.1:5432 (used by .ci/run). It writes the server's URL
// to the file named by -url-file once the server is ready, and stops the
// server on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/provider-ledger/adapter/embedpg"
)

func main() {
	dir := flag.String("data-dir", "var/testpg", "cluster directory")
	urlFile := flag.String("url-file", "var/testpg.url", "file to write the URL to")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := embedpg.Start(ctx, embedpg.Config{DataDir: *dir, Logger: log, StartTimeout: 120 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*urlFile, []byte(srv.URL()), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		_ = srv.Stop(context.Background())
		os.Exit(1)
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
}
