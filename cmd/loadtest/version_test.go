package main

import (
	"context"
	"io"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
	"github.com/provider-ledger/adapter/loadtest"
)

// TestVersion: loadtest --version prints the release of CHANGELOG.md (as
// internal/buildinfo holds it), the revision and the Go version.
func TestVersion(t *testing.T) {
	t.Parallel()
	clitest.CheckVersion(t, "loadtest", func(args []string, stdout, stderr io.Writer) int {
		return loadtest.Run(context.Background(), args, stdout, stderr)
	})
}
