package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestConfusableAccountIDs: once paypal exists, an ID that prints like it
// is refused 409 account-id-confusable naming paypal, and nothing is
// created; the same ID again is still account-exists; IDs that only look
// different stay accounts of their own.
func TestConfusableAccountIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storetest.DB(t)
	create := func(id string) error {
		_, err := db.CreateAccount(ctx, ledger.NewAccount{AccountID: id, OwnerExternalID: "o", Currency: "USD"})
		return err
	}
	for _, id := range []string{"paypal", "bill"} {
		if err := create(id); err != nil {
			t.Fatalf("create %q: %v", id, err)
		}
	}
	if err := create("paypal"); !errors.Is(err, ledger.ErrAccountExists) {
		t.Fatalf("paypal again: %v, want account-exists", err)
	}
	for _, c := range []struct{ id, existing string }{
		{"paypaI", "paypal"}, // capital I
		{"paypa1", "paypal"}, // digit one
		{"bıll", "bill"},     // dotless i
		{"bilI", "bill"},
	} {
		err := create(c.id)
		var le *ledger.Error
		if !errors.Is(err, ledger.ErrAccountIDConfusable) || !errors.As(err, &le) || le.Code != ledger.CodeConflict ||
			!strings.Contains(le.Message, `"`+c.existing+`"`) {
			t.Errorf("create %q: %v, want account-id-confusable naming %q", c.id, err, c.existing)
		}
		if _, err := db.GetAccount(ctx, c.id); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Errorf("%q was created: %v", c.id, err)
		}
	}
	// Cyrillic раураl, full-width, ligature and Roman numeral never reach
	// the database: the restricted profile refuses them at /accountID.
	for _, id := range []string{"раураl", "paypal\uFF11", "\uFB01nance", "paypal\u2160"} {
		if err := create(id); ledger.CodeOf(err) != ledger.CodeInvalid {
			t.Errorf("create %q: %v, want invalid", id, err)
		}
	}
	for _, id := range []string{"Paypal", "paypal-2", "pay-pal"} {
		if err := create(id); err != nil {
			t.Errorf("create %q, which prints otherwise: %v", id, err)
		}
	}
}

// TestConfusableAccountIDsConcurrently: many clients opening IDs that all
// print alike at once: exactly one account is created, every other client
// is told which one prints like theirs.
func TestConfusableAccountIDsConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storetest.DB(t)
	ids := []string{"wallet", "waIlet", "wal1et", "walIet", "wa1let", "wa11et", "waIIet", "wallet"}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, len(ids)*3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = db.CreateAccount(ctx, ledger.NewAccount{AccountID: ids[i%len(ids)], OwnerExternalID: "o", Currency: "EUR"})
		}()
	}
	close(start)
	wg.Wait()
	var winner string
	var n int
	if err := pool.QueryRow(ctx, `SELECT min(account_id), count(*) FROM accounts WHERE kind = 'customer'`).Scan(&winner, &n); err != nil || n != 1 {
		t.Fatalf("%d accounts (%v), want exactly one", n, err)
	}
	wins := 0
	for i, err := range errs {
		id := ids[i%len(ids)]
		var le *ledger.Error
		switch {
		case err == nil:
			wins++
			if id != winner {
				t.Errorf("%q created, but the account is %q", id, winner)
			}
		case id == winner && errors.Is(err, ledger.ErrAccountExists):
		case id != winner && errors.Is(err, ledger.ErrAccountIDConfusable) && errors.As(err, &le) &&
			strings.Contains(le.Message, fmt.Sprintf("%q", winner)):
		default:
			t.Errorf("create %q: %v (the account is %q)", id, err, winner)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates succeeded, want 1", wins)
	}
}

// TestAccountsWithoutSkeleton: accounts written without a skeleton (before
// 005_account_skeletons.sql, or by an earlier build) are protected at
// once, and FillSkeletons stores theirs, the oldest first: of two legacy
// accounts that print alike, the older holds it and the younger keeps
// none; new look-alikes of either are refused.
func TestAccountsWithoutSkeleton(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, pool := storetest.DB(t)
	if _, err := pool.Exec(ctx, `SELECT ledger_ensure_system_accounts('USD', now());
INSERT INTO accounts (account_id, owner_external_id, currency, created_at, updated_at) VALUES
  ('acme', 'o', 'USD', now() - interval '2 days', now()),
  ('acrne', 'o', 'USD', now() - interval '1 day', now()),
  ('solo', 'o', 'USD', now(), now())`); err != nil {
		t.Fatal(err)
	}
	create := func(id string) error {
		_, err := db.CreateAccount(ctx, ledger.NewAccount{AccountID: id, OwnerExternalID: "o", Currency: "USD"})
		return err
	}
	if err := create("so1o"); !errors.Is(err, ledger.ErrAccountIDConfusable) || !strings.Contains(err.Error(), `"solo"`) {
		t.Fatalf("so1o before the fill: %v, want account-id-confusable naming solo", err)
	}
	filled, left, err := db.FillSkeletons(ctx)
	if err != nil || filled != 2 || left != 1 {
		t.Fatalf("FillSkeletons: filled %d, left %d, %v; want 2 and 1", filled, left, err)
	}
	var acme, acrne *string
	if err := pool.QueryRow(ctx, `SELECT (SELECT skeleton FROM accounts WHERE account_id = 'acme'),
(SELECT skeleton FROM accounts WHERE account_id = 'acrne')`).Scan(&acme, &acrne); err != nil {
		t.Fatal(err)
	}
	if acme == nil || *acme != ledger.Skeleton("acme") || acrne != nil {
		t.Fatalf("skeletons: acme %v, acrne %v; want the older to hold it", acme, acrne)
	}
	for _, c := range []struct{ id, want string }{
		{"so1o", "solo"}, {"acme", "account-exists"}, {"acrne", "account-exists"}, {"acnne", ""},
	} {
		err := create(c.id)
		switch c.want {
		case "":
			if err != nil {
				t.Errorf("%q, which prints otherwise: %v", c.id, err)
			}
		case "account-exists":
			if !errors.Is(err, ledger.ErrAccountExists) {
				t.Errorf("%q again: %v, want account-exists", c.id, err)
			}
		default:
			if !errors.Is(err, ledger.ErrAccountIDConfusable) || !strings.Contains(err.Error(), `"`+c.want+`"`) {
				t.Errorf("%q: %v, want account-id-confusable naming %q", c.id, err, c.want)
			}
		}
	}
}
