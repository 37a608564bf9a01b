package datadir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnder: from anywhere in a source tree the default is the root's
// var/ledgerd; outside one it is var/ledgerd where you are.
func TestUnder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"cmd/ledgerd", "cmd/servicesim", "elsewhere/deep"} {
		if err := os.MkdirAll(filepath.Join(root, "tree", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(root, "tree")
	if err := os.WriteFile(filepath.Join(tree, "go.mod"), []byte("module example.com/fork\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tree, "var/ledgerd")
	for _, wd := range []string{tree, filepath.Join(tree, "cmd/ledgerd"), filepath.Join(tree, "cmd/servicesim")} {
		if got := Under(wd, Rel); got != want {
			t.Errorf("from %s: %s, want %s", wd, got, want)
		}
	}
	if got := Under(filepath.Join(root, "elsewhere"), Rel); got != Rel {
		t.Errorf("outside a tree: %s, want %s", got, Rel)
	}
	// A go.mod without cmd/ledgerd is another project's.
	if err := os.WriteFile(filepath.Join(tree, "elsewhere/go.mod"), []byte("module other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Under(filepath.Join(tree, "elsewhere/deep"), Rel); got != want {
		t.Errorf("under another module's go.mod: %s, want %s", got, want)
	}
}

// TestDefaultInThisTree: the tests run in this tree's internal/datadir.
func TestDefaultInThisTree(t *testing.T) {
	t.Parallel()
	want, err := filepath.Abs("../../var/ledgerd")
	if err != nil {
		t.Fatal(err)
	}
	if got := Default(); got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}
