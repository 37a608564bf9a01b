package embedpg_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/embedpg"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestExec: Exec creates and drops a database (statements that cannot run
// in a transaction), and Version reads the server's version.
func TestExec(t *testing.T) {
	t.Parallel()
	server := os.Getenv("TEST_DATABASE_URL")
	if server == "" {
		server = storetest.DefaultURL
	}
	ctx := context.Background()
	v, err := embedpg.Version(ctx, server)
	if err != nil || !strings.HasPrefix(v, "PostgreSQL ") {
		t.Fatalf("version %q: %v", v, err)
	}
	name := fmt.Sprintf("embedpg_exec_%d", time.Now().UnixNano())
	if err := embedpg.Exec(ctx, server, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(server)
	u.Path = "/" + name
	if _, err := embedpg.Version(ctx, u.String()); err != nil {
		t.Fatalf("the database created cannot be reached: %v", err)
	}
	if err := embedpg.Exec(ctx, server, `DROP DATABASE "`+name+`" WITH (FORCE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := embedpg.Version(ctx, u.String()); err == nil {
		t.Fatal("the database dropped can still be reached")
	}
	if err := embedpg.Exec(ctx, server, "SELECT nonsense"); err == nil {
		t.Fatal("a bad statement did not fail")
	}
}
