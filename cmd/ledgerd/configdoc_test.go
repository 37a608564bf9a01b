package main

import (
	"strconv"
	"testing"

	"github.com/provider-ledger/adapter/internal/doccheck"
	"github.com/provider-ledger/adapter/server"
)

// TestConfigurationDocumented holds the ledgerd table of
// docs/configuration.md to the settings ledgerd reads, both ways, with
// their defaults: every setting of server.LoadConfig (the *_FILE ones
// included), and GOGC, which main reads itself.
func TestConfigurationDocumented(t *testing.T) {
	t.Parallel()
	var reads []doccheck.Setting
	for _, s := range server.Settings() {
		reads = append(reads, doccheck.Setting{Env: []string{s.Env}, Flag: s.Flag, Default: s.Default})
	}
	reads = append(reads, doccheck.Setting{Env: []string{"GOGC"}, Default: strconv.Itoa(gcPercent)})
	doccheck.CheckSettings(t, "ledgerd", reads)
}
