package docs

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/provider-ledger/adapter/internal/doccheck"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store/storetest"
)

// markdown returns the repository's Markdown files, as slash-separated
// paths from the root, with their text.
func markdown(t *testing.T) map[string]string {
	t.Helper()
	root := doccheck.Root(t)
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "var" || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"README.md", "CHANGELOG.md", "docs/configuration.md", "docs/contract.md", "docs/reconciliation.md"} {
		if _, ok := out[must]; !ok {
			t.Fatalf("no %s among the Markdown files found: %v", must, slices.Sorted(maps.Keys(out)))
		}
	}
	return out
}

// findingsTable returns kind → severity from the first table under the
// heading title of doc whose header has "kind" and "severity" columns; a
// kind cell may list several kinds.
func findingsTable(t *testing.T, name, doc, title string) map[string]string {
	t.Helper()
	lines := doccheck.Section(doc, title)
	if lines == nil {
		t.Fatalf("%s has no heading %q", name, title)
	}
	for _, tb := range doccheck.Tables(lines) {
		kindCol, sevCol := tb.Column("kind"), tb.Column("severity")
		if kindCol < 0 || sevCol < 0 {
			continue
		}
		out := map[string]string{}
		for _, r := range tb.Rows {
			for _, k := range doccheck.CodeSpans(r.Cells[kindCol]) {
				if _, dup := out[k]; dup {
					t.Errorf("%s:%d lists %s twice", name, r.Line, k)
				}
				out[k] = r.Cells[sevCol]
			}
		}
		return out
	}
	t.Fatalf("%s has no table with kind and severity columns under %q", name, title)
	return nil
}

// TestFindingsDocumented: the findings tables list exactly the kinds a
// reconciliation run reports, each with its severity.
func TestFindingsDocumented(t *testing.T) {
	t.Parallel()
	kinds := reconciliation.Kinds()
	for _, page := range []struct{ name, heading string }{
		{"docs/reconciliation.md", "Findings"},
		{"docs/contract.md", "5. Reconciliation"},
	} {
		documented := findingsTable(t, page.name, doccheck.Read(t, page.name), page.heading)
		for _, k := range kinds {
			sev, ok := documented[k]
			switch {
			case !ok:
				t.Errorf("reconciliation reports %s; the findings table of %s does not list it", k, page.name)
			case sev != reconciliation.SeverityOf(k):
				t.Errorf("%s: %s is %s, the table of %s says %q", page.name, k, reconciliation.SeverityOf(k), page.name, sev)
			}
		}
		for k := range documented {
			if !slices.Contains(kinds, k) {
				t.Errorf("the findings table of %s lists %s, which reconciliation never reports", page.name, k)
			}
		}
	}
}

var (
	// call is a function call in a code span or an SQL block: name( not
	// after a dot, a letter or a $ (a Go selector, a shell substitution).
	call = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.$])([a-z_][a-z0-9_]*)\(([^()]*)`)
	// named is a named argument: p_key => …
	named = regexp.MustCompile(`\b(p_[a-z0-9_]+)\s*=>`)
	// param is a parameter's name.
	param = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(p_[a-z][a-z0-9_]*)`)
	// functionFile is a function's file in the schema.
	functionFile = regexp.MustCompile(`schema/functions/([a-z_][a-z0-9_]*)\.sql`)
	// sqlBlock is a fenced block of SQL.
	sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")
)

// codeOf returns the code a Markdown file names SQL in: its code spans
// and its SQL blocks.
func codeOf(doc string) []string {
	var out []string
	for _, l := range doccheck.Lines(doc) {
		if !l.InCode {
			out = append(out, doccheck.CodeSpans(l.Text)...)
		}
	}
	for _, m := range sqlBlock.FindAllStringSubmatch(doc, -1) {
		// A block that says it is a made-up example ("-- example: …" on
		// its first line) shows a change that does not exist.
		if !strings.HasPrefix(m[1], "-- example:") {
			out = append(out, m[1])
		}
	}
	return out
}

