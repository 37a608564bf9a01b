package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// functionTable is the table in which up records the checksum of each
// function file it applied.
const functionTable = "schema_functions"

// createFunctionTable makes functionTable, as up does before it applies
// anything (docs/runtime-role.sql makes the same table, so that the
// runtime role may read it and not write it).
//
// name is a function's name, and its file's. checksum is the hex SHA-256
// of the file last applied; superseded the checksums of the files it
// replaced, so that an older build, whose file is one of them, never puts
// its body back (up refuses it as ErrNewer).
const createFunctionTable = `CREATE TABLE IF NOT EXISTS ` + functionTable + ` (
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_on timestamptz NOT NULL,
    superseded text[]      NOT NULL DEFAULT '{}',
    CONSTRAINT schema_functions_pkey PRIMARY KEY (name)
)`

// Function is one embedded function file: the current definition of one
// server-side function, whose signature a numbered migration declares.
type Function struct {
	Name     string // the function's name, and its file's: functions/<Name>.sql
	SQL      string // the file: comments, then CREATE OR REPLACE FUNCTION <Name>(…) … AS $$…$$;
	Checksum string // hex SHA-256 of the file, recorded in schema_functions once applied
}

// File is the function's file, relative to the schema directory.
func (f Function) File() string { return "functions/" + f.Name + ".sql" }

