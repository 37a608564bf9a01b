// Package doccheck is the kit of the tests that hold the manual (README.md
// and docs/*.md) to the code, so that the manual cannot drift from what the
// binaries do: it finds the source tree, reads its Markdown (headings and
// tables outside code blocks) and checks a binary's settings against its
// table in docs/configuration.md, both ways.
//
// The tests that use it are listed in docs/development.md ("Docs that
// cannot drift").
package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Root returns the root of the source tree (the directory of go.mod).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("doccheck: cannot locate the source tree")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Read returns the file at rel, a slash-separated path from the root.
func Read(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Line is one line of a Markdown file, numbered from 1, with whether it is
// inside a fenced code block.
type Line struct {
	N      int
	Text   string
	InCode bool
}

// Lines splits a Markdown file into lines, marking those in fenced code
// blocks (the fences included).
func Lines(doc string) []Line {
	var out []Line
	fence := ""
	for i, text := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(text, " ")
		in := fence != ""
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence, in = trimmed[:3], true
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		}
		out = append(out, Line{N: i + 1, Text: text, InCode: in})
	}
	return out
}

// Heading returns the level and title of a heading line ("## Title"), or
// level 0.
func Heading(l Line) (level int, title string) {
	if l.InCode {
		return 0, ""
	}
	hashes := len(l.Text) - len(strings.TrimLeft(l.Text, "#"))
	if hashes == 0 || hashes > 6 || !strings.HasPrefix(l.Text[hashes:], " ") {
		return 0, ""
	}
	return hashes, strings.TrimSpace(l.Text[hashes:])
}

// Section returns the lines under the heading with title, down to the
// next heading of the same or a higher level, or nil.
func Section(doc, title string) []Line {
	lines := Lines(doc)
	for i, l := range lines {
		level, t := Heading(l)
		if level == 0 || t != title {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if lv, _ := Heading(lines[j]); lv > 0 && lv <= level {
				end = j
				break
			}
		}
		return lines[i+1 : end]
	}
	return nil
}

// Table is a Markdown table: its header cells and rows.
type Table struct {
	Header []string
	Rows   []Row
}

// Row is a table row: its cells and the line it is on.
type Row struct {
	Line  int
	Cells []string
}

// Column returns the index of the header cell named name, or -1.
func (tb Table) Column(name string) int { return slices.Index(tb.Header, name) }

// Tables returns the tables among lines.
func Tables(lines []Line) []Table {
	var out []Table
	var cur *Table
	for i, l := range lines {
		if l.InCode || !strings.HasPrefix(l.Text, "|") {
			cur = nil
			continue
		}
		if cur == nil {
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1].Text, "|---") {
				out = append(out, Table{Header: cells(l.Text)})
				cur = &out[len(out)-1]
			}
			continue
		}
		if strings.HasPrefix(l.Text, "|---") {
			continue
		}
		cur.Rows = append(cur.Rows, Row{Line: l.N, Cells: cells(l.Text)})
	}
	return out
}

// cells splits a table row on the pipes that are not escaped.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	var out []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

// codeSpan matches `text`.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// CodeSpans returns the texts of the code spans of s, in order.
func CodeSpans(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// envName is the name of an environment variable.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Setting is one setting a binary reads: its environment variables in
// the order they are looked up, its flag without dashes ("" for a
// variable read without a flag) and the default the code applies when
// none is given ("" for none).
type Setting struct {
	Env     []string
	Flag    string
	Default string
}

func (s Setting) key() string { return strings.Join(s.Env, ", else ") + " --" + s.Flag }

// ConfigurationPage is the page CheckSettings reads.
const ConfigurationPage = "docs/configuration.md"

// CheckSettings checks the table under "## <binary>" of
// docs/configuration.md against what the binary reads, both ways: each of
// reads has a row with its variables (in lookup order) and its flag, whose
// default cell begins with the default in code font, or with "unset" when
// the code has none; and each row is one of reads.
func CheckSettings(t testing.TB, binary string, reads []Setting) {
	t.Helper()
	rows, err := SettingsTable(Read(t, ConfigurationPage), binary)
	if err != nil {
		t.Fatalf("%s: %v", ConfigurationPage, err)
	}
	want := map[string]Setting{}
	for _, s := range reads {
		want[s.key()] = s
	}
	for _, r := range rows {
		s, ok := want[r.Setting.key()]
		if !ok {
			t.Errorf("%s:%d: the %s table lists %s, which %s does not read", ConfigurationPage, r.Line, binary, r.Setting.key(), binary)
			continue
		}
		delete(want, r.Setting.key())
		if problem := defaultProblem(s.Default, r.Default); problem != "" {
			t.Errorf("%s:%d: %s: %s", ConfigurationPage, r.Line, s.key(), problem)
		}
	}
	for _, s := range reads {
		if _, missing := want[s.key()]; missing {
			t.Errorf("%s reads %s (default %q); the %s table of %s does not list it", binary, s.key(), s.Default, binary, ConfigurationPage)
		}
	}
}

// defaultProblem says how a default cell disagrees with the code's
// default, or "".
func defaultProblem(code, cell string) string {
	if code == "" {
		if !strings.HasPrefix(cell, "unset") {
			return fmt.Sprintf("the code has no default; the default cell %q should begin with \"unset\"", cell)
		}
		return ""
	}
	if want := "`" + code + "`"; !strings.HasPrefix(cell, want) {
		return fmt.Sprintf("the code's default is %s; the default cell %q should begin with it", want, cell)
	}
	return ""
}

// SettingRow is a row of a settings table.
type SettingRow struct {
	Line    int
	Setting Setting // its Default is empty: the cell is Default
	Default string  // the default cell
}

// SettingsTable returns the rows of the first table under "## <section>"
// of the configuration page doc. Its columns "env var" (code spans, in
// lookup order), "flag" (the first code span beginning with --) and
// "default" are read.
func SettingsTable(doc, section string) ([]SettingRow, error) {
	lines := Section(doc, section)
	if lines == nil {
		return nil, fmt.Errorf("no section %q", section)
	}
	tables := Tables(lines)
	if len(tables) == 0 {
		return nil, fmt.Errorf("section %q has no table", section)
	}
	tb := tables[0]
	envCol, flagCol, defCol := tb.Column("env var"), tb.Column("flag"), tb.Column("default")
	if envCol < 0 || flagCol < 0 || defCol < 0 {
		return nil, fmt.Errorf("the table of section %q has columns %q, want env var, flag and default", section, tb.Header)
	}
	var out []SettingRow
	for _, r := range tb.Rows {
		if len(r.Cells) != len(tb.Header) {
			return nil, fmt.Errorf("line %d: %d cells, want %d", r.Line, len(r.Cells), len(tb.Header))
		}
		row := SettingRow{Line: r.Line, Default: r.Cells[defCol]}
		for _, span := range CodeSpans(r.Cells[envCol]) {
			if !envName.MatchString(span) {
				return nil, fmt.Errorf("line %d: %q in the env var column is not a variable's name", r.Line, span)
			}
			row.Setting.Env = append(row.Setting.Env, span)
		}
		if len(row.Setting.Env) == 0 {
			return nil, fmt.Errorf("line %d: no variable in the env var column", r.Line)
		}
		for _, span := range CodeSpans(r.Cells[flagCol]) {
			if f, ok := strings.CutPrefix(span, "--"); ok {
				row.Setting.Flag = f
				break
			}
		}
		out = append(out, row)
	}
	return out, nil
}
