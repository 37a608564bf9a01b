package holds_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/ledgertest"
	"github.com/provider-ledger/adapter/internal/pgtest"
	"github.com/provider-ledger/adapter/ledger"
)

type bundle struct {
	pool   *pgxpool.Pool
	ledger *ledger.Store
	holds  *holds.Store
}

func setup(t testing.TB) (context.Context, bundle) {
	t.Helper()
	pool := pgtest.Pool(t)
	return context.Background(), bundle{pool: pool, ledger: ledger.NewStore(pool, nil), holds: holds.NewStore(pool, nil)}
}

func place(t testing.TB, b bundle, payout, owner, source, amount string) ledger.Decision {
	t.Helper()
	d, err := b.holds.Place(context.Background(), holds.PlaceRequest{PayoutID: payout, ExternalID: owner,
		FundingSource: source, Amount: ledgertest.USD(amount)})
	if err != nil {
		t.Fatalf("place %s: %v", payout, err)
	}
	return d
}

func TestPlace(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "p-open", Owner: "alice", Funds: "100", Source: "src-open"})
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "p-frozen", Owner: "alice", Funds: "100", Source: "src-frozen", Status: ledger.StatusFrozen})
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "p-closed", Owner: "alice", Source: "src-closed", Status: ledger.StatusClosed})
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "p-eur", Owner: "alice", Currency: "EUR", Funds: "100", Source: "src-eur"})
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "p-dst", Owner: "alice", Funds: "100", Dest: "dst-only"})

	first := place(t, b, "payout-1", "alice", "src-open", "30.00")
	if !first.Approved() || len(first.Reference) != len("hold_")+26 {
		t.Fatalf("place = %+v", first)
	}
	ledgertest.AssertBalances(t, b.ledger, "p-open", "100", "30", "70")

	for _, c := range []struct {
		name                                string
		payout, owner, source, amount, risk string
		outcome, reason, reference          string
	}{
		{"Row3SameHoldOtherKey", "payout-1", "alice", "src-open", "30", "", "approved", "", first.Reference},
		{"Row4OtherAmount", "payout-1", "alice", "src-open", "31", "", "denied", "payout_already_authorized", ""},
		{"Row4OtherSource", "payout-1", "alice", "src-eur", "30", "", "denied", "payout_already_authorized", ""},
		{"Row5UnknownSource", "payout-2", "alice", "src-nope", "1", holds.RiskFraudSuspected, "denied", "unknown_funding_source", ""},
		{"Row5DestinationTokenIsNoSource", "payout-2", "alice", "dst-only", "1", "", "denied", "unknown_funding_source", ""},
		{"Row6OtherOwner", "payout-2", "mallory", "src-open", "1", holds.RiskFraudSuspected, "denied", "funding_source_mismatch", ""},
		{"Row7Frozen", "payout-2", "alice", "src-frozen", "1", holds.RiskFraudSuspected, "denied", "account_unavailable", ""},
		{"Row7Closed", "payout-2", "alice", "src-closed", "1", "", "denied", "account_unavailable", ""},
		{"Row8Currency", "payout-2", "alice", "src-eur", "1", holds.RiskFraudSuspected, "denied", "currency_mismatch", ""},
		{"Row9Fraud", "payout-2", "alice", "src-open", "1000", holds.RiskFraudSuspected, "denied", "fraud_suspected", ""},
		{"Row10StepUp", "payout-2", "alice", "src-open", "1000", holds.RiskStepUpRequired, "denied", "step_up_required", ""},
		{"Row11Insufficient", "payout-2", "alice", "src-open", "70.01", "", "denied", "insufficient_funds", ""},
	} {
		d, err := b.holds.Place(ctx, holds.PlaceRequest{PayoutID: c.payout, ExternalID: c.owner, FundingSource: c.source,
			Amount: ledgertest.USD(c.amount), RiskReason: c.risk})
		if err != nil || d.Outcome != c.outcome || d.Reason != c.reason || d.Reference != c.reference {
			t.Errorf("%s: %+v, %v; want %s %s %q", c.name, d, err, c.outcome, c.reason, c.reference)
		}
	}
	ledgertest.AssertBalances(t, b.ledger, "p-open", "100", "30", "70")
	if d := place(t, b, "payout-2", "alice", "src-open", "70.00"); !d.Approved() {
		t.Fatalf("row 12 at exactly available: %+v", d)
	}
	ledgertest.AssertBalances(t, b.ledger, "p-open", "100", "100", "0")
	ledgertest.AssertInvariants(t, b.pool)
}

