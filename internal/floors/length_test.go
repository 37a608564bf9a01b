package floors

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the longest a function may be, from its func keyword to its
// closing brace.
const maxLines = 80

// root returns the module's directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// goFiles parses every Go file of the module (testdata and var aside).
func goFiles(t *testing.T, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	dir := root(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "var" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fn(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// longFunctions finds the functions over maxLines: each by its file and
// its top-level function's name, with " literal" for a function literal
// inside it.
func longFunctions(t *testing.T) map[string]int {
	t.Helper()
	long := map[string]int{}
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				var body *ast.BlockStmt
				key := rel + " " + fd.Name.Name
				switch x := n.(type) {
				case *ast.FuncDecl:
					body = x.Body
				case *ast.FuncLit:
					body, key = x.Body, key+" literal"
				default:
					return true
				}
				if fset.Position(body.End()).Line-fset.Position(n.Pos()).Line+1 > maxLines {
					long[key]++
				}
				return true
			})
		}
	})
	return long
}

// TestFunctionLength: no function is over maxLines, test functions and
// function literals included.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	for key, n := range longFunctions(t) {
		t.Errorf("%s is over %d lines (%d functions): split it", key, maxLines, n)
	}
}

func TestDocComments(t *testing.T) {
	t.Parallel()
	pkgDoc := map[string]bool{}
	goFiles(t, func(rel string, fset *token.FileSet, f *ast.File) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		dir := filepath.Dir(rel)
		pkgDoc[dir] = pkgDoc[dir] || f.Doc != nil
		for _, d := range f.Decls {
			for _, name := range undocumented(d) {
				t.Errorf("%s:%d: exported %s has no doc comment", rel, fset.Position(d.Pos()).Line, name)
			}
		}
	})
	if len(pkgDoc) < len(floors)-2 {
		t.Fatalf("saw %d packages: the check is not looking", len(pkgDoc))
	}
	for dir, ok := range pkgDoc {
		if !ok {
			t.Errorf("package %s has no package comment", dir)
		}
	}
}

// undocumented returns the exported names d declares without a doc
// comment (a method counts when its receiver type is exported; a name in
// a group may share the group's comment).
func undocumented(d ast.Decl) []string {
	var out []string
	switch x := d.(type) {
	case *ast.FuncDecl:
		if x.Name.IsExported() && x.Doc == nil && exportedRecv(x) {
			out = append(out, x.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range x.Specs {
			switch sp := s.(type) {
			case *ast.TypeSpec:
				if sp.Name.IsExported() && sp.Doc == nil && x.Doc == nil {
					out = append(out, sp.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range sp.Names {
					if n.IsExported() && sp.Doc == nil && sp.Comment == nil && x.Doc == nil {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(fd *ast.FuncDecl) bool {
	if fd.Recv == nil {
		return true
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
