package schema_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"regexp"
	"testing"

	"github.com/provider-ledger/adapter/schema"
)

// releasedSums lists each released migration's SHA-256, as sha256sum
// prints it (`cd schema/migrations && sha256sum -c released.sum` checks
// it too).
const releasedSums = "migrations/released.sum"

// TestReleasedMigrationsAreNeverEdited: a migration listed in
// migrations/released.sum is byte for byte what was released. A database
// that ran a migration never runs it again, so an edit would reach new
// databases only, and the two would differ from then on.
func TestReleasedMigrationsAreNeverEdited(t *testing.T) {
	t.Parallel()
	f, err := os.Open(releasedSums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := schema.List()
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\d{3}_[a-z0-9_]+\.sql)$`)
	sc := bufio.NewScanner(f)
	n := 0
	for ; sc.Scan(); n++ {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("%s line %d: %q is not \"<sha256>  NNN_name.sql\"", releasedSums, n+1, sc.Text())
		}
		if n >= len(all) || all[n].Name != m[2] {
			t.Fatalf("%s line %d: %s is not migration %d of this build: released migrations are listed in order, "+
				"and a released migration is never renamed or removed", releasedSums, n+1, m[2], n+1)
		}
		b, err := fs.ReadFile(schema.Migrations(), m[2])
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("migrations/%s was edited after its release (SHA-256 %x, released %s). A released migration is never edited: "+
				"databases that ran it will not run it again. Undo the edit and make the change in a new numbered migration "+
				"(a function body: its file in schema/functions/); schema/README.md says how.", m[2], sum, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s lists no migration: the baseline is released", releasedSums)
	}
}