func TestCaptureAndRelease(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "c-1", Owner: "alice", Funds: "100", Source: "src-c1"})
	h1 := place(t, b, "cp-1", "alice", "src-c1", "30").Reference
	h2 := place(t, b, "cp-2", "alice", "src-c1", "20").Reference
	ledgertest.AssertBalances(t, b.ledger, "c-1", "100", "50", "50")

	capture := func(ref, payout string) ledger.Decision {
		t.Helper()
		d, err := b.holds.Capture(ctx, holds.CaptureRequest{HoldReference: ref, PayoutID: payout})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	release := func(ref, payout string) ledger.Decision {
		t.Helper()
		d, err := b.holds.Release(ctx, holds.ReleaseRequest{HoldReference: ref, PayoutID: payout, Reason: "cancelled"})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	if d := capture(h1, "cp-2"); d.Outcome != "failed" || d.Reason != "payout_mismatch" {
		t.Fatalf("capture row 3: %+v", d)
	}
	c1 := capture(h1, "cp-1")
	if !c1.Approved() || len(c1.Reference) != len("cap_")+26 {
		t.Fatalf("capture row 6: %+v", c1)
	}
	ledgertest.AssertBalances(t, b.ledger, "c-1", "70", "20", "50")
	if d := capture(h1, "cp-1"); !d.Approved() || d.Reference != c1.Reference {
		t.Fatalf("capture row 4 = %+v, want %s", d, c1.Reference)
	}
	if d := capture(h1, ""); !d.Approved() || d.Reference != c1.Reference {
		t.Fatalf("capture without payout = %+v", d)
	}
	if d := release(h1, "cp-1"); d.Outcome != "failed" || d.Reason != "hold_captured" {
		t.Fatalf("release row 5: %+v", d)
	}
	if d := release(h2, "cp-1"); d.Outcome != "failed" || d.Reason != "payout_mismatch" {
		t.Fatalf("release row 3: %+v", d)
	}
	r2 := release(h2, "cp-2")
	if !r2.Approved() || len(r2.Reference) != len("rel_")+26 {
		t.Fatalf("release row 6: %+v", r2)
	}
	ledgertest.AssertBalances(t, b.ledger, "c-1", "70", "0", "70")
	if d := release(h2, ""); !d.Approved() || d.Reference != r2.Reference {
		t.Fatalf("release row 4: %+v", d)
	}
	if d := capture(h2, "cp-2"); d.Outcome != "failed" || d.Reason != "hold_released" {
		t.Fatalf("capture row 5: %+v", d)
	}
	// Orphans: approved, with one stable reference per holdReference.
	o1, o2 := capture("hold_never", "cp-9"), capture("hold_never", "cp-9")
	if !o1.Approved() || !o1.Orphan || o1.Reference != o2.Reference {
		t.Fatalf("orphan capture: %+v then %+v", o1, o2)
	}
	if o := release("hold_never", ""); !o.Approved() || !o.Orphan || o.Reference == o1.Reference {
		t.Fatalf("orphan release: %+v", o)
	}
	ledgertest.AssertBalances(t, b.ledger, "c-1", "70", "0", "70")

	h, err := b.holds.Get(ctx, h2)
	if err != nil || h.Status != holds.StatusReleased || h.ReleaseReason != "cancelled" || h.ReleasedAt == nil {
		t.Fatalf("get = %+v, %v", h, err)
	}
	if _, err := b.holds.Get(ctx, "nope"); !errors.Is(err, ledger.ErrHoldNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	ledgertest.AssertInvariants(t, b.pool)
}

func TestList(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "l-1", Owner: "alice", Funds: "100", Source: "src-l1"})
	var refs []string
	for i := range 5 {
		refs = append(refs, place(t, b, fmt.Sprintf("lp-%d", i), "alice", "src-l1", "1").Reference)
	}
	if _, err := b.holds.Capture(ctx, holds.CaptureRequest{HoldReference: refs[0]}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := b.holds.List(ctx, holds.ListOptions{Status: holds.StatusHeld, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Holds {
			if h.Status != holds.StatusHeld || seen[h.HoldReference] {
				t.Fatalf("page %d: unexpected %+v", pages, h)
			}
			seen[h.HoldReference] = true
		}
		if !p.HasMore {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != 4 {
		t.Fatalf("listed %d held holds, want 4", len(seen))
	}
	p, err := b.holds.List(ctx, holds.ListOptions{PayoutID: "lp-0"})
	if err != nil || len(p.Holds) != 1 || p.Holds[0].Status != holds.StatusCaptured || p.HasMore {
		t.Fatalf("by payout = %+v, %v", p, err)
	}
	for _, o := range []holds.ListOptions{{Limit: 101}, {Limit: -1}, {Status: "gone"}, {Cursor: "!!"}} {
		var le *ledger.Error
		if _, err := b.holds.List(ctx, o); !errors.As(err, &le) || le.Code != ledger.CodeInvalid {
			t.Errorf("List(%+v) = %v, want invalid", o, err)
		}
	}
}

// TestDecimalExactness places 1,000 holds of 0.01, captures half and
// releases half; every balance must come out exact.
func TestDecimalExactness(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "x-1", Owner: "alice", Funds: "10.00", Source: "src-x1"})
	refs := make([]string, 1000)
	for i := range refs {
		d := place(t, b, "xp-"+strconv.Itoa(i), "alice", "src-x1", "0.01")
		if !d.Approved() {
			t.Fatalf("hold %d: %+v", i, d)
		}
		refs[i] = d.Reference
	}
	ledgertest.AssertBalances(t, b.ledger, "x-1", "10.00", "10.00", "0")
	if d := place(t, b, "xp-over", "alice", "src-x1", "0.01"); d.Reason != "insufficient_funds" {
		t.Fatalf("1,001st hold: %+v", d)
	}
	for i, ref := range refs {
		var err error
		if i%2 == 0 {
			_, err = b.holds.Capture(ctx, holds.CaptureRequest{HoldReference: ref})
		} else {
			_, err = b.holds.Release(ctx, holds.ReleaseRequest{HoldReference: ref})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ledgertest.AssertBalances(t, b.ledger, "x-1", "5.00", "0", "5.00")
	var settlement decimal.Decimal
	if err := b.pool.QueryRow(ctx, `SELECT sum(balance) FROM account_shards WHERE account_id = 'settlement:USD'`).Scan(&settlement); err != nil || !settlement.Equal(decimal.RequireFromString("5")) {
		t.Fatalf("settlement = %s, %v", settlement, err)
	}
	ledgertest.AssertInvariants(t, b.pool)
}

// TestConcurrentPlaceNeverOvercommits: 64 goroutines place holds of 1.00
// on one account funded for 10.00: exactly 10 are approved.
func TestConcurrentPlaceNeverOvercommits(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "cc-1", Owner: "alice", Funds: "10.00", Source: "src-cc1"})
	var approved, denied atomic.Int64
	var negative atomic.Bool
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 64 {
		wg.Go(func() {
			<-start
			d, err := b.holds.Place(ctx, holds.PlaceRequest{PayoutID: "ccp-" + strconv.Itoa(i), ExternalID: "alice",
				FundingSource: "src-cc1", Amount: ledgertest.USD("1.00")})
			switch {
			case err != nil:
				t.Error(err)
			case d.Approved():
				approved.Add(1)
			case d.Reason == "insufficient_funds":
				denied.Add(1)
			default:
				t.Errorf("unexpected %+v", d)
			}
			a, err := b.ledger.GetAccount(ctx, "cc-1")
			if err == nil && a.Available.IsNegative() {
				negative.Store(true)
			}
		})
	}
	close(start)
	wg.Wait()
	if approved.Load() != 10 || denied.Load() != 54 || negative.Load() {
		t.Fatalf("approved %d, denied %d, available went negative: %v", approved.Load(), denied.Load(), negative.Load())
	}
	ledgertest.AssertBalances(t, b.ledger, "cc-1", "10", "10", "0")
	ledgertest.AssertInvariants(t, b.pool)
}

// TestConcurrentSamePayout: many goroutines authorize one payout under
// different keys at once: one hold, every answer names it.
func TestConcurrentSamePayout(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "sp-1", Owner: "alice", Funds: "100", Source: "src-sp1"})
	refs := make([]string, 32)
	var wg sync.WaitGroup
	for i := range refs {
		wg.Go(func() {
			d, err := b.holds.Place(ctx, holds.PlaceRequest{PayoutID: "sp-payout", ExternalID: "alice",
				FundingSource: "src-sp1", Amount: ledgertest.USD("5")})
			if err != nil || !d.Approved() {
				t.Errorf("place = %+v, %v", d, err)
			}
			refs[i] = d.Reference
		})
	}
	wg.Wait()
	for _, r := range refs {
		if r != refs[0] {
			t.Fatalf("two hold references for one payout: %s and %s", refs[0], r)
		}
	}
	ledgertest.AssertBalances(t, b.ledger, "sp-1", "100", "5", "95")
}

