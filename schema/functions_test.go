package schema_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/internal/syncbuf"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestFunctionFilesAreOneFunctionEach: every file of functions/ is one
// CREATE OR REPLACE FUNCTION of its own name, and the check that says so
// refuses anything else.
func TestFunctionFilesAreOneFunctionEach(t *testing.T) {
	t.Parallel()
	fns, err := schema.Functions()
	if err != nil || len(fns) == 0 {
		t.Fatalf("Functions: %d files, %v", len(fns), err)
	}
	for _, f := range fns {
		if !strings.Contains(f.SQL, "CREATE OR REPLACE FUNCTION "+f.Name+"(") || len(f.Checksum) != 64 {
			t.Errorf("%s: %+v", f.File(), f)
		}
	}
	const good = "-- what it decides\nCREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n-- trailing\n"
	for _, c := range []struct{ name, file, why string }{
		{"f", good, ""},
		{"f", "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $body$ SELECT '$$' $body$;", ""},
		{"g", good, "does not start with CREATE OR REPLACE FUNCTION g("},
		{"f", "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;", "does not start with"},
		{"f", good + "CREATE TABLE t (x int);", "more than one statement"},
		{"f", good + "DROP FUNCTION g();", "more than one statement"},
		{"f", "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1';", "no dollar-quoted body"},
		{"f", "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1;", "is not closed"},
		{"F", strings.ReplaceAll(good, " f(", " F("), "not a lower-case function name"},
	} {
		err := schema.CheckFunctionFile(schema.Function{Name: c.name, SQL: c.file})
		if c.why == "" && err != nil || c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)) {
			t.Errorf("%s %q: %v, want %q", c.name, c.file, err, c.why)
		}
	}
}

// TestEachFunctionHasOneFile: in a migrated database every function of the
// ledger's schema has exactly one file, named after it (no overload, no
// function without a file, no file without its function), its body is
// the file's, and the checksum recorded is the file's.
func TestEachFunctionHasOneFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, storetest.URL(t))
	rows, err := conn.Query(ctx, `SELECT p.proname, p.prosrc, coalesce(f.checksum, '')
		FROM pg_proc p LEFT JOIN schema_functions f ON f.name = p.proname
		WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
		  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct{ body, checksum string }
	inDB := map[string]fn{}
	var name string
	var f fn
	if _, err := pgx.ForEachRow(rows, []any{&name, &f.body, &f.checksum}, func() error {
		if _, dup := inDB[name]; dup {
			t.Errorf("function %s is overloaded: each function has one signature, declared in a migration", name)
		}
		inDB[name] = f
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	files, err := schema.Functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		got, ok := inDB[file.Name]
		delete(inDB, file.Name)
		switch {
		case !ok:
			t.Errorf("%s: no function %s in the database", file.File(), file.Name)
		case !strings.Contains(file.SQL, "$$"+got.body+"$$"):
			t.Errorf("%s: the database's body of %s is not the file's", file.File(), file.Name)
		case got.checksum != file.Checksum:
			t.Errorf("%s: recorded checksum %q, want %q", file.File(), got.checksum, file.Checksum)
		}
	}
	for name := range inDB {
		t.Errorf("function %s has no file: its body belongs in schema/functions/%s.sql", name, name)
	}
}

// outdate makes the database's ledger_no_truncate an older body (one that
// lets TRUNCATE through) recorded under checksum old.
func outdate(t *testing.T, conn *pgx.Conn, old string) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE OR REPLACE FUNCTION ledger_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE schema_functions SET checksum = $1 WHERE name = 'ledger_no_truncate'`, old); err != nil {
		t.Fatal(err)
	}
}

// truncateRefused reports whether TRUNCATE holds is refused as the file's
// body of ledger_no_truncate refuses it.
func truncateRefused(t *testing.T, conn *pgx.Conn) bool {
	t.Helper()
	_, err := conn.Exec(context.Background(), `BEGIN; TRUNCATE holds CASCADE; ROLLBACK`)
	var pgErr *pgconn.PgError
	if err != nil {
		_, _ = conn.Exec(context.Background(), `ROLLBACK`)
	}
	return errors.As(err, &pgErr) && pgErr.Code == "LA006"
}

