package schema_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/kylelemons/godebug/diff"

	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store/storetest"
)

var update = flag.Bool("update", false, "rewrite schema.sql from a database migrated by this build")

// snapshotFile is the checked-in snapshot of the migrated schema.
const snapshotFile = "schema.sql"

// regenerate is the one command that rewrites the snapshot.
const regenerate = "go test ./schema -run TestSnapshot -update"

// TestSnapshot: schema.sql is what pg_dump prints of a database migrated
// by this build (numbered migrations, then the function files),
// normalised. A change of a migration or of a function file shows here,
// reviewed as a diff of the resulting schema.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	got := dumpSchema(t, url)
	if *update {
		if err := os.WriteFile(snapshotFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", snapshotFile)
		return
	}
	want, err := os.ReadFile(snapshotFile)
	if err != nil {
		t.Fatalf("%v: write it with\n\t%s", err, regenerate)
	}
	if got != string(want) {
		t.Fatalf("schema/%s is not the schema the migrations and function files produce "+
			"(- the snapshot, + a database migrated now):\n%s\nIf the change is intended, regenerate the snapshot and commit it:\n\t%s",
			snapshotFile, changes(string(want), got), regenerate)
	}
}

// dumpSchema returns the normalised pg_dump --schema-only of the database
// at url, skipping the test (failing it when CI is set) when no pg_dump of
// the server's major version is installed.
func dumpSchema(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var num int
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	major := num / 10000
	bin, err := findPgDump(major)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, where the snapshot must be checked: install the server's client tools (apt-get install postgresql-client-%d)", err, major)
		}
		t.Skipf("skipped: %v (apt-get install postgresql-client-%d; with CI set this fails)", err, major)
	}
	cmd := exec.CommandContext(ctx, bin, "--schema-only", "--no-owner", "--no-privileges",
		"--exclude-table="+schema.VersionTable, "--exclude-table="+schema.FunctionTable, "--dbname="+url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", bin, err, stderr.String())
	}
	return normalize(string(out))
}

// findPgDump returns a pg_dump of the given major version, looked for as
// embedpg looks for the server: the directories of PATH, `pg_config
// --bindir`, then /usr/lib/postgresql/*/bin.
func findPgDump(major int) (string, error) {
	var dirs []string
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	if pgConfig, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(pgConfig, "--bindir").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	dirs = append(dirs, versioned...)
	var seen []string
	for _, dir := range dirs {
		bin := filepath.Join(dir, "pg_dump")
		if dir == "" || slices.Contains(seen, bin) {
			continue
		}
		seen = append(seen, bin)
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			continue
		}
		// "pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
		m := regexp.MustCompile(`\) (\d+)`).FindStringSubmatch(string(out))
		if m != nil && m[1] == strconv.Itoa(major) {
			return bin, nil
		}
	}
	if len(seen) == 0 {
		return "", errors.New("no pg_dump found (in PATH, pg_config --bindir or /usr/lib/postgresql/*/bin)")
	}
	return "", fmt.Errorf("no pg_dump of the server's major version %d found (tried %s)", major, strings.Join(seen, ", "))
}

// snapshotHeader opens schema.sql.
const snapshotHeader = `-- The schema a database migrated by this build has: pg_dump --schema-only
-- of it (without owners, privileges and the two bookkeeping tables
-- schema_version and schema_functions), normalised. Generated; do not edit:
--
--     ` + regenerate + `
--
-- Tables, types, indexes, constraints, triggers and function signatures
-- come from schema/migrations/, function bodies from schema/functions/
-- (schema/README.md). Read it to see the schema whole; it is not a way to
-- create one (ledgerctl migrate is).
`

// dumpNoise are the lines of a dump that vary from one run, server or
// user to another, or only set up pg_dump's own session.
var dumpNoise = regexp.MustCompile(`^(\\restrict |\\unrestrict |SET |SELECT pg_catalog\.set_config\(|-- Dumped (from|by) |-- PostgreSQL database dump)`)

// normalize makes a dump stable and readable: the lines of dumpNoise out,
// each object's header ("--\n-- Name: …; Owner: -\n--") one line without
// the owner, right above the object, and one blank line between objects.
func normalize(dump string) string {
	var out []string
	lines := strings.Split(dump, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case dumpNoise.MatchString(l):
			continue
		case l == "--" && i+2 < len(lines) && strings.HasPrefix(lines[i+1], "-- ") && lines[i+2] == "--":
			if !dumpNoise.MatchString(lines[i+1]) {
				out = append(out, strings.TrimSuffix(lines[i+1], "; Owner: -"))
			}
			for i += 2; i+1 < len(lines) && lines[i+1] == ""; i++ {
			}
			continue
		case l == "--":
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	var b strings.Builder
	b.WriteString(snapshotHeader)
	blank := false
	for _, l := range out {
		if l == "" {
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		if !blank && strings.HasPrefix(l, "-- Name: ") {
			b.WriteString("\n")
		}
		b.WriteString(l)
		b.WriteString("\n")
		blank = false
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// changes returns the lines that differ between want and got, "-" for
// want's and "+" for got's, with three lines of context and the line
// number in want of each run of changes.
func changes(want, got string) string {
	const context = 3
	type op struct {
		mark byte // ' ', '-' or '+'
		text string
		line int // in want
	}
	var ops []op
	line := 1
	for _, c := range diff.DiffChunks(strings.Split(want, "\n"), strings.Split(got, "\n")) {
		for _, l := range c.Added {
			ops = append(ops, op{'+', l, line})
		}
		for _, l := range c.Deleted {
			ops = append(ops, op{'-', l, line})
			line++
		}
		for _, l := range c.Equal {
			ops = append(ops, op{' ', l, line})
			line++
		}
	}
	near := make([]bool, len(ops))
	for i, o := range ops {
		if o.mark != ' ' {
			for j := max(0, i-context); j <= min(len(ops)-1, i+context); j++ {
				near[j] = true
			}
		}
	}
	var b strings.Builder
	for i, o := range ops {
		if !near[i] {
			continue
		}
		if i == 0 || !near[i-1] {
			fmt.Fprintf(&b, "@@ line %d @@\n", o.line)
		}
		fmt.Fprintf(&b, "%c%s\n", o.mark, o.text)
	}
	return b.String()
}

// TestFindPgDumpNamesTheVersion: without a pg_dump of the server's major
// version, the skip (or, in CI, the failure) says which version it needs.
func TestFindPgDumpNamesTheVersion(t *testing.T) {
	t.Parallel()
	if _, err := findPgDump(99); err == nil || !strings.Contains(err.Error(), "99") {
		t.Fatalf("findPgDump(99) = %v, want an error naming version 99", err)
	}
}
