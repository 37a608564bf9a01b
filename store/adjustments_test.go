package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// Dual control's decision table (schema/functions/ledger_adjustment_decide.sql),
// row by row. Every row opens an account of its own on a database of its
// own, so that it runs alone (TestDualControlRowsRunAlone), and checks the
// money it leaves: the balance and the journal move only when a row says
// so.

var (
	maker   = ledger.Actor{ID: "tok_makermakermakermakermakerm", Name: "maker", Scopes: []string{ledger.ScopeAdjust}}
	checker = ledger.Actor{ID: "tok_checkercheckercheckerchec", Name: "checker", Scopes: []string{ledger.ScopeApprove}}
	dcNow   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

type dualControl struct {
	db      *store.DB
	account string
	over    *decimal.Decimal
}

// setupDualControl opens an account with 100.00 USD and dual control over
// 50.
func setupDualControl(t *testing.T) dualControl {
	t.Helper()
	db, _ := storetest.DB(t)
	a := storetest.Account(t, db, storetest.AccountOpts{Funds: "100.00"})
	over := decimal.RequireFromString("50")
	return dualControl{db: db, account: a.AccountID, over: &over}
}

func (d dualControl) request(t *testing.T, amount, key string, at time.Time) (ledger.AdjustmentOutcome, error) {
	t.Helper()
	return d.db.RequestAdjustment(context.Background(), ledger.AdjustmentParams{AccountID: d.account,
		Amount: decimal.RequireFromString(amount), Key: key, Memo: "m", ApprovalOver: d.over, TTL: 24 * time.Hour,
		Actor: maker, Now: at})
}

// pending requests an adjustment that waits for approval and returns its
// ID.
func (d dualControl) pending(t *testing.T, amount, key string) string {
	t.Helper()
	out, err := d.request(t, amount, key, dcNow)
	if err != nil || out.Pending == nil || out.Pending.Status != ledger.AdjustmentPending || out.Applied != nil {
		t.Fatalf("request %s: %+v %v", amount, out, err)
	}
	return out.Pending.AdjustmentID
}

func (d dualControl) decide(id string, approve bool, who ledger.Actor, at time.Time) (ledger.PendingAdjustment, error) {
	return d.db.DecideAdjustment(context.Background(), ledger.AdjustmentDecision{AdjustmentID: id, Approve: approve,
		Actor: who, Note: "looked at it", Now: at})
}

// balance asserts the account's balance and that the ledger is consistent.
func (d dualControl) balance(t *testing.T, want string) {
	t.Helper()
	storetest.AssertBalances(t, d.db, d.account, want, "0", want)
	storetest.AssertInvariants(t, d.db)
}

func TestDualControlTable(t *testing.T) {
	t.Parallel()
	dualControlRequests(t)
	dualControlKeys(t)
	dualControlDecisions(t)
	dualControlApprovals(t)
	dualControlRejections(t)
}

// dualControlRequests are rows R1, R5 and R6 of request.
func dualControlRequests(t *testing.T) {
	t.Run("R1UnknownAccount", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		d.account = "nobody"
		if _, err := d.request(t, "60", "k", dcNow); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("R5ClosedAccount", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		if _, err := d.db.SetAccountStatus(context.Background(), d.account, ledger.StatusClosed); err != nil {
			t.Fatal(err)
		}
		if _, err := d.request(t, "60", "k", dcNow); !errors.Is(err, ledger.ErrAccountClosed) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("R6OverTheThresholdWaits", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "-60", "k")
		p, err := d.db.GetPendingAdjustment(context.Background(), id, dcNow)
		if err != nil || p.MakerID != maker.ID || !p.ExpiresAt.Equal(dcNow.Add(24*time.Hour)) || p.Currency != "USD" || !p.Amount.Equal(decimal.NewFromInt(-60)) {
			t.Fatalf("%+v %v", p, err)
		}
		d.balance(t, "100")
	})
}

// dualControlKeys are rows R2 to R4 of request: keys and the threshold.
func dualControlKeys(t *testing.T) {
	t.Run("R2ReplayOfAPendingKey", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		out, err := d.request(t, "60.00", "k", dcNow.Add(time.Minute))
		if err != nil || out.Pending == nil || out.Pending.AdjustmentID != id || !out.Pending.Replayed {
			t.Fatalf("replay: %+v %v", out, err)
		}
		if _, err := d.decide(id, true, checker, dcNow.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		out, err = d.request(t, "60", "k", dcNow.Add(3*time.Minute))
		if err != nil || out.Pending == nil || out.Pending.Status != ledger.AdjustmentPosted || out.Applied != nil {
			t.Fatalf("replay after posting: %+v %v", out, err)
		}
		d.balance(t, "160")
	})
	t.Run("R3PendingKeyWithAnotherAmount", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		d.pending(t, "60", "k")
		if _, err := d.request(t, "70", "k", dcNow); !errors.Is(err, ledger.ErrIdempotencyMismatch) {
			t.Fatalf("err = %v", err)
		}
		if _, err := d.request(t, "10", "k", dcNow); !errors.Is(err, ledger.ErrIdempotencyMismatch) {
			t.Fatalf("a small amount under a pending key: %v", err)
		}
		d.balance(t, "100")
	})
	t.Run("R4AtTheThresholdAppliesAtOnce", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		for _, amount := range []string{"50", "-50.00"} {
			out, err := d.request(t, amount, "k"+amount, dcNow)
			if err != nil || out.Applied == nil || out.Pending != nil {
				t.Fatalf("%s: %+v %v", amount, out, err)
			}
		}
		d.balance(t, "100")
	})
	t.Run("R4DualControlOff", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		d.over = nil
		if out, err := d.request(t, "1000000", "k", dcNow); err != nil || out.Applied == nil {
			t.Fatalf("%+v %v", out, err)
		}
		d.balance(t, "1000100")
	})
	t.Run("R4KeyOfADirectAdjustment", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		first, err := d.request(t, "10", "k", dcNow)
		if err != nil || first.Applied == nil {
			t.Fatal(first, err)
		}
		if _, err := d.request(t, "60", "k", dcNow); !errors.Is(err, ledger.ErrIdempotencyMismatch) {
			t.Fatalf("over the threshold under a direct key: %v", err)
		}
		again, err := d.request(t, "10", "k", dcNow)
		if err != nil || again.Applied == nil || !again.Applied.Replayed || again.Applied.TransactionID != first.Applied.TransactionID {
			t.Fatalf("replay: %+v %v", again, err)
		}
		d.balance(t, "110")
	})
}

