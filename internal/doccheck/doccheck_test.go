package doccheck

import (
	"slices"
	"strings"
	"testing"
)

const page = "# Title\n\n" +
	"## a\n\n" +
	"```sh\n# not a heading\n| not | a table |\n|---|---|\n```\n\n" +
	"| env var | flag | default | meaning |\n|---|---|---|---|\n" +
	"| `A_ONE`, else `A_TWO` | `--one` (`--two` works too) | `x\\|y` | pipes \\| escaped |\n" +
	"| `B` | | unset: nothing | read without a flag |\n\n" +
	"### a.1\n\ntext\n\n" +
	"## b\n\nno table\n"

func TestSection(t *testing.T) {
	t.Parallel()
	a := Section(page, "a")
	var text []string
	for _, l := range a {
		text = append(text, l.Text)
	}
	joined := strings.Join(text, "\n")
	if !strings.Contains(joined, "### a.1") || strings.Contains(joined, "## b") || !strings.Contains(joined, "# not a heading") {
		t.Fatalf("section a:\n%s", joined)
	}
	if Section(page, "not a heading") != nil {
		t.Fatal("a line in a code block was taken for a heading")
	}
	if Section(page, "c") != nil {
		t.Fatal("a section that does not exist")
	}
}

func TestSettingsTable(t *testing.T) {
	t.Parallel()
	rows, err := SettingsTable(page, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows: %+v (the table in the code block is not one)", len(rows), rows)
	}
	if r := rows[0]; !slices.Equal(r.Setting.Env, []string{"A_ONE", "A_TWO"}) || r.Setting.Flag != "one" || r.Default != "`x|y`" || r.Line != 13 {
		t.Fatalf("row 1: %+v", r)
	}
	if r := rows[1]; !slices.Equal(r.Setting.Env, []string{"B"}) || r.Setting.Flag != "" || r.Default != "unset: nothing" {
		t.Fatalf("row 2: %+v", r)
	}
	if _, err := SettingsTable(page, "b"); err == nil {
		t.Fatal("a section without a table")
	}
}

func TestDefaultProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code, cell string
		ok         bool
	}{
		{"", "unset: embedded", true},
		{"", "`local`", false},
		{"3s", "`3s`", true},
		{"3s", "`3s`: three seconds", true},
		{"3s", "3s", false},
		{"0", "`0`: sized to the pool", true},
		{"0", "unset", false},
		{":8080", "`127.0.0.1:8080`; `:8080`", false},
	} {
		if got := defaultProblem(c.code, c.cell) == ""; got != c.ok {
			t.Errorf("defaultProblem(%q, %q) ok = %v, want %v", c.code, c.cell, got, c.ok)
		}
	}
}
