package floors

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/provider-ledger/adapter"

// floors is the package picture: each package of the module, by its path
// inside the module, on its floor. A package imports only packages of
// lower floors. docs/architecture.md draws the same table.
var floors = map[string]int{
	// 0: small utilities that know nothing of the ledger.
	"internal/strictjson": 0, "internal/problem": 0, "internal/loop": 0, "internal/syncbuf": 0,
	"internal/datadir": 0, "internal/buildinfo": 0, "internal/doccheck": 0, "internal/tooltest": 0, "internal/dbgauge": 0,
	"internal/wait": 0,
	// 1: the domain, and the envelope of the wire.
	"ledger": 1, "envelope": 1,
	// 2: the hold model.
	"holds": 2,
	// 3: the wire vocabularies: callback claims, admin API, provider API.
	"callbacks/claims": 3, "adminapi": 3, "provider": 3,
	// 4: clients, fakes and the services that use the database through
	// interfaces of their own.
	"callbacks/caller": 4, "provider/providertest": 4, "keyring": 4, "reconciliation": 4, "internal/cli": 4,
	// 5: adapters: HTTP in (callbacks, admin), the database (store,
	// schema), Postgres processes (embedpg), deployment manifests.
	"callbacks": 5, "admin": 5, "store": 5, "schema": 5, "embedpg": 5, "deploy": 5, "internal/cli/clitest": 5,
	"internal/drive": 5,
	// 6: what wires adapters together: ledgerd's server, the load tester,
	// the test kit of the database.
	"server": 6, "loadtest": 6, "store/storetest": 6, "admin/admintest": 6, "internal/cli/migratecmd": 6,
	// 7: commands, the homes of whole-repository tests, and the kit that
	// runs ledgerd in a test.
	"server/servertest": 7, "cmd/ledgerd": 7, "cmd/ledgerctl": 7, "cmd/loadtest": 7, "cmd/servicesim": 7,
	"internal/tools/testpg": 7, "internal/walkthrough": 7, "internal/floors": 7, "docs": 7,
}

// boundary are the packages that may import the database driver.
var boundary = map[string]bool{"store": true, "schema": true, "embedpg": true, "store/storetest": true}

type pkg struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages with their imports (test files
// aside: a test may reach any floor).
func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var list []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		list = append(list, p)
	}
	return list
}

func local(path string) (string, bool) {
	return strings.CutPrefix(path, module+"/")
}

func TestFloors(t *testing.T) {
	t.Parallel()
	list := packages(t)
	if len(list) < len(floors)-1 {
		t.Fatalf("go list saw %d packages, the table has %d: it is not looking", len(list), len(floors))
	}
	sawDriver := false
	for _, p := range list {
		name, _ := local(p.ImportPath)
		floor, ok := floors[name]
		if !ok {
			t.Errorf("%s is on no floor: add it to the table in floors_test.go and docs/architecture.md", name)
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/jackc/pgx") || strings.HasPrefix(imp, "github.com/jackc/puddle") {
				sawDriver = sawDriver || name == "store"
				if !boundary[name] {
					t.Errorf("%s imports %s: only the database boundary (store, schema, embedpg, store/storetest) may", name, imp)
				}
			}
			dep, ok := local(imp)
			if !ok {
				continue
			}
			if f, known := floors[dep]; known && f >= floor {
				t.Errorf("%s (floor %d) imports %s (floor %d): imports go down, never up or across", name, floor, dep, f)
			}
		}
	}
	if !sawDriver {
		t.Fatal("package store imports no pgx: the driver check is not looking")
	}
}
