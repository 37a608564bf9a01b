package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// reconcilePool is the size of reconciliation's own pool that
// docs/reconciliation.md documents: two connections.
const reconcilePool = 2

// TestReconciliationRunsOnItsOwnPool: sixteen concurrent manual runs on a
// ledgerd whose callback pool is two connections: each answers 201 (it
// ran) or 409 (another was running), none anything else, and the runs'
// queries went over reconciliation's own connections, at most
// reconcilePool of them, named in pg_stat_activity.
func TestReconciliationRunsOnItsOwnPool(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	d := start(t, config(t, "DATABASE_URL", url+"&pool_max_conns=2", "LEDGER_PROVIDER_ID", "bank-9", "LEDGER_RECONCILE_EVERY", "0"))

	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			resp, err := http.Post("http://"+d.admin+"/v1/reconciliation/runs", "application/json", strings.NewReader(`{}`))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[-1]++
				return
			}
			resp.Body.Close()
			statuses[resp.StatusCode]++
		})
	}
	wg.Wait()
	if statuses[http.StatusCreated] < 1 || statuses[http.StatusCreated]+statuses[http.StatusConflict] != 16 {
		t.Fatalf("16 concurrent runs answered %v, want 201 (ran) or 409 (another ran) only", statuses)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var named, ranHere int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE query ILIKE '%reconciliation%' OR query ILIKE '%hold%')
FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, server.ReconcileApplicationName).Scan(&named, &ranHere); err != nil {
		t.Fatal(err)
	}
	if named < 1 || named > reconcilePool || ranHere < 1 {
		t.Errorf("%d connections named %s (want 1 to %d), %d of them last ran reconciliation's SQL (want at least 1)",
			named, server.ReconcileApplicationName, reconcilePool, ranHere)
	}
	var runs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM reconciliation_runs`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != statuses[http.StatusCreated] {
		t.Errorf("%d runs recorded, %d answered 201", runs, statuses[http.StatusCreated])
	}
}
