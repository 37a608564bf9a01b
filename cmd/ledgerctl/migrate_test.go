package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/schema"
	"github.com/provider-ledger/adapter/store/storetest"
)

func runCtl(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMigrateStatusAndUp(t *testing.T) {
	t.Parallel()
	all, err := schema.List()
	if err != nil {
		t.Fatal(err)
	}
	latest := schema.Latest()
	fns, err := schema.Functions()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("StatusDryRunUpStatus", func(t *testing.T) {
		t.Parallel()
		url := storetest.EmptyURL(t)
		code, out, errs := runCtl("migrate", "status", "--database-url", url)
		if code != 1 || !strings.Contains(out, "database version  0") || !strings.Contains(out, all[0].Name) ||
			!strings.Contains(out, all[len(all)-1].Name) || !strings.Contains(out, "ledgerctl migrate") {
			t.Fatalf("status of an empty database: exit %d\n%s%s", code, out, errs)
		}
		if !strings.Contains(out, "functions/cb_authorize.sql") {
			t.Fatalf("status of an empty database names no function file:\n%s", out)
		}
		code, out, errs = runCtl("migrate", "up", "--dry-run", "--database-url", url)
		if code != 0 || !strings.Contains(out, "-- migration 1: "+all[0].Name) || !strings.Contains(out, "CREATE TABLE accounts") ||
			!strings.Contains(out, "-- function cb_authorize: functions/cb_authorize.sql") {
			t.Fatalf("up --dry-run: exit %d\n%s%s", code, out, errs)
		}
		if code, out, _ = runCtl("migrate", "status", "--database-url", url); code != 1 || !strings.Contains(out, "database version  0") {
			t.Fatalf("the dry run changed the database: exit %d\n%s", code, out)
		}
		code, out, errs = runCtl("migrate", "up", "--database-url", url)
		if want := fmt.Sprintf("schema at version %d (was 0); functions applied: %d", latest, len(fns)); code != 0 || !strings.Contains(out, want) ||
			!strings.Contains(errs, "applying migration") || !strings.Contains(errs, "applying function") {
			t.Fatalf("up: exit %d %q %q, want %q and progress on stderr", code, out, errs, want)
		}
		if code, out, _ = runCtl("migrate", "status", "--database-url", url); code != 0 || !strings.Contains(out, "up to date") {
			t.Fatalf("status after up: exit %d\n%s", code, out)
		}
		if code, out, _ = runCtl("migrate", "up", "--dry-run", "--database-url", url); code != 0 || strings.Contains(out, "-- migration") {
			t.Fatalf("dry run of a current database: exit %d\n%s", code, out)
		}
	})

	t.Run("UpWaitsForTheLockThenGivesUp", func(t *testing.T) {
		t.Parallel()
		url := storetest.EmptyURL(t)
		ctx := context.Background()
		holder, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close(ctx)
		if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock(9628173550095224)"); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCtl("migrate", "up", "--lock-timeout", "300ms", "--database-url", url)
		if code != 1 || !strings.Contains(errs, "waiting for the migration lock") || !strings.Contains(errs, "timed out waiting for the migration lock") {
			t.Fatalf("up with the lock held: exit %d %q", code, errs)
		}
	})
}

// TestMigrateAppliesAChangedFunctionFile: a function file whose body the
// database does not have is pending in migrate status, printed by up
// --dry-run alone, and applied by migrate.
func TestMigrateAppliesAChangedFunctionFile(t *testing.T) {
	t.Parallel()
	latest := schema.Latest()
	url := storetest.URL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// As if the database had been migrated by the build before an edit
	// of functions/cb_credit.sql.
	if _, err := conn.Exec(context.Background(), `UPDATE schema_functions SET checksum = 'before-the-edit' WHERE name = 'cb_credit'`); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCtl("migrate", "status", "--database-url", url)
	if code != 1 || !strings.Contains(out, "pending           1 (apply with: ledgerctl migrate)") || !strings.Contains(out, "functions/cb_credit.sql") {
		t.Fatalf("status with a function file changed: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCtl("migrate", "up", "--dry-run", "--database-url", url)
	if code != 0 || !strings.Contains(out, "-- function cb_credit: functions/cb_credit.sql") || !strings.Contains(out, "CREATE OR REPLACE FUNCTION cb_credit(") ||
		strings.Contains(out, "-- migration") || strings.Contains(out, "cb_authorize") {
		t.Fatalf("up --dry-run with a function file changed: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCtl("migrate", "--database-url", url)
	if want := fmt.Sprintf("schema at version %d; functions applied: 1", latest); code != 0 || !strings.Contains(out, want) ||
		!strings.Contains(errs, "applying function") || !strings.Contains(errs, "cb_credit") {
		t.Fatalf("migrate: exit %d %q %q, want %q", code, out, errs, want)
	}
	if code, out, _ = runCtl("migrate", "status", "--database-url", url); code != 0 || !strings.Contains(out, "up to date") {
		t.Fatalf("status after migrate: exit %d\n%s", code, out)
	}
}

// TestDBURL: ledgerctl db-url prints a URL of the running embedded
// Postgres that connects, from the data directory alone.
func TestDBURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such")
	if code, _, errs := runCtl("db-url", "--data-dir", missing); code != 1 ||
		errs != "ledgerctl db-url: embedpg: the embedded Postgres is not running: there is no "+missing+" (is it the LEDGER_DATA_DIR ledgerd runs with?)\n" {
		t.Fatalf("db-url of a missing directory: exit %d %q", code, errs)
	}
	if code, _, errs := runCtl("db-url", "--data-dir", dir); code != 1 || !strings.Contains(errs, "no embedded cluster") {
		t.Fatalf("db-url of an empty directory: exit %d %q", code, errs)
	}
	ctx := context.Background()
	pg, err := embedpg.Start(ctx, embedpg.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = pg.Stop(ctx)
		}
	}()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"db-url", "--data-dir", dir}, "passfile="},
		{[]string{"db-url", "--data-dir", dir, "--with-password"}, "postgres://postgres:"},
	} {
		code, out, errs := runCtl(c.args...)
		u := strings.TrimSpace(out)
		if code != 0 || !strings.Contains(u, c.want) {
			t.Fatalf("%v: exit %d %q %q", c.args, code, out, errs)
		}
		if c.want == "passfile=" && u != pg.PassfileURL() {
			t.Errorf("db-url %q, want the URL ledgerd logs, %q", u, pg.PassfileURL())
		}
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatalf("connecting to %s: %v", u, err)
		}
		conn.Close(ctx)
	}
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if code, _, errs := runCtl("db-url", "--data-dir", dir); code != 1 || !strings.Contains(errs, "not running") {
		t.Fatalf("db-url of a stopped cluster: exit %d %q", code, errs)
	}
}
