package holds_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestCaptureTable covers every row of contract §2.4 on heldFixture's
// holds: only a capture of a held hold moves money (out of c-1 into
// settlement:USD); every other row answers and moves nothing.
func TestCaptureTable(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		first := capture(t, b, "c-k", "cp-1", h1)
		wantReplay(t, capture(t, b, "c-k", "cp-1", h1), first)
		if other := capture(t, b, "c-k", "cp-1", "hold_other"); other.State != ledger.StateMismatch {
			t.Fatalf("same key, other claims: %+v", other)
		}
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
	})
	t.Run("Row2NeverIssuedIsAnOrphanWithOneReference", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		heldFixture(t, b)
		o1 := capture(t, b, "c-k1", "cp-9", "hold_never")
		o2 := capture(t, b, "c-k2", "cp-9", "hold_never")
		want(t, o1, ledger.StateNew, ledger.OutcomeApproved, "")
		if o2.Reference != o1.Reference {
			t.Fatalf("orphan capture answered %s then %s", o1.Reference, o2.Reference)
		}
		if n := count(t, b, `SELECT count(*) FROM orphans WHERE kind = 'capture' AND hold_reference = 'hold_never'`); n != 1 {
			t.Fatalf("%d orphans recorded, want 1", n)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row3OtherPayout", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		want(t, capture(t, b, "c-k", "cp-2", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonPayoutMismatch)
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row4CapturedAnswersTheOriginalReference", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		first := capture(t, b, "c-k1", "cp-1", h1)
		second := capture(t, b, "c-k2", "cp-1", h1)
		want(t, second, ledger.StateNew, ledger.OutcomeApproved, "")
		if second.Reference != first.Reference {
			t.Fatalf("second capture %s, want %s", second.Reference, first.Reference)
		}
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
		if s := settlement(t, b); !s.Equal(decimal.RequireFromString("30")) {
			t.Fatalf("settlement %s after one capture answered twice, want 30", s)
		}
	})
	t.Run("Row5Released", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		release(t, b, "r-k", "cp-1", h1)
		want(t, capture(t, b, "c-k", "cp-1", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonHoldReleased)
		storetest.AssertBalances(t, b.db, "c-1", "100", "20", "80")
	})
	t.Run("Row6HeldIsCaptured", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		h1, _ := heldFixture(t, b)
		c := capture(t, b, "c-k", "cp-1", h1)
		want(t, c, ledger.StateNew, ledger.OutcomeApproved, "")
		wantReference(t, c.Reference, "cap_")
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
		if s := settlement(t, b); !s.Equal(decimal.RequireFromString("30")) {
			t.Fatalf("settlement %s, want 30", s)
		}
		h, err := b.db.GetHold(ctx, h1)
		if err != nil || h.Status != holds.StatusCaptured || h.CaptureReference != c.Reference || h.CapturedAt == nil {
			t.Fatalf("hold %+v, %v", h, err)
		}
		storetest.AssertInvariants(t, b.db)
	})
}

// TestReleaseIdempotency covers rows 1 and 2 of contract §2.5: a key's
// answer is replayed within its scope (the payoutID, or the holdReference
// when none is given), and a hold never issued is an orphan answered with
// one reference.
func TestReleaseIdempotency(t *testing.T) {
	t.Parallel()
	t.Run("Row1SameKeyReplaysStoredAnswer", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		first := release(t, b, "r-k", "cp-2", h2)
		wantReplay(t, release(t, b, "r-k", "cp-2", h2), first)
		if other := release(t, b, "r-k", "cp-2", "hold_other"); other.State != ledger.StateMismatch {
			t.Fatalf("same key, other claims: %+v", other)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "30", "70")
	})
	t.Run("Row1ScopeIsTheHoldReferenceWithoutPayout", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, h2 := heldFixture(t, b)
		// The same key on two holds, without payoutID: two scopes.
		want(t, release(t, b, "r-k", "", h1), ledger.StateNew, ledger.OutcomeApproved, "")
		want(t, release(t, b, "r-k", "", h2), ledger.StateNew, ledger.OutcomeApproved, "")
		if n := count(t, b, `SELECT count(DISTINCT scope) FROM callback_release WHERE idempotency_key = 'r-k'`); n != 2 {
			t.Fatalf("%d scopes, want 2", n)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "0", "100")
	})
	t.Run("Row2NeverIssuedIsAnOrphan", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		heldFixture(t, b)
		o1 := release(t, b, "r-k1", "", "hold_never")
		o2 := release(t, b, "r-k2", "", "hold_never")
		want(t, o1, ledger.StateNew, ledger.OutcomeApproved, "")
		wantReference(t, o1.Reference, "rel_")
		if o2.Reference != o1.Reference {
			t.Fatalf("orphan release answered %s then %s", o1.Reference, o2.Reference)
		}
		if n := count(t, b, `SELECT count(*) FROM orphans WHERE kind = 'release' AND hold_reference = 'hold_never'`); n != 1 {
			t.Fatalf("%d orphans recorded, want 1", n)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
}

// TestReleaseTable covers rows 3 to 6 of contract §2.5 on heldFixture's
// holds: only a release of a held hold frees money (held falls, available
// rises, the balance and settlement:USD do not move).
func TestReleaseTable(t *testing.T) {
	t.Parallel()
	t.Run("Row3OtherPayout", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		want(t, release(t, b, "r-k", "cp-1", h2), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonPayoutMismatch)
		storetest.AssertBalances(t, b.db, "c-1", "100", "50", "50")
	})
	t.Run("Row4ReleasedAnswersTheOriginalReference", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		_, h2 := heldFixture(t, b)
		first := release(t, b, "r-k1", "cp-2", h2)
		second := release(t, b, "r-k2", "", h2)
		want(t, second, ledger.StateNew, ledger.OutcomeApproved, "")
		if second.Reference != first.Reference {
			t.Fatalf("second release %s, want %s", second.Reference, first.Reference)
		}
		storetest.AssertBalances(t, b.db, "c-1", "100", "30", "70")
	})
	t.Run("Row5Captured", func(t *testing.T) {
		t.Parallel()
		_, b := setup(t)
		h1, _ := heldFixture(t, b)
		capture(t, b, "c-k", "cp-1", h1)
		want(t, release(t, b, "r-k", "cp-1", h1), ledger.StateNew, ledger.OutcomeFailed, holds.ReasonHoldCaptured)
		storetest.AssertBalances(t, b.db, "c-1", "70", "20", "50")
	})
	t.Run("Row6HeldIsReleased", func(t *testing.T) {
		t.Parallel()
		ctx, b := setup(t)
		_, h2 := heldFixture(t, b)
		r := release(t, b, "r-k", "cp-2", h2)
		want(t, r, ledger.StateNew, ledger.OutcomeApproved, "")
		wantReference(t, r.Reference, "rel_")
		storetest.AssertBalances(t, b.db, "c-1", "100", "30", "70")
		h, err := b.db.GetHold(ctx, h2)
		if err != nil || h.Status != holds.StatusReleased || h.ReleaseReason != "cancelled" || h.ReleasedAt == nil || h.ReleaseReference != r.Reference {
			t.Fatalf("hold %+v, %v", h, err)
		}
		if s := settlement(t, b); !s.IsZero() {
			t.Fatalf("a release moved settlement to %s", s)
		}
		storetest.AssertInvariants(t, b.db)
	})
}