// dualControlDecisions are rows A1 to A4 of approve.
func dualControlDecisions(t *testing.T) {
	t.Run("A1ApproveUnknown", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		if _, err := d.decide("adj_aaaaaaaaaaaaaaaaaaaaaaaaaa", true, checker, dcNow); !errors.Is(err, ledger.ErrAdjustmentNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("A2ApproveTwice", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		first, err := d.decide(id, true, checker, dcNow.Add(time.Minute))
		if err != nil || first.Status != ledger.AdjustmentPosted || first.Replayed || first.TransactionID == "" || first.CheckerID != checker.ID {
			t.Fatalf("approve: %+v %v", first, err)
		}
		again, err := d.decide(id, true, checker, dcNow.Add(2*time.Minute))
		if err != nil || !again.Replayed || again.TransactionID != first.TransactionID {
			t.Fatalf("again: %+v %v", again, err)
		}
		d.balance(t, "160")
	})
	t.Run("A3ApproveRejected", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		if _, err := d.decide(id, false, checker, dcNow); err != nil {
			t.Fatal(err)
		}
		if _, err := d.decide(id, true, checker, dcNow); !errors.Is(err, ledger.ErrAdjustmentRejected) {
			t.Fatalf("err = %v", err)
		}
		d.balance(t, "100")
	})
	t.Run("A4ApproveExpired", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		if _, err := d.decide(id, true, checker, dcNow.Add(24*time.Hour)); !errors.Is(err, ledger.ErrAdjustmentExpired) {
			t.Fatalf("err = %v", err)
		}
		if p, _ := d.db.GetPendingAdjustment(context.Background(), id, dcNow.Add(24*time.Hour)); p.Status != ledger.AdjustmentExpired {
			t.Fatalf("status %s, want expired", p.Status)
		}
		d.balance(t, "100")
	})
}

// dualControlApprovals are rows A5 and A6 of approve.
func dualControlApprovals(t *testing.T) {
	t.Run("A5MakerApproves", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		if _, err := d.decide(id, true, maker, dcNow); !errors.Is(err, ledger.ErrMakerCannotApprove) {
			t.Fatalf("err = %v", err)
		}
		d.balance(t, "100")
	})
	t.Run("A6ApproveWouldOverdraw", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "-160", "k")
		if _, err := d.decide(id, true, checker, dcNow); !errors.Is(err, ledger.ErrInsufficientAvailable) {
			t.Fatalf("err = %v", err)
		}
		if p, _ := d.db.GetPendingAdjustment(context.Background(), id, dcNow); p.Status != ledger.AdjustmentPending {
			t.Fatalf("status %s, want still pending", p.Status)
		}
		d.balance(t, "100")
	})
	t.Run("A6ApprovePosts", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "-60", "k")
		p, err := d.decide(id, true, checker, dcNow)
		if err != nil || p.Status != ledger.AdjustmentPosted || p.Note != "looked at it" || p.DecidedAt == nil {
			t.Fatalf("%+v %v", p, err)
		}
		d.balance(t, "40")
	})
}

// dualControlRejections are the rows of reject.
func dualControlRejections(t *testing.T) {
	t.Run("J1RejectUnknown", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		if _, err := d.decide("adj_aaaaaaaaaaaaaaaaaaaaaaaaaa", false, checker, dcNow); !errors.Is(err, ledger.ErrAdjustmentNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("J2RejectPosted", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		if _, err := d.decide(id, true, checker, dcNow); err != nil {
			t.Fatal(err)
		}
		if _, err := d.decide(id, false, checker, dcNow); !errors.Is(err, ledger.ErrAdjustmentPosted) {
			t.Fatalf("err = %v", err)
		}
		d.balance(t, "160")
	})
	t.Run("J3RejectTwice", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		first, err := d.decide(id, false, checker, dcNow)
		if err != nil || first.Status != ledger.AdjustmentRejected || first.Replayed {
			t.Fatalf("%+v %v", first, err)
		}
		if again, err := d.decide(id, false, checker, dcNow); err != nil || !again.Replayed {
			t.Fatalf("%+v %v", again, err)
		}
		d.balance(t, "100")
	})
	t.Run("J4RejectExpired", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		if _, err := d.decide(id, false, checker, dcNow.Add(25*time.Hour)); !errors.Is(err, ledger.ErrAdjustmentExpired) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("J5MakerWithdraws", func(t *testing.T) {
		t.Parallel()
		d := setupDualControl(t)
		id := d.pending(t, "60", "k")
		p, err := d.decide(id, false, maker, dcNow)
		if err != nil || p.Status != ledger.AdjustmentRejected || p.CheckerID != maker.ID {
			t.Fatalf("%+v %v", p, err)
		}
		d.balance(t, "100")
	})
}

// TestDualControlRowsRunAlone: every row of TestDualControlTable passes
// alone.
func TestDualControlRowsRunAlone(t *testing.T) {
	t.Parallel()
	storetest.EachSubtestAlone(t, "TestDualControlTable")
}
