package callbacks_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/store/storetest"
)

// failHoldInserts makes the next n hold inserts of the database fail with a
// serialization failure (40001), as a concurrent transaction could.
func failHoldInserts(t *testing.T, url string, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, fmt.Sprintf(`
CREATE SEQUENCE IF NOT EXISTS test_failures;
SELECT setval('test_failures', 1, false);
GRANT ALL ON SEQUENCE test_failures TO PUBLIC;
CREATE OR REPLACE FUNCTION test_fail_hold_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('test_failures') <= %d THEN
        RAISE EXCEPTION 'injected serialization failure' USING ERRCODE = '40001';
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS test_fail_hold_insert ON holds;
CREATE TRIGGER test_fail_hold_insert BEFORE INSERT ON holds FOR EACH ROW EXECUTE FUNCTION test_fail_hold_insert();`, n))
	if err != nil {
		t.Fatal(err)
	}
}

// TestSerializationFailuresAreRetried: a callback whose transaction fails
// on a serialization failure is run again inside the server; only when the
// failures persist past the bound is it answered 503, with nothing applied.
func TestSerializationFailuresAreRetried(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	b := setup(t, opts{pool: storetest.PoolURL(t, url)})
	b.account(t, storetest.AccountOpts{AccountID: "sf-1", Owner: "alice", Funds: "10", Source: "src-sf"})
	retries := func() float64 {
		return testutil.ToFloat64(b.server.Metrics().TxRetries(claims.Authorize))
	}

	failHoldInserts(t, url, 2)
	r := b.send(t, claims.Authorize, authorizeClaims("sf-p1", "sf-k1", "alice", "src-sf", "1", 0))
	if r.Status != 200 || r.Outcome() != "approved" || retries() != 2 {
		t.Fatalf("after 2 failures: %d %v, %v retries", r.Status, r.Service, retries())
	}

	failHoldInserts(t, url, 100)
	r = b.send(t, claims.Authorize, authorizeClaims("sf-p2", "sf-k2", "alice", "src-sf", "1", 0))
	if r.Status != 503 || problemType(r) != "database-unavailable" || r.RetryAfter == "" {
		t.Fatalf("persistent failures: %d %v", r.Status, r.Problem)
	}
	storetest.AssertBalances(t, b.db, "sf-1", "10", "1", "9")
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM callback_requests WHERE idempotency_key = 'sf-k2'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed callback left %d idempotency rows (%v)", n, err)
	}
}
