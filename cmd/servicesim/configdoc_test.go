package main

import (
	"path/filepath"
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
	"github.com/provider-ledger/adapter/internal/doccheck"
	"github.com/provider-ledger/adapter/internal/drive"
)

// TestConfigurationDocumented holds the servicesim table of
// docs/configuration.md to the environment variables servicesim reads,
// both ways, with their defaults: its flags', and LEDGER_DATA_DIR, which
// drive reads for the default --secret-file (checked here to be read).
// Not parallel: it sets LEDGER_DATA_DIR.
func TestConfigurationDocumented(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LEDGER_DATA_DIR", dir)
	if got, want := drive.DefaultSecretFile(), filepath.Join(dir, "signing-secret"); got != want {
		t.Fatalf("with LEDGER_DATA_DIR=%s the default --secret-file is %s, want %s", dir, got, want)
	}
	reads := []doccheck.Setting{{Env: []string{"LEDGER_DATA_DIR"}}}
	for _, f := range clitest.EnvFlags(newRoot()) {
		reads = append(reads, doccheck.Setting{Env: f.Env, Flag: f.Flag, Default: f.Default})
	}
	doccheck.CheckSettings(t, "servicesim", reads)
}