// Functions returns the embedded function files in the order UpURL applies
// them: by name. A file that is not exactly one CREATE OR REPLACE FUNCTION
// of its own name is an error.
func Functions() ([]Function, error) {
	names, err := fs.Glob(files, "functions/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]Function, 0, len(names))
	for _, path := range names {
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		f := Function{Name: strings.TrimSuffix(strings.TrimPrefix(path, "functions/"), ".sql"), SQL: string(b), Checksum: hex.EncodeToString(sum[:])}
		if err := checkFunctionFile(f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

var (
	functionName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	dollarQuote  = regexp.MustCompile(`\$[A-Za-z_]*\$`)
)

// checkFunctionFile checks that f.SQL is comment lines, then one CREATE OR
// REPLACE FUNCTION f.Name(…) whose body is dollar-quoted, then nothing but
// its semicolon and comment lines.
func checkFunctionFile(f Function) error {
	bad := func(why string) error {
		return fmt.Errorf("schema: %s: %s (a function file holds one CREATE OR REPLACE FUNCTION of its own name; see schema/README.md)", f.File(), why)
	}
	if !functionName.MatchString(f.Name) {
		return bad("not a lower-case function name")
	}
	code := stripCommentLines(f.SQL)
	if !strings.HasPrefix(code, "CREATE OR REPLACE FUNCTION "+f.Name+"(") {
		return bad("does not start with CREATE OR REPLACE FUNCTION " + f.Name + "(")
	}
	open := dollarQuote.FindStringIndex(code)
	if open == nil {
		return bad("no dollar-quoted body")
	}
	tag := code[open[0]:open[1]]
	end := strings.Index(code[open[1]:], tag)
	if end < 0 {
		return bad("the body's " + tag + " is not closed")
	}
	if rest := stripCommentLines(code[open[1]+end+len(tag):]); rest != ";" {
		return bad("more than one statement")
	}
	return nil
}

// stripCommentLines returns s without its blank lines and lines that are
// comments, trimmed.
func stripCommentLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// recorded is a function's row of functionTable.
type recorded struct {
	checksum   string
	superseded []string
}

// readFunctions returns the rows of functionTable by name; none when the
// table does not exist.
func readFunctions(ctx context.Context, q querier) (map[string]recorded, error) {
	var exists bool
	if err := q.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", functionTable).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	rows, err := q.Query(ctx, "SELECT name, checksum, superseded FROM "+functionTable)
	if err != nil {
		return nil, err
	}
	out := map[string]recorded{}
	var name string
	var r recorded
	_, err = pgx.ForEachRow(rows, []any{&name, &r.checksum, &r.superseded}, func() error {
		out[name] = r
		return nil
	})
	return out, err
}

// querier is a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// compareFunctions sorts fns against the rows of functionTable: pending
// (never applied, or changed since), and newer (this build's file was
// applied once and replaced since: a newer build's body is in place).
func compareFunctions(fns []Function, rec map[string]recorded) (pending, newer []Function) {
	for _, f := range fns {
		r, ok := rec[f.Name]
		switch {
		case !ok:
			pending = append(pending, f)
		case r.checksum == f.Checksum:
		case slices.Contains(r.superseded, f.Checksum):
			newer = append(newer, f)
		default:
			pending = append(pending, f)
		}
	}
	return pending, newer
}

// applyFunctions applies the function files of fns that are pending, in
// one transaction, and records them; the caller holds the migration lock.
// Each function must already be declared, by a numbered migration, with
// the signature its file gives: a file that would create a function, or
// an overload beside the declared one, is refused and nothing is applied.
func applyFunctions(ctx context.Context, conn *pgx.Conn, fns []Function, log *slog.Logger) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		rec, err := readFunctions(ctx, tx)
		if err != nil {
			return fmt.Errorf("schema: reading %s: %w", functionTable, err)
		}
		pending, newer := compareFunctions(fns, rec)
		if len(newer) > 0 {
			return fmt.Errorf("%w: %s", ErrNewer, newerFunctions(newer))
		}
		for _, f := range pending {
			log.Info("applying function", "name", f.Name, "file", f.File())
			if err := applyFunction(ctx, tx, f); err != nil {
				return err
			}
		}
		names := make([]string, len(fns))
		for i, f := range fns {
			names[i] = f.Name
		}
		// Rows of functions a migration dropped (and whose file went with them).
		_, err = tx.Exec(ctx, `DELETE FROM `+functionTable+` f WHERE NOT f.name = ANY($1)
			AND NOT EXISTS (SELECT FROM pg_proc p WHERE p.proname = f.name AND p.pronamespace = `+currentSchema+`)`, names)
		return err
	})
}

// currentSchema is the OID of the schema the migrations create objects in.
const currentSchema = `(SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema())`

// applyFunction runs one function file on tx and records its checksum.
func applyFunction(ctx context.Context, tx pgx.Tx, f Function) error {
	declared := func() ([]uint32, error) {
		var oids []uint32
		err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(p.oid ORDER BY p.oid), '{}') FROM pg_proc p
			WHERE p.proname = $1 AND p.pronamespace = `+currentSchema, f.Name).Scan(&oids)
		return oids, err
	}
	before, err := declared()
	if err != nil {
		return fmt.Errorf("schema: %s: %w", f.File(), err)
	}
	switch {
	case len(before) == 0:
		return fmt.Errorf("schema: %s: no function %s is declared: a new function's signature is declared in a numbered migration (schema/README.md)", f.File(), f.Name)
	case len(before) > 1:
		return fmt.Errorf("schema: %s: %d functions are named %s: drop the overloads in a numbered migration (schema/README.md)", f.File(), len(before), f.Name)
	}
	if _, err := tx.Exec(ctx, f.SQL); err != nil {
		return fmt.Errorf("schema: %s: %w (a signature changes in a numbered migration: schema/README.md)", f.File(), err)
	}
	after, err := declared()
	if err != nil {
		return fmt.Errorf("schema: %s: %w", f.File(), err)
	}
	if !slices.Equal(before, after) {
		return fmt.Errorf("schema: %s: its signature is not the one declared for %s, so it would add an overload: "+
			"a signature changes in a numbered migration that drops the old function and declares the new one (schema/README.md)", f.File(), f.Name)
	}
	_, err = tx.Exec(ctx, `INSERT INTO `+functionTable+` AS t (name, checksum, applied_on) VALUES ($1, $2, now())
		ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_on = EXCLUDED.applied_on,
			superseded = array_append(array_remove(t.superseded, EXCLUDED.checksum), t.checksum)`, f.Name, f.Checksum)
	if err != nil {
		return fmt.Errorf("schema: recording %s: %w", f.File(), err)
	}
	return nil
}

// newerFunctions says which functions a newer build replaced.
func newerFunctions(newer []Function) string {
	names := make([]string, len(newer))
	for i, f := range newer {
		names[i] = f.Name
	}
	return fmt.Sprintf("the bodies of %s in the database replaced this build's %s: a newer build applied them "+
		"(to go back to an earlier body on purpose, commit it as a new change; on a developer's database, "+
		"DELETE FROM %s WHERE name IN ('%s') and migrate again)",
		strings.Join(names, ", "), fileList(newer), functionTable, strings.Join(names, "', '"))
}

func fileList(fns []Function) string {
	files := make([]string, len(fns))
	for i, f := range fns {
		files[i] = f.File()
	}
	return strings.Join(files, ", ")
}