// TestChangedFunctionFileIsAppliedOnce: a function whose recorded checksum
// is not its file's is pending (status, LEDGER_MIGRATE=off's check); of
// three concurrent Ups that wait for the lock, one applies it, and the
// database then runs the file's body.
func TestChangedFunctionFileIsAppliedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	conn := connect(t, url)
	outdate(t, conn, "an-older-file")
	if truncateRefused(t, conn) {
		t.Fatal("the older body refuses TRUNCATE: the test does not test anything")
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || st.UpToDate() || st.Newer() || st.Current != st.Latest || len(st.Pending) != 0 ||
		len(st.PendingFunctions) != 1 || st.PendingFunctions[0].Name != "ledger_no_truncate" ||
		!strings.Contains(st.Explain(), "functions/ledger_no_truncate.sql") {
		t.Fatalf("status with one body out of date: %+v %v", st, err)
	}
	holder := connect(t, url)
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	befores := make(chan schema.Status, 3)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			before, _, err := schema.UpURL(ctx, url, schema.UpOptions{LockTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			befores <- before
			errs <- err
		}()
	}
	wait.Until(t, "the three to wait for the migration lock", func() bool {
		return strings.Count(log.String(), "waiting for the migration lock") >= 3
	})
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", ternLock); err != nil {
		t.Fatal(err)
	}
	applied := 0
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Up: %v", err)
		}
		if b := <-befores; !b.UpToDate() {
			applied++
		}
	}
	if applied != 1 || strings.Count(log.String(), "applying function") != 1 {
		t.Fatalf("%d of the three found the function pending under the lock, want 1; log:\n%s", applied, log.String())
	}
	if !truncateRefused(t, conn) {
		t.Fatal("after Up, TRUNCATE holds is not refused: the file's body is not in place")
	}
	var superseded []string
	if err := conn.QueryRow(ctx, `SELECT superseded FROM schema_functions WHERE name = 'ledger_no_truncate'`).Scan(&superseded); err != nil ||
		len(superseded) != 1 || superseded[0] != "an-older-file" {
		t.Fatalf("superseded %q %v, want the older file's checksum", superseded, err)
	}
	if st, err := schema.StatusURL(ctx, url); err != nil || !st.UpToDate() {
		t.Fatalf("after Up: %+v %v", st, err)
	}
}

// TestNewerFunctionBodyIsNotReplaced: a body applied by a newer build
// (this build's file was applied before it) is never put back by this
// build: the status says newer, Up refuses, and the body stays.
func TestNewerFunctionBodyIsNotReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	conn := connect(t, url)
	outdate(t, conn, "a-newer-file")
	if _, err := conn.Exec(ctx, `UPDATE schema_functions SET superseded = ARRAY[$1::text] WHERE name = 'ledger_no_truncate'`, checksumOf(t, "ledger_no_truncate")); err != nil {
		t.Fatal(err)
	}
	st, err := schema.StatusURL(ctx, url)
	if err != nil || !st.Newer() || st.UpToDate() || len(st.NewerFunctions) != 1 || !strings.Contains(st.Explain(), "ledger_no_truncate") {
		t.Fatalf("status with a newer body: %+v %v", st, err)
	}
	if _, _, err := schema.UpURL(ctx, url, schema.UpOptions{}); !errors.Is(err, schema.ErrNewer) || !strings.Contains(err.Error(), "DELETE FROM schema_functions") {
		t.Fatalf("Up over a newer body: %v, want ErrNewer saying how a developer goes back", err)
	}
	if truncateRefused(t, conn) {
		t.Fatal("Up put this build's body back over a newer one")
	}
}

func checksumOf(t *testing.T, name string) string {
	t.Helper()
	fns, err := schema.Functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fns {
		if f.Name == name {
			return f.Checksum
		}
	}
	t.Fatalf("no function file %s", name)
	return ""
}

