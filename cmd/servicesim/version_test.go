package main

import (
	"context"
	"io"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
)

// TestVersion: servicesim --version prints the release of CHANGELOG.md (as
// internal/buildinfo holds it), the revision and the Go version.
func TestVersion(t *testing.T) {
	t.Parallel()
	clitest.CheckVersion(t, "servicesim", func(args []string, stdout, stderr io.Writer) int {
		return run(context.Background(), args, stdout, stderr)
	})
}