// TestConcurrentCaptureAndRelease: capture and release of one hold race;
// exactly one wins and the other sees the final state.
func TestConcurrentCaptureAndRelease(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "cr-1", Owner: "alice", Funds: "1000", Source: "src-cr1"})
	for round := range 20 {
		ref := place(t, b, fmt.Sprintf("crp-%d", round), "alice", "src-cr1", "1").Reference
		var cap, rel ledger.Decision
		var capErr, relErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; cap, capErr = b.holds.Capture(ctx, holds.CaptureRequest{HoldReference: ref}) })
		wg.Go(func() { <-start; rel, relErr = b.holds.Release(ctx, holds.ReleaseRequest{HoldReference: ref}) })
		close(start)
		wg.Wait()
		if capErr != nil || relErr != nil {
			t.Fatal(capErr, relErr)
		}
		h, _ := b.holds.Get(ctx, ref)
		switch {
		case cap.Approved() && rel.Outcome == "failed" && rel.Reason == "hold_captured" && h.Status == holds.StatusCaptured:
		case rel.Approved() && cap.Outcome == "failed" && cap.Reason == "hold_released" && h.Status == holds.StatusReleased:
		default:
			t.Fatalf("round %d: capture %+v, release %+v, hold %s", round, cap, rel, h.Status)
		}
	}
	ledgertest.AssertInvariants(t, b.pool)
}

