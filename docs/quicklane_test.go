package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/doccheck"
)

// skipShortCalls returns "package TestName" of every test function of the
// module whose body calls tooltest.SkipShort.
func skipShortCalls(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "var" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil && callsSkipShort(fd.Body) {
				out[filepath.ToSlash(pkg)+" "+fd.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// callsSkipShort reports whether body calls tooltest.SkipShort.
func callsSkipShort(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "SkipShort" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "tooltest" {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestQuickLaneDocumented: the table of development.md's quick lane lists
// exactly the tests that go test -short skips as heavy.
func TestQuickLaneDocumented(t *testing.T) {
	t.Parallel()
	doc := doccheck.Read(t, "docs/development.md")
	lines := doccheck.Section(doc, "The quick lane")
	if lines == nil {
		t.Fatal(`docs/development.md has no heading "The quick lane"`)
	}
	documented := map[string]bool{}
	for _, tb := range doccheck.Tables(lines) {
		pc, tc := tb.Column("package"), tb.Column("test")
		if pc < 0 || tc < 0 {
			continue
		}
		for _, r := range tb.Rows {
			for _, p := range doccheck.CodeSpans(r.Cells[pc]) {
				for _, name := range doccheck.CodeSpans(r.Cells[tc]) {
					documented[p+" "+name] = true
				}
			}
		}
	}
	code := skipShortCalls(t, doccheck.Root(t))
	if len(code) == 0 {
		t.Fatal("no test calls tooltest.SkipShort: the search is not looking")
	}
	for _, k := range slices.Sorted(maps.Keys(code)) {
		if !documented[k] {
			t.Errorf("%s skips under -short but the quick lane's table does not list it", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		if !code[k] {
			t.Errorf("the quick lane's table lists %s, which does not call tooltest.SkipShort", k)
		}
	}
}
