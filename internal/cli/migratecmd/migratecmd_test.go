package migratecmd_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/cli/migratecmd"
	"github.com/provider-ledger/adapter/store/storetest"
)

// prog is a program whose only command is migrate, its database given by
// --database-url.
func prog(args ...string) (code int, stdout, stderr string) {
	root := cli.Group(&cobra.Command{Use: "prog"})
	root.AddCommand(migratecmd.New(migratecmd.Options{
		Program: "prog",
		DatabaseFlags: func(cmd *cobra.Command) func() string {
			url := cmd.Flags().String("database-url", "", "the database")
			return func() string { return *url }
		},
		NoDatabase: errors.New("no database: set --database-url"),
	}))
	var out, errb bytes.Buffer
	code = cli.Execute(context.Background(), root, args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestStatusExitCodes: migrate status exits 0 when the schema is this
// build's, 1 while something is pending (and migrate up then brings it to
// 0), and 2 on any error, a schema newer than this build included: what a
// deploy script branches on.
func TestStatusExitCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("PendingThenUpToDate", func(t *testing.T) {
		t.Parallel()
		url := storetest.EmptyURL(t)
		if code, out, errs := prog("migrate", "status", "--database-url", url); code != migratecmd.StatusPending ||
			!strings.Contains(out, "apply with: prog migrate") || errs != "" {
			t.Fatalf("status of an empty database: exit %d, %q %q; want %d", code, out, errs, migratecmd.StatusPending)
		}
		if code, _, errs := prog("migrate", "up", "--database-url", url); code != 0 {
			t.Fatalf("up: exit %d %q", code, errs)
		}
		if code, out, _ := prog("migrate", "status", "--database-url", url); code != migratecmd.StatusUpToDate || !strings.Contains(out, "up to date") {
			t.Fatalf("status after up: exit %d %q", code, out)
		}
	})
	t.Run("Newer", func(t *testing.T) {
		t.Parallel()
		url := storetest.URL(t)
		conn, err := pgx.Connect(ctx, storetest.AdminURL(t, url))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "UPDATE schema_version SET version = version + 1"); err != nil {
			t.Fatal(err)
		}
		if code, out, errs := prog("migrate", "status", "--database-url", url); code != migratecmd.StatusError ||
			!strings.Contains(out, "migrated by a newer build") || !strings.Contains(errs, "newer build") {
			t.Fatalf("status of a newer database: exit %d, %q %q; want %d", code, out, errs, migratecmd.StatusError)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		refused := "postgres://nobody@" + ln.Addr().String() + "/none?connect_timeout=5"
		ln.Close()
		for _, args := range [][]string{
			{"migrate", "status"},                            // no database
			{"migrate", "status", "--database-url", refused}, // cannot connect
			{"migrate", "status", "--bogus"},                 // usage
			{"migrate", "status", "extra"},                   // usage
		} {
			if code, _, errs := prog(args...); code != migratecmd.StatusError || errs == "" {
				t.Errorf("%v: exit %d, stderr %q; want %d and a reason", args, code, errs, migratecmd.StatusError)
			}
		}
	})
}