// TestFunctionFileCannotChangeASignature: a function file may change a
// body, not a signature, nor add a function; one that tries is refused
// and nothing of the run is applied.
func TestFunctionFileCannotChangeASignature(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, storetest.URL(t))
	outdate(t, conn, "an-older-file")
	good := schema.Function{Name: "ledger_no_truncate", Checksum: checksumOf(t, "ledger_no_truncate")}
	if b, err := os.ReadFile(good.File()); err != nil {
		t.Fatal(err)
	} else {
		good.SQL = string(b)
	}
	for _, c := range []struct {
		name string
		bad  schema.Function
		want string
	}{
		{"Overload", schema.Function{Name: "ledger_ensure_system_accounts", Checksum: "x",
			SQL: `CREATE OR REPLACE FUNCTION ledger_ensure_system_accounts(p_currency text) RETURNS void LANGUAGE sql AS $$SELECT$$;`},
			"would add an overload"},
		{"Undeclared", schema.Function{Name: "intruder", Checksum: "x",
			SQL: `CREATE OR REPLACE FUNCTION intruder() RETURNS int LANGUAGE sql AS $$SELECT 1$$;`},
			"no function intruder is declared"},
		{"ReturnType", schema.Function{Name: "ledger_ensure_system_accounts", Checksum: "x",
			SQL: `CREATE OR REPLACE FUNCTION ledger_ensure_system_accounts(p_currency text, p_now timestamptz) RETURNS int LANGUAGE sql AS $$SELECT 1$$;`},
			"cannot change return type"},
		{"ParameterName", schema.Function{Name: "ledger_ensure_system_accounts", Checksum: "x",
			SQL: `CREATE OR REPLACE FUNCTION ledger_ensure_system_accounts(p_cur text, p_now timestamptz) RETURNS void LANGUAGE sql AS $$SELECT$$;`},
			"cannot change name of input parameter"},
	} {
		err := schema.ApplyFunctions(ctx, conn, []schema.Function{good, c.bad}, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.bad.File()) ||
			!strings.Contains(err.Error(), "schema/README.md") {
			t.Errorf("%s: %v, want an error naming %s and saying %q", c.name, err, c.bad.File(), c.want)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname IN ('intruder', 'ledger_ensure_system_accounts')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d functions named so, %v: a refused file left something behind", n, err)
	}
	if truncateRefused(t, conn) {
		t.Fatal("the good file of a refused run was applied")
	}
}

// TestRuntimeRoleScriptMakesTheFunctionTable: docs/runtime-role.sql makes
// schema_functions as Up does, so that whichever comes first, the
// runtime role may read it and not write it.
func TestRuntimeRoleScriptMakesTheFunctionTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/runtime-role.sql")
	if err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(`\s+`)
	if !strings.Contains(space.ReplaceAllString(string(b), " "), space.ReplaceAllString(schema.CreateFunctionTable, " ")+";") {
		t.Errorf("docs/runtime-role.sql does not create %s as Up does:\n%s", schema.FunctionTable, schema.CreateFunctionTable)
	}
}

// TestHashCoversFunctionFiles: the hash that keys test templates changes
// when a function file changes, is added or goes, as when a migration does.
func TestHashCoversFunctionFiles(t *testing.T) {
	t.Parallel()
	tree := func(edit func(fstest.MapFS)) string {
		t.Helper()
		fsys := fstest.MapFS{
			"migrations/001_baseline.sql": {Data: []byte("CREATE TABLE t (x int);")},
			"functions/f.sql":             {Data: []byte("CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$SELECT 1$$;")},
		}
		edit(fsys)
		h, err := schema.HashFiles(fsys)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := tree(func(fstest.MapFS) {})
	for name, edit := range map[string]func(fstest.MapFS){
		"BodyChanged": func(m fstest.MapFS) {
			m["functions/f.sql"].Data = []byte("CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$SELECT 2$$;")
		},
		"FunctionAdded":    func(m fstest.MapFS) { m["functions/g.sql"] = &fstest.MapFile{Data: []byte("x")} },
		"FunctionRemoved":  func(m fstest.MapFS) { delete(m, "functions/f.sql") },
		"MigrationChanged": func(m fstest.MapFS) { m["migrations/001_baseline.sql"].Data = []byte("CREATE TABLE t (y int);") },
	} {
		if tree(edit) == base {
			t.Errorf("%s: the hash did not change", name)
		}
	}
	if tree(func(m fstest.MapFS) { m["functions/README"] = &fstest.MapFile{Data: []byte("x")} }) != base {
		t.Error("a file that is not SQL changed the hash")
	}
	if h, err := schema.Hash(); err != nil || len(h) != 64 {
		t.Fatalf("Hash = %q, %v", h, err)
	}
}
