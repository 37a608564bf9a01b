package adminapi_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// ledgerd is the real admin API on a fresh database, mounted under a path
// prefix (as behind a reverse proxy), with a token.
type ledgerd struct {
	client *adminapi.Client
	url    string // the base URL, prefix included
	db     *store.DB
}

const adminToken = "t0ken"

func setupServer(t *testing.T) ledgerd {
	t.Helper()
	db, _ := storetest.DB(t)
	kek := make([]byte, keyring.KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	secrets, err := keyring.NewVault(db, kek, keyring.VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reconciliation.New(reconciliation.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerd{db: db}
	api := admin.New(admin.Config{DB: db, Secrets: secrets, Reconciler: rec, Token: adminToken})
	mux := http.NewServeMux()
	mux.Handle(baseURLPath+"/", http.StripPrefix(baseURLPath, admintest.Handler(t, api)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	l.url = srv.URL + baseURLPath
	if l.client, err = adminapi.NewClient(l.url, adminapi.WithToken(adminToken)); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestAgainstLedgerd runs every method against the admin handlers: the
// shared wire types must carry what the server writes and reads.
func TestAgainstLedgerd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("Accounts", func(t *testing.T) { againstLedgerdAccounts(t, ctx) })

	t.Run("Instruments", func(t *testing.T) {
		t.Parallel()
		l := setupServer(t)
		storetest.Account(t, l.db, storetest.AccountOpts{AccountID: "ins-1"})
		storetest.Account(t, l.db, storetest.AccountOpts{AccountID: "ins-2"})
		in := &adminapi.Instrument{Token: "card-1", Kind: adminapi.KindSource, AccountID: "ins-1"}
		if got, resp, err := l.client.Instruments.Add(ctx, in); err != nil || resp.StatusCode != 201 || *got != *in {
			t.Fatalf("add %+v %v", got, err)
		}
		if _, resp, err := l.client.Instruments.Add(ctx, in); err != nil || resp.StatusCode != 200 {
			t.Fatalf("same mapping: %v", err)
		}
		if _, _, err := l.client.Instruments.Add(ctx, &adminapi.Instrument{Token: "card-1", Kind: adminapi.KindSource, AccountID: "ins-2"}); !errors.Is(err, adminapi.ErrInstrumentConflict) {
			t.Fatalf("other mapping: %v", err)
		}
	})

	t.Run("Holds", func(t *testing.T) { againstLedgerdHolds(t, ctx) })

	t.Run("SigningSecrets", func(t *testing.T) { againstLedgerdSigningSecrets(t, ctx) })

	t.Run("Reconciliation", func(t *testing.T) {
		t.Parallel()
		l := setupServer(t)
		if d := storetest.Settle(t, l.db, "p-never", "hold_never_issued", true); !d.Approved() {
			t.Fatal(d)
		}
		run, resp, err := l.client.Reconciliation.Run(ctx, &adminapi.ReconciliationRunRequest{Fix: true})
		if err != nil || resp.StatusCode != 201 || run.RunID == "" || run.FinishedOn.Before(run.StartedOn) || len(run.Findings) != 1 {
			t.Fatalf("run %+v %v", run, err)
		}
		if f := run.Findings[0]; f.Kind != "orphan_capture" || f.Subject != "hold_never_issued" || f.Fixed || run.Status != f.Severity {
			t.Fatalf("finding %+v in a run of status %s", f, run.Status)
		}
	})

	t.Run("TokenAndRoutes", func(t *testing.T) {
		t.Parallel()
		l := setupServer(t)
		for _, opts := range [][]adminapi.Option{nil, {adminapi.WithToken("wrong")}} {
			c, err := adminapi.NewClient(l.url, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.SigningSecrets.List(ctx)
			var e *adminapi.Error
			if !errors.Is(err, adminapi.ErrUnauthorized) || !errors.As(err, &e) || e.Slug() != "unauthorized" {
				t.Fatalf("without the token: %v", err)
			}
		}
		// A base URL without the prefix reaches no route of the admin API.
		c, err := adminapi.NewClient(l.url[:len(l.url)-len(baseURLPath)], adminapi.WithToken(adminToken))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Accounts.Get(ctx, "a"); !errors.Is(err, adminapi.ErrNotFound) {
			t.Fatalf("outside the prefix: %v", err)
		}
	})
}

// againstLedgerdHolds: holds are read and listed through the client against
// the real admin API.
func againstLedgerdHolds(t *testing.T, ctx context.Context) {
	t.Parallel()
	l := setupServer(t)
	storetest.Account(t, l.db, storetest.AccountOpts{AccountID: "h-1", Owner: "hank", Funds: "10", Source: "src-h-1"})
	var refs []string
	for _, p := range []string{"p-1", "p-2", "p-3"} {
		d := storetest.Hold(t, l.db, p, "hank", "src-h-1", "1.5")
		if !d.Approved() {
			t.Fatal(d)
		}
		refs = append(refs, d.Reference)
	}
	if d := storetest.Settle(t, l.db, "p-1", refs[0], true); !d.Approved() {
		t.Fatal(d)
	}
	h, _, err := l.client.Holds.Get(ctx, refs[0])
	if err != nil || h.Status != adminapi.HoldCaptured || h.Amount != "1.50" || h.CaptureReference == "" || h.CapturedAt == nil || h.PlacedAt.IsZero() {
		t.Fatalf("get %+v %v", h, err)
	}
	if _, _, err := l.client.Holds.Get(ctx, "hold_nope"); !errors.Is(err, adminapi.ErrHoldNotFound) {
		t.Fatalf("unknown hold: %v", err)
	}
	page, resp, err := l.client.Holds.List(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 1})
	if err != nil || len(page.Holds) != 1 || !resp.HasMore || resp.NextCursor == "" {
		t.Fatalf("page %+v %+v %v", page, resp, err)
	}
	seen := map[string]bool{}
	for h, err := range l.client.Holds.ListIter(ctx, &adminapi.HoldListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[h.HoldReference] = true
	}
	if len(seen) != 3 {
		t.Fatalf("iterated %v, want the 3 holds", seen)
	}
	if _, _, err := l.client.Holds.List(ctx, &adminapi.HoldListOptions{Limit: 500}); !errors.Is(err, adminapi.ErrInvalidRequest) {
		t.Fatalf("limit 500: %v", err)
	}
}

// againstLedgerdSigningSecrets: signing secrets are added, generated,
// listed and retired through the client against the real admin API.
func againstLedgerdSigningSecrets(t *testing.T, ctx context.Context) {
	t.Parallel()
	l := setupServer(t)
	gen, resp, err := l.client.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Generate: true})
	if err != nil || resp.StatusCode != 201 || gen.Secret == "" || gen.Fingerprint == "" {
		t.Fatalf("generate %+v %v", gen, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	added, _, err := l.client.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Secret: base64.StdEncoding.EncodeToString(raw)})
	if err != nil || added.Secret != "" {
		t.Fatalf("add %+v %v", added, err)
	}
	if _, err := l.client.SigningSecrets.Retire(ctx, added.SecretID); err != nil {
		t.Fatal(err)
	}
	list, _, err := l.client.SigningSecrets.List(ctx)
	if err != nil || len(list.SigningSecrets) != 2 {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, s := range list.SigningSecrets {
		if (s.SecretID == added.SecretID) != (s.RetiredOn != nil) || s.AddedOn.IsZero() {
			t.Fatalf("secret %+v", s)
		}
	}
	if _, err := l.client.SigningSecrets.Retire(ctx, "ks_nope"); !errors.Is(err, adminapi.ErrSecretNotFound) {
		t.Fatalf("unknown secret: %v", err)
	}
	kekFP := list.SigningSecrets[0].KEKFingerprint
	if len(kekFP) != 16 {
		t.Fatalf("kekFingerprint %q", kekFP)
	}
	rk, _, err := l.client.SigningSecrets.Rekey(ctx, nil)
	if err != nil || rk.KEKFingerprint != kekFP || rk.PreviousKEKFingerprint != nil || rk.Rekeyed != 0 || rk.Current != 1 ||
		rk.Remaining != 0 || rk.RemainingSecrets == nil {
		t.Fatalf("rekey %+v %v", rk, err)
	}
	if _, _, err := l.client.SigningSecrets.Rekey(ctx, &adminapi.KeyringRekeyRequest{KEKFingerprint: "0123456789abcdef"}); !errors.Is(err, adminapi.ErrKEKMismatch) ||
		!errors.Is(err, adminapi.ErrConflict) {
		t.Fatalf("rekey to another KEK: %v, want ErrKEKMismatch", err)
	}
}

// againstLedgerdAccounts: through the client against the real admin API,
// an account is created once, adjusted (a replay is the same transaction;
// another amount under the key, an overdraw and no amount are refused),
// frozen and read; an unknown one is not found.
func againstLedgerdAccounts(t *testing.T, ctx context.Context) {
	t.Parallel()
	l := setupServer(t)
	a, resp, err := l.client.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: "acc-1", OwnerExternalID: "alice", Currency: "EUR"})
	if err != nil || resp.StatusCode != 201 || a.Status != adminapi.AccountOpen || a.Balance != "0.00" {
		t.Fatalf("create %+v %v", a, err)
	}
	_, _, err = l.client.Accounts.Create(ctx, &adminapi.AccountCreateRequest{AccountID: "acc-1", OwnerExternalID: "alice", Currency: "EUR"})
	if !errors.Is(err, adminapi.ErrAccountExists) {
		t.Fatalf("second create: %v", err)
	}
	amt := adminapi.Amount("100.75")
	adj, _, err := l.client.Accounts.Adjust(ctx, "acc-1", &adminapi.AdjustmentRequest{Amount: &amt, IdempotencyKey: "dep-1", Memo: "opening"})
	if err != nil || adj.Balance != "100.75" || adj.Available != "100.75" || adj.TransactionID == "" {
		t.Fatalf("adjust %+v %v", adj, err)
	}
	replay, _, err := l.client.Accounts.Adjust(ctx, "acc-1", &adminapi.AdjustmentRequest{Amount: &amt, IdempotencyKey: "dep-1", Memo: "opening"})
	if err != nil || replay.TransactionID != adj.TransactionID {
		t.Fatalf("replay %+v %v", replay, err)
	}
	other := adminapi.NewAmount(decimal.RequireFromString("1"))
	if _, _, err := l.client.Accounts.Adjust(ctx, "acc-1", &adminapi.AdjustmentRequest{Amount: &other, IdempotencyKey: "dep-1"}); !errors.Is(err, adminapi.ErrIdempotencyMismatch) {
		t.Fatalf("other amount under the key: %v", err)
	}
	over := adminapi.Amount("-1000")
	if _, _, err := l.client.Accounts.Adjust(ctx, "acc-1", &adminapi.AdjustmentRequest{Amount: &over, IdempotencyKey: "over"}); !errors.Is(err, adminapi.ErrInsufficientAvailable) {
		t.Fatalf("overdraw: %v", err)
	}
	_, _, err = l.client.Accounts.Adjust(ctx, "acc-1", &adminapi.AdjustmentRequest{IdempotencyKey: "no-amount"})
	var e *adminapi.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Slug() != "invalid-request" {
		t.Fatalf("no amount: %v", err)
	}
	if _, ok := e.FieldError("/amount"); !ok {
		t.Fatalf("no field error at /amount: %+v", e)
	}
	if a, _, err := l.client.Accounts.Update(ctx, "acc-1", &adminapi.AccountUpdateRequest{Status: adminapi.Ptr(adminapi.AccountFrozen)}); err != nil || a.Status != "frozen" || a.Available != "100.75" {
		t.Fatalf("freeze %+v %v", a, err)
	}
	if a, _, err := l.client.Accounts.Get(ctx, "acc-1"); err != nil || a.OwnerExternalID != "alice" || a.Currency != "EUR" || a.Status != "frozen" {
		t.Fatalf("get %+v %v", a, err)
	}
	if _, _, err := l.client.Accounts.Get(ctx, "nobody"); !errors.Is(err, adminapi.ErrAccountNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
}
