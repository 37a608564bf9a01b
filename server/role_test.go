package server_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// startErr runs ledgerd with cfg and returns the error it stops with, for
// configurations that must not start.
func startErr(t *testing.T, cfg server.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := server.Run(ctx, cfg, nil, server.Hooks{Started: func(string, string) {
		t.Error("ledgerd started")
		cancel()
	}})
	if ctx.Err() != nil && err == nil {
		t.Fatal("ledgerd neither started nor failed within 60s")
	}
	return err
}

// roles is a database owned by a role of its own (as the owner of a bank's
// ledger database), with the runtime role of docs/runtime-role.sql.
type roles struct {
	ownerURL, runtimeURL, runtime string
}

// withUser returns dbURL connecting as user with password (which a server
// with trust authentication ignores).
func withUser(t *testing.T, dbURL, user, password string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

func sqlExec(t *testing.T, dbURL, sql string) error {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// setupRoles creates two roles of names unique to t, gives the owner an
// empty database and runs docs/runtime-role.sql in it as the owner. The
// roles are dropped after the database.
func setupRoles(t *testing.T) roles {
	t.Helper()
	suffix := strings.ToLower(rand.Text()[:10])
	owner, runtime := "ledger_owner_"+suffix, "ledger_runtime_"+suffix
	password := rand.Text()                          // base32: nothing to quote
	admin := storetest.AdminURL(t, storetest.URL(t)) // any database, as the server's superuser
	if err := sqlExec(t, admin, `CREATE ROLE `+owner+` LOGIN PASSWORD '`+password+`'; CREATE ROLE `+runtime+` LOGIN PASSWORD '`+password+`'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlExec(t, admin, `DROP ROLE IF EXISTS `+runtime+`; DROP ROLE IF EXISTS `+owner) })
	empty := storetest.EmptyURL(t)
	if err := sqlExec(t, storetest.AdminURL(t, empty), `ALTER DATABASE "`+dbName(t, empty)+`" OWNER TO `+owner); err != nil {
		t.Fatal(err)
	}
	r := roles{ownerURL: withUser(t, empty, owner, password), runtimeURL: withUser(t, empty, runtime, password), runtime: runtime}
	runtimeRoleSQL(t, r)
	return r
}

// runtimeRoleSQL runs docs/runtime-role.sql as r's owner, for r's runtime
// role.
func runtimeRoleSQL(t *testing.T, r roles) {
	t.Helper()
	file, err := os.ReadFile("../docs/runtime-role.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlExec(t, r.ownerURL, strings.ReplaceAll(string(file), "ledger_runtime", r.runtime)); err != nil {
		t.Fatalf("docs/runtime-role.sql as the owner: %v", err)
	}
}

func dbName(t *testing.T, dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// TestLeastPrivilegeRuntimeRole: migrated by the owner, ledgerd serves the
// callbacks and the admin API as the runtime role of docs/runtime-role.sql,
// which cannot change the schema.
func TestLeastPrivilegeRuntimeRole(t *testing.T) {
	t.Parallel()
	secret, b64 := testSecret()

	t.Run("MigratesAsOwnerServesAsRuntime", func(t *testing.T) {
		t.Parallel()
		r := setupRoles(t)
		d := start(t, config(t, "DATABASE_URL", r.runtimeURL, "LEDGER_MIGRATION_DATABASE_URL", r.ownerURL,
			"LEDGER_PROVIDER_ID", "bank-r", "LEDGER_SIGNING_SECRETS", b64))
		// docs/runtime-role.sql again, after the migration, as it says: its
		// revokes reach the append-only tables the migration created.
		runtimeRoleSQL(t, r)
		b := newBank(t, d, "bank-r", secret, "")
		b.customer("acc-r", "rita", "100.00")
		b.lifecycle("r1", "acc-r", "rita")
		b.must(201, "POST", "/v1/signing-secrets", map[string]any{"generate": true})
		b.must(201, "POST", "/v1/reconciliation/runs", map[string]any{"fix": true})
		acct := b.must(200, "GET", "/v1/accounts/acc-r", nil)
		if acct["balance"] != "99.50" || acct["held"] != "0.00" && acct["held"] != "0" {
			t.Fatalf("account after the lifecycle: %v", acct)
		}

		appendOnlyRefused(t, r.runtimeURL)

		schemaChangesRefused(t, r.runtimeURL)
	})

	t.Run("MigrateOffRefusesAnOldSchemaUntilLedgerctlMigrate", func(t *testing.T) {
		t.Parallel()
		r := setupRoles(t)
		cfg := config(t, "DATABASE_URL", r.runtimeURL, "LEDGER_MIGRATE", "off",
			"LEDGER_PROVIDER_ID", "bank-r", "LEDGER_SIGNING_SECRETS", b64)
		err := startErr(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "ledgerctl migrate") || !strings.Contains(err.Error(), "version 0") {
			t.Fatalf("LEDGER_MIGRATE=off on an empty database: %v, want a refusal naming ledgerctl migrate", err)
		}
		// What `ledgerctl migrate` does, as the owner.
		if _, err := schema.MigrateURL(context.Background(), r.ownerURL); err != nil {
			t.Fatal(err)
		}
		// A function body out of date (a build whose functions/hold_settle.sql
		// changed) is refused as a pending migration is.
		if err := sqlExec(t, r.ownerURL, `UPDATE schema_functions SET checksum = 'before-the-edit' WHERE name = 'hold_settle'`); err != nil {
			t.Fatal(err)
		}
		err = startErr(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "ledgerctl migrate") || !strings.Contains(err.Error(), "functions/hold_settle.sql") {
			t.Fatalf("LEDGER_MIGRATE=off with a function body out of date: %v, want a refusal naming the file and ledgerctl migrate", err)
		}
		if _, err := schema.MigrateURL(context.Background(), r.ownerURL); err != nil {
			t.Fatal(err)
		}
		d := start(t, cfg)
		b := newBank(t, d, "bank-r", secret, "")
		b.customer("acc-o", "otto", "10.00")
		b.lifecycle("o1", "acc-o", "otto")
	})

	t.Run("AutoWithoutDDLRightsFailsNamingTheCause", func(t *testing.T) {
		t.Parallel()
		r := setupRoles(t)
		err := startErr(t, config(t, "DATABASE_URL", r.runtimeURL, "LEDGER_PROVIDER_ID", "bank-r", "LEDGER_SIGNING_SECRETS", b64))
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("LEDGER_MIGRATE=auto as the runtime role: %v, want permission denied", err)
		}
	})
}

// schemaChangesRefused checks that the runtime role of runtimeURL cannot
// change the schema: create, alter, drop, truncate, rewrite the migration
// bookkeeping or disable a table's guards.
func schemaChangesRefused(t *testing.T, runtimeURL string) {
	t.Helper()
	for name, ddl := range map[string]string{
		"CreateTable":          `CREATE TABLE intruder (x int)`,
		"AlterTable":           `ALTER TABLE accounts ADD COLUMN intruder int`,
		"DropFunction":         `DROP FUNCTION cb_authorize`,
		"Truncate":             `TRUNCATE reconciliation_findings`,
		"CreateFunction":       `CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
		"UpdateSchemaVersion":  `UPDATE schema_version SET version = 0`,
		"UpdateFunctionSums":   `UPDATE schema_functions SET checksum = ''`,
		"DisableJournalGuards": `ALTER TABLE journal DISABLE TRIGGER ALL`,
	} {
		var pgErr *pgconn.PgError
		err := sqlExec(t, runtimeURL, ddl)
		if !errors.As(err, &pgErr) || (pgErr.Code != "42501" && pgErr.Code != "42883" && pgErr.Code != "42P01") {
			t.Errorf("%s as the runtime role: %v, want permission denied (42501)", name, err)
		} else if pgErr.Code != "42501" {
			t.Errorf("%s as the runtime role: %v: the statement names something that does not exist", name, err)
		}
	}
}

// appendOnly are the tables whose rows, once written, are the ledger's
// history, each with the statements that would change them and the error
// code each must get: the runtime role may add rows but has no right to
// change, delete or truncate one (42501, insufficient privilege, before any
// trigger runs). audit_head is the audit chain's head: audit_append advances
// it with its caller's rights, so the runtime role keeps UPDATE and its
// guard refuses any other change (LA006).
var appendOnly = map[string]map[string]string{
	"journal":          {"UPDATE journal SET reference = reference": "42501", "DELETE FROM journal": "42501", "TRUNCATE journal": "42501"},
	"holds":            {"UPDATE holds SET payout_id = payout_id": "42501", "DELETE FROM holds": "42501", "TRUNCATE holds": "42501"},
	"hold_settlements": {"UPDATE hold_settlements SET status = status": "42501", "DELETE FROM hold_settlements": "42501", "TRUNCATE hold_settlements": "42501"},
	"audit_log":        {"UPDATE audit_log SET actor_id = actor_id": "42501", "DELETE FROM audit_log": "42501", "TRUNCATE audit_log": "42501"},
	"audit_head":       {"UPDATE audit_head SET seq = seq": "LA006", "DELETE FROM audit_head": "42501", "TRUNCATE audit_head": "42501"},
}

// appendOnlyRefused checks that, as the runtime role of runtimeURL, every
// change of an append-only table's rows is refused with the code
// appendOnly gives it and leaves the table's rows as they were. Each table
// must hold rows already: an UPDATE of no rows would pass for the wrong
// reason.
func appendOnlyRefused(t *testing.T, runtimeURL string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, runtimeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for table, statements := range appendOnly {
		before := tableDigest(t, conn, table)
		if before == "0:" {
			t.Fatalf("%s holds no rows: the lifecycle before this check writes some", table)
		}
		for sql, code := range statements {
			_, err := conn.Exec(ctx, sql)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != code {
				t.Errorf("%s as the runtime role: %v, want it refused with %s", sql, err, code)
			}
		}
		if after := tableDigest(t, conn, table); after != before {
			t.Errorf("%s changed under the refused statements: %s, was %s", table, after, before)
		}
	}
}

// tableDigest is a table's row count and the md5 of its rows in order.
func tableDigest(t *testing.T, conn *pgx.Conn, table string) string {
	t.Helper()
	var digest string
	err := conn.QueryRow(context.Background(), `SELECT count(*) || ':' || coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM `+table+` x`).Scan(&digest)
	if err != nil {
		t.Fatalf("reading %s as the runtime role: %v", table, err)
	}
	return digest
}

// TestBuildInfoMetric: /metrics says which build runs.
func TestBuildInfoMetric(t *testing.T) {
	t.Parallel()
	_, b64 := testSecret()
	d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-v", "LEDGER_SIGNING_SECRETS", b64))
	resp, err := http.Get("http://" + d.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	line := regexp.MustCompile(`(?m)^ledgerd_build_info\{goversion="go[0-9.]+[^"]*",revision="[^"]+",version="[^"]+"\} 1$`)
	if !line.Match(body) {
		t.Fatalf("no ledgerd_build_info line in /metrics:\n%s", body)
	}
	for _, m := range []string{"ledgerd_db_primary_changes_total 0", "ledgerd_db_split_brains_total 0", "ledgerd_db_unreplicated_commits_total 0"} {
		if !strings.Contains(string(body), "\n"+m+"\n") {
			t.Errorf("/metrics lacks %q", m)
		}
	}
}

// TestReadinessOnAReadOnlyDatabase: a database whose sessions are
// read-only (a standby, a demoted primary) makes ledgerd not ready, with
// the reason.
func TestReadinessOnAReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	_, b64 := testSecret()
	dbURL := storetest.URL(t)
	d := start(t, config(t, "DATABASE_URL", dbURL, "LEDGER_PROVIDER_ID", "bank-o", "LEDGER_SIGNING_SECRETS", b64))
	if code := get(t, "http://"+d.admin+"/readyz", nil); code != http.StatusOK {
		t.Fatalf("readyz = %d", code)
	}
	admin := storetest.AdminURL(t, dbURL)
	db := dbName(t, dbURL)
	if err := sqlExec(t, admin, `ALTER DATABASE "`+db+`" SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	// The pool's sessions end; the new ones are read-only.
	if err := sqlExec(t, admin, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '`+db+`' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	wait.UntilErr(t, "/readyz to answer 503 read-only", func() error {
		var body map[string]any
		code := get(t, "http://"+d.admin+"/readyz", &body)
		if detail, _ := body["detail"].(string); code != http.StatusServiceUnavailable || !strings.Contains(detail, "read-only") {
			return fmt.Errorf("readyz on a read-only database: %d %v", code, body)
		}
		return nil
	})
}