// TestSQLNamesExist: every function and parameter the Markdown files name
// exists in a migrated database.
func TestSQLNamesExist(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	rows, err := pool.Query(context.Background(), `
SELECT p.proname, n.nspname = 'public', coalesce(p.proargnames, '{}')
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace`)
	if err != nil {
		t.Fatal(err)
	}
	functions := map[string]bool{}  // every function, built-in or ours
	ours := map[string]bool{}       // the schema's own
	params := map[string][]string{} // ours: name → parameters
	allParams := map[string]bool{}  // any parameter of ours
	for rows.Next() {
		var name string
		var public bool
		var args []string
		if err := rows.Scan(&name, &public, &args); err != nil {
			t.Fatal(err)
		}
		functions[name] = true
		if public {
			ours[name] = true
			params[name] = append(params[name], args...)
			for _, a := range args {
				allParams[a] = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !ours["cb_authorize"] || !slices.Contains(params["cb_authorize"], "p_key") {
		t.Fatalf("the migrated database has no cb_authorize(p_key …): %v", params)
	}
	named := 0
	for name, doc := range markdown(t) {
		for _, code := range codeOf(doc) {
			named += checkSQL(t, name, code, functions, ours, params, allParams)
		}
		for _, m := range functionFile.FindAllStringSubmatch(doc, -1) {
			if !ours[m[1]] {
				t.Errorf("%s names %s, the file of a function %s the schema does not have", name, m[0], m[1])
			}
		}
	}
	if named == 0 {
		t.Fatal("the docs name no SQL function: has the way they write them changed?")
	}
}

// checkSQL checks the function calls and parameters of one code span or
// SQL block, and returns how many calls of the schema's functions it has.
func checkSQL(t *testing.T, doc, code string, functions, ours map[string]bool, params map[string][]string, allParams map[string]bool) int {
	t.Helper()
	n := 0
	for _, m := range call.FindAllStringSubmatch(code, -1) {
		fn, args := m[1], m[2]
		if !functions[fn] {
			t.Errorf("%s names the function %s in %q; the schema has none", doc, fn, code)
			continue
		}
		if !ours[fn] {
			continue
		}
		n++
		for _, a := range named.FindAllStringSubmatch(args, -1) {
			if !slices.Contains(params[fn], a[1]) {
				t.Errorf("%s calls %s with %s in %q; %s has no such parameter (it has %v)", doc, fn, a[1], code, fn, params[fn])
			}
		}
	}
	for _, m := range param.FindAllStringSubmatch(code, -1) {
		if !allParams[m[1]] {
			t.Errorf("%s names the parameter %s in %q; no function of the schema has it", doc, m[1], code)
		}
	}
	return n
}

// envName is a variable of the project's binaries.
var envName = regexp.MustCompile(`\b(?:(?:LEDGER|SERVICE|SERVICESIM)_[A-Z][A-Z0-9_]*|DATABASE_URL)\b`)

// TestEnvVarsDocumented: every variable of the binaries that any Markdown
// file names is in a settings table of configuration.md (each binary's
// test holds its table to what it reads).
func TestEnvVarsDocumented(t *testing.T) {
	t.Parallel()
	config := doccheck.Read(t, doccheck.ConfigurationPage)
	tabled := map[string]bool{}
	for _, binary := range []string{"ledgerd", "ledgerctl", "loadtest", "servicesim"} {
		rows, err := doccheck.SettingsTable(config, binary)
		if err != nil {
			t.Fatalf("%s: %v", doccheck.ConfigurationPage, err)
		}
		for _, r := range rows {
			for _, e := range r.Setting.Env {
				tabled[e] = true
			}
		}
	}
	for name, doc := range markdown(t) {
		for _, l := range doccheck.Lines(doc) {
			for _, v := range envName.FindAllString(l.Text, -1) {
				if !tabled[v] {
					t.Errorf("%s:%d names %s, which no settings table of %s lists: no binary reads it", name, l.N, v, doccheck.ConfigurationPage)
				}
			}
		}
	}
}

// link is an inline Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksResolve: every relative link of a Markdown file leads to a
// file of the repository, and its anchor to a heading of that file.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	docs := markdown(t)
	root := doccheck.Root(t)
	for name, doc := range docs {
		for _, l := range doccheck.Lines(doc) {
			if l.InCode {
				continue
			}
			if strings.Contains(l.Text, "../shared") {
				t.Errorf("%s:%d refers to ../shared, which a fork does not have", name, l.N)
			}
			for _, m := range link.FindAllStringSubmatch(l.Text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				file := name
				if path != "" {
					file = filepath.ToSlash(filepath.Join(filepath.Dir(name), path))
					if _, err := os.Stat(filepath.Join(root, file)); err != nil {
						t.Errorf("%s:%d links to %s, which does not exist", name, l.N, target)
						continue
					}
				}
				if frag == "" {
					continue
				}
				text, ok := docs[file]
				if !ok {
					t.Errorf("%s:%d links to an anchor of %s, which is not Markdown", name, l.N, target)
					continue
				}
				if !slices.Contains(anchors(text), frag) {
					t.Errorf("%s:%d links to %s: %s has no heading with that anchor (it has %v)", name, l.N, target, file, anchors(text))
				}
			}
		}
	}
}

// anchors returns the anchors GitHub gives the headings of doc: the title
// in lower case, letters, digits, hyphens and underscores kept, spaces as
// hyphens, and a -1, -2, … suffix on repeats.
func anchors(doc string) []string {
	var out []string
	seen := map[string]int{}
	for _, l := range doccheck.Lines(doc) {
		level, title := doccheck.Heading(l)
		if level == 0 {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				a.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		s := a.String()
		if n := seen[s]; n > 0 {
			out = append(out, s+"-"+strconv.Itoa(n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}
