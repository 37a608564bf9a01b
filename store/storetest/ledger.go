package storetest

// Factories for tests that need accounts, funds and instruments in a real
// database, and an invariant assertion.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
)

var seq atomic.Int64

// Unique returns prefix followed by a number unique in the test binary.
func Unique(prefix string) string { return fmt.Sprintf("%s%d", prefix, seq.Add(1)) }

// AccountOpts shapes an account made by Account. Zero values get defaults:
// a unique ID and owner, USD, open, no funds.
type AccountOpts struct {
	AccountID string
	Owner     string
	Currency  string
	Status    string
	Funds     string // decimal; adjusted in when set
	Source    string // instrument token of kind source to map; "" none
	Dest      string // instrument token of kind destination to map; "" none
}

// Account creates an account as opts say and returns it as read back.
func Account(t testing.TB, db *store.DB, o AccountOpts) ledger.Account {
	t.Helper()
	ctx := context.Background()
	if o.AccountID == "" {
		o.AccountID = Unique("acct-")
	}
	if o.Owner == "" {
		o.Owner = Unique("owner-")
	}
	if o.Currency == "" {
		o.Currency = "USD"
	}
	status := o.Status
	if _, err := db.CreateAccount(ctx, ledger.NewAccount{AccountID: o.AccountID, OwnerExternalID: o.Owner, Currency: o.Currency}); err != nil {
		t.Fatalf("storetest: create account: %v", err)
	}
	if o.Funds != "" {
		if _, err := db.Adjust(ctx, o.AccountID, decimal.RequireFromString(o.Funds), Unique("fund-"), "test funds"); err != nil {
			t.Fatalf("storetest: fund account: %v", err)
		}
	}
	for kind, token := range map[string]string{ledger.InstrumentSource: o.Source, ledger.InstrumentDestination: o.Dest} {
		if token == "" {
			continue
		}
		if _, _, err := db.AddInstrument(ctx, ledger.Instrument{Token: token, Kind: kind, AccountID: o.AccountID}); err != nil {
			t.Fatalf("storetest: instrument: %v", err)
		}
	}
	if status != "" && status != ledger.StatusOpen {
		if _, err := db.SetAccountStatus(ctx, o.AccountID, status); err != nil {
			t.Fatalf("storetest: status: %v", err)
		}
	}
	a, err := db.GetAccount(ctx, o.AccountID)
	if err != nil {
		t.Fatalf("storetest: read account: %v", err)
	}
	return a
}

// AssertBalances fails t unless the account's balance, held and available
// equal the given decimals (compared as numbers, not strings).
func AssertBalances(t testing.TB, db *store.DB, accountID, balance, held, available string) {
	t.Helper()
	a, err := db.GetAccount(context.Background(), accountID)
	if err != nil {
		t.Fatalf("read account %s: %v", accountID, err)
	}
	for _, c := range []struct {
		name      string
		got, want decimal.Decimal
	}{
		{"balance", a.Balance, decimal.RequireFromString(balance)},
		{"held", a.Held, decimal.RequireFromString(held)},
		{"available", a.Available, decimal.RequireFromString(available)},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("account %s %s = %s, want %s", accountID, c.name, c.got, c.want)
		}
	}
}

// AssertInvariants fails t with every violation of I1..I6 found.
func AssertInvariants(t testing.TB, db *store.DB) {
	t.Helper()
	vs, err := db.CheckInvariants(context.Background())
	if err != nil {
		t.Fatalf("check invariants: %v", err)
	}
	for _, v := range vs {
		t.Errorf("invariant violated: %s", v)
	}
}

// USD returns a USD ledger.Money of the given decimal string.
func USD(v string) ledger.Money {
	return ledger.Money{Currency: "USD", Value: decimal.RequireFromString(v)}
}

// Hold authorizes payoutID for amount (USD) from the source instrument of
// owner, as a callback would (key "k-"+payoutID), and returns the
// decision; it fails t on an error, not on a denial.
func Hold(t testing.TB, db *store.DB, payoutID, owner, source, amount string) ledger.Decision {
	t.Helper()
	a, err := db.Authorize(context.Background(), holds.AuthorizeParams{Key: "k-" + payoutID, Fingerprint: fingerprint(payoutID),
		KeyFingerprint: "test", Now: time.Now(), PayoutID: payoutID, ExternalID: owner, FundingSource: source,
		Currency: "USD", Amount: decimal.RequireFromString(amount), FraudDeny: 0.9, FraudStepUp: 0.75,
		HoldReference: ledger.NewReference("hold_")})
	if err != nil {
		t.Fatalf("storetest: authorize %s: %v", payoutID, err)
	}
	return a.Decision
}

// Settle captures (capture true) or releases (reason cancelled) the hold
// of payoutID as a callback would, and returns the decision.
func Settle(t testing.TB, db *store.DB, payoutID, holdReference string, capture bool) ledger.Decision {
	t.Helper()
	ctx := context.Background()
	var a ledger.Answer
	var err error
	if capture {
		a, err = db.Capture(ctx, holds.CaptureParams{Key: "c-" + payoutID + "-" + holdReference, Fingerprint: fingerprint("c" + payoutID + holdReference),
			KeyFingerprint: "test", Now: time.Now(), PayoutID: payoutID, HoldReference: holdReference,
			CaptureReference: ledger.NewReference("cap_"), TransactionID: ledger.NewTransactionID()})
	} else {
		reason := "cancelled"
		a, err = db.Release(ctx, holds.ReleaseParams{Reason: &reason, Key: "r-" + payoutID + "-" + holdReference, Fingerprint: fingerprint("r" + payoutID + holdReference),
			KeyFingerprint: "test", Now: time.Now(), PayoutID: &payoutID, HoldReference: holdReference,
			ReleaseReference: ledger.NewReference("rel_")})
	}
	if err != nil {
		t.Fatalf("storetest: settle %s: %v", payoutID, err)
	}
	return a.Decision
}

func fingerprint(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}
