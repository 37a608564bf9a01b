package server_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestStartFillsSkeletons: accounts stored without a confusable skeleton
// (as before 005_account_skeletons.sql) have theirs once ledgerd has
// started, the older of two that print alike holding it.
func TestStartFillsSkeletons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	pool := storetest.PoolURL(t, url)
	if _, err := pool.Exec(ctx, `SELECT ledger_ensure_system_accounts('USD', now());
INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES
  ('modem', 'o', 'USD', now() - interval '1 day', now()), ('rnodem', 'o', 'USD', now(), now()), ('solo', 'o', 'USD', now(), now())`); err != nil {
		t.Fatal(err)
	}
	start(t, config(t, "DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-sk",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(randomKey(t))))
	got := map[string]string{}
	rows, err := pool.Query(ctx, `SELECT account_id, coalesce(skeleton, '') FROM accounts WHERE kind = 'customer'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, sk string
		if err := rows.Scan(&id, &sk); err != nil {
			t.Fatal(err)
		}
		got[id] = sk
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"modem": ledger.Skeleton("modem"), "rnodem": "", "solo": "solo"}
	for id, sk := range want {
		if got[id] != sk {
			t.Errorf("%s: skeleton %q, want %q", id, got[id], sk)
		}
	}
}
