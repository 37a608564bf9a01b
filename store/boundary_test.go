package store_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestOnlyTheBoundaryImportsPgx: outside tests, only package store (and the
// migration runner, the embedded server and the test helpers) imports pgx.
func TestOnlyTheBoundaryImportsPgx(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/provider-ledger/adapter/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{
		"github.com/provider-ledger/adapter/store",
		"github.com/provider-ledger/adapter/schema",          // migrations, on a connection of their own
		"github.com/provider-ledger/adapter/embedpg",         // waits for the embedded server to accept
		"github.com/provider-ledger/adapter/store/storetest", // test databases
	}
	var importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "github.com/jackc/pgx") || strings.HasPrefix(imp, "github.com/jackc/puddle") {
				importers = append(importers, fields[0])
				if !slices.Contains(allowed, fields[0]) {
					t.Errorf("%s imports %s: only package store may", fields[0], imp)
				}
				break
			}
		}
	}
	if !slices.Contains(importers, "github.com/provider-ledger/adapter/store") {
		t.Fatalf("the check saw no importer at all (%v): it is not looking", importers)
	}
}