// TestRandomizedWorkload runs many goroutines doing random places,
// captures, releases, credits and adjustments over many accounts, then
// checks I1..I6. HOLDS_SEED reproduces a run; the seed is printed on failure.
func TestRandomizedWorkload(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HOLDS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	defer func() {
		if t.Failed() {
			t.Logf("reproduce with HOLDS_SEED=%d", seed)
		}
	}()
	const accounts, workers, ops = 8, 16, 60
	for i := range accounts {
		ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: fmt.Sprintf("w-%d", i), Owner: fmt.Sprintf("o-%d", i),
			Funds: "50", Source: fmt.Sprintf("ws-%d", i), Dest: fmt.Sprintf("wd-%d", i)})
	}
	var mu sync.Mutex
	var placed []string
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for op := range ops {
				i := rng.IntN(accounts)
				amount := decimal.New(rng.Int64N(2000)+1, -2).String()
				var err error
				switch k := rng.IntN(10); {
				case k < 4:
					var d ledger.Decision
					d, err = b.holds.Place(ctx, holds.PlaceRequest{PayoutID: fmt.Sprintf("wp-%d-%d", w, op), ExternalID: fmt.Sprintf("o-%d", i),
						FundingSource: fmt.Sprintf("ws-%d", i), Amount: ledgertest.USD(amount)})
					if d.Approved() {
						mu.Lock()
						placed = append(placed, d.Reference)
						mu.Unlock()
					}
				case k < 7:
					mu.Lock()
					var ref string
					if len(placed) > 0 {
						ref = placed[rng.IntN(len(placed))]
					}
					mu.Unlock()
					if k < 6 {
						_, err = b.holds.Capture(ctx, holds.CaptureRequest{HoldReference: ref})
					} else {
						_, err = b.holds.Release(ctx, holds.ReleaseRequest{HoldReference: ref})
					}
				case k < 9:
					err = ledger.InTx(ctx, b.pool, func(tx pgx.Tx) error {
						_, err := ledger.Credit(ctx, tx, ledger.CreditRequest{RequestID: fmt.Sprintf("wr-%d", rng.IntN(40)),
							Destination: fmt.Sprintf("wd-%d", i), RequesterExternalID: fmt.Sprintf("o-%d", i),
							Amount: ledgertest.USD(amount), Now: time.Now()})
						return err
					})
				default:
					_, err = b.ledger.Adjust(ctx, fmt.Sprintf("w-%d", i), decimal.RequireFromString("-"+amount), fmt.Sprintf("wa-%d-%d", w, op), "")
					if errors.Is(err, ledger.ErrInsufficientAvailable) {
						err = nil
					}
				}
				if err != nil {
					t.Errorf("worker %d op %d: %v", w, op, err)
					return
				}
			}
		})
	}
	wg.Wait()
	ledgertest.AssertInvariants(t, b.pool)
}

// TestSamePayoutOtherKeyWhileFirstUncommitted: a second authorize of a
// payout arriving while the first is still uncommitted waits for it and
// answers its hold (row 3); it never decides on funds the first has held.
func TestSamePayoutOtherKeyWhileFirstUncommitted(t *testing.T) {
	t.Parallel()
	ctx, b := setup(t)
	ledgertest.Account(t, b.ledger, ledgertest.AccountOpts{AccountID: "race-1", Owner: "alice", Funds: "100", Source: "src-race"})
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := holds.Place(ctx, tx, holds.PlaceRequest{PayoutID: "race-p", ExternalID: "alice", FundingSource: "src-race",
		Amount: ledgertest.USD("60"), Now: time.Now()})
	if err != nil || !first.Approved() {
		t.Fatal(first, err)
	}
	second := make(chan ledger.Decision, 1)
	go func() {
		d, err := b.holds.Place(ctx, holds.PlaceRequest{PayoutID: "race-p", ExternalID: "alice", FundingSource: "src-race", Amount: ledgertest.USD("60")})
		if err != nil {
			t.Error(err)
		}
		second <- d
	}()
	time.Sleep(300 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if d := <-second; !d.Approved() || d.Reference != first.Reference {
		t.Fatalf("second authorize of the payout = %+v, want approved %s", d, first.Reference)
	}
	ledgertest.AssertBalances(t, b.ledger, "race-1", "100", "60", "40")
}
