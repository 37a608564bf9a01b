package loadtest

import (
	"testing"

	"github.com/provider-ledger/adapter/internal/cli/clitest"
	"github.com/provider-ledger/adapter/internal/doccheck"
)

// TestConfigurationDocumented holds the loadtest table of
// docs/configuration.md to the environment variables loadtest's flags
// read, both ways, with their defaults.
func TestConfigurationDocumented(t *testing.T) {
	t.Parallel()
	var reads []doccheck.Setting
	for _, f := range clitest.EnvFlags(newRoot(Hooks{})) {
		reads = append(reads, doccheck.Setting{Env: f.Env, Flag: f.Flag, Default: f.Default})
	}
	doccheck.CheckSettings(t, "loadtest", reads)
}
