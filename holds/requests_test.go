package holds_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// fingerprinter is a request with a fingerprint.
type fingerprinter interface{ Fingerprint() []byte }

// TestFingerprint: two requests are the same request (a replay with the
// same key answers the stored answer) exactly when their fingerprints are
// equal, so what a fingerprint includes and leaves out decides 422 or a
// replay.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	usd := func(v string) ledger.Money { return ledger.Money{Currency: "USD", Value: decimal.RequireFromString(v)} }
	auth := holds.AuthorizeRequest{PayoutID: "po-1", ProviderID: "prov", ExternalID: "alice", FundingSource: "src",
		Amount: usd("30.00"), FraudScore: 0.1, IdempotencyKey: "k-1", CallerSubject: "svc", RequestID: "req-1"}
	authWith := func(f func(*holds.AuthorizeRequest)) holds.AuthorizeRequest { r := auth; f(&r); return r }
	capt := holds.CaptureRequest{PayoutID: "po-1", ProviderID: "prov", HoldReference: "hold_1", IdempotencyKey: "k-1"}
	captWith := func(f func(*holds.CaptureRequest)) holds.CaptureRequest { r := capt; f(&r); return r }
	rel := holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k-1", PayoutID: "po-1", ProviderID: "prov", Reason: "cancelled"}
	relWith := func(f func(*holds.ReleaseRequest)) holds.ReleaseRequest { r := rel; f(&r); return r }
	for _, c := range []struct {
		name string
		a, b fingerprinter
		same bool
	}{
		{"AuthorizeItself", auth, auth, true},
		{"AuthorizeNegativeZeroScoreIsZero", authWith(func(r *holds.AuthorizeRequest) { r.FraudScore = 0 }),
			authWith(func(r *holds.AuthorizeRequest) { r.FraudScore = math.Copysign(0, -1) }), true},
		{"AuthorizeTrailingZerosOfTheAmount", auth, authWith(func(r *holds.AuthorizeRequest) { r.Amount = usd("30") }), true},
		{"AuthorizeAuditClaimsLeftOut", auth, authWith(func(r *holds.AuthorizeRequest) { r.CallerSubject, r.RequestID = "other", "req-2" }), true},
		{"AuthorizeOtherAmount", auth, authWith(func(r *holds.AuthorizeRequest) { r.Amount = usd("30.01") }), false},
		{"AuthorizeOtherCurrency", auth, authWith(func(r *holds.AuthorizeRequest) { r.Amount.Currency = "EUR" }), false},
		{"AuthorizeOtherScore", auth, authWith(func(r *holds.AuthorizeRequest) { r.FraudScore = 0.10000001 }), false},
		{"AuthorizeOtherSource", auth, authWith(func(r *holds.AuthorizeRequest) { r.FundingSource = "src-2" }), false},
		{"AuthorizeOtherExternalID", auth, authWith(func(r *holds.AuthorizeRequest) { r.ExternalID = "bob" }), false},
		{"AuthorizeOtherProvider", auth, authWith(func(r *holds.AuthorizeRequest) { r.ProviderID = "prov-2" }), false},
		{"AuthorizeOtherKey", auth, authWith(func(r *holds.AuthorizeRequest) { r.IdempotencyKey = "k-2" }), false},
		{"AuthorizePartsDoNotRunTogether", authWith(func(r *holds.AuthorizeRequest) { r.PayoutID, r.ProviderID = "po-1p", "rov" }), auth, false},
		{"CaptureItself", capt, capt, true},
		{"CaptureOtherHold", capt, captWith(func(r *holds.CaptureRequest) { r.HoldReference = "hold_2" }), false},
		{"CaptureOtherPayout", capt, captWith(func(r *holds.CaptureRequest) { r.PayoutID = "po-2" }), false},
		{"CaptureOtherProvider", capt, captWith(func(r *holds.CaptureRequest) { r.ProviderID = "prov-2" }), false},
		{"CaptureIsNotAuthorize", capt, holds.AuthorizeRequest{PayoutID: "po-1", ProviderID: "prov", ExternalID: "hold_1", IdempotencyKey: "k-1"}, false},
		{"ReleaseItself", rel, rel, true},
		{"ReleaseWithoutProviderID", rel, relWith(func(r *holds.ReleaseRequest) { r.ProviderID = "" }), true},
		{"ReleaseOtherReason", rel, relWith(func(r *holds.ReleaseRequest) { r.Reason = "expired" }), false},
		{"ReleaseWithoutPayoutID", rel, relWith(func(r *holds.ReleaseRequest) { r.PayoutID = "" }), false},
		{"ReleaseWithoutReason", rel, relWith(func(r *holds.ReleaseRequest) { r.Reason = "" }), false},
		{"ReleaseOtherHold", rel, relWith(func(r *holds.ReleaseRequest) { r.HoldReference = "hold_2" }), false},
		{"ReleaseOtherKey", rel, relWith(func(r *holds.ReleaseRequest) { r.IdempotencyKey = "k-2" }), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fa, fb := c.a.Fingerprint(), c.b.Fingerprint()
			if len(fa) != 32 {
				t.Fatalf("fingerprint of %d bytes, want a SHA-256", len(fa))
			}
			if bytes.Equal(fa, fb) != c.same {
				t.Fatalf("same fingerprint = %v, want %v:\n%+v\n%+v", !c.same, c.same, c.a, c.b)
			}
		})
	}
}

// TestParamsCarryTheFingerprint: a decision's parameters carry the
// fingerprint of the request they came from.
func TestParamsCarryTheFingerprint(t *testing.T) {
	t.Parallel()
	now := time.Now()
	a := holds.AuthorizeRequest{PayoutID: "po-1", IdempotencyKey: "k-1", Amount: ledger.Money{Currency: "USD", Value: decimal.New(3, 0)}}
	c := holds.CaptureRequest{PayoutID: "po-1", HoldReference: "hold_1", IdempotencyKey: "k-1"}
	r := holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k-1"}
	ap, cp, rp := a.Params("kf", now, 0.9, 0.75), c.Params("kf", now), r.Params("kf", now)
	if !bytes.Equal(ap.Fingerprint, a.Fingerprint()) || !bytes.Equal(cp.Fingerprint, c.Fingerprint()) || !bytes.Equal(rp.Fingerprint, r.Fingerprint()) {
		t.Fatal("a decision's parameters carry another fingerprint than their request's")
	}
	if rp.PayoutID != nil || rp.Reason != nil {
		t.Fatalf("release without payoutID and reason: params %+v, want both nil (not given)", rp)
	}
	if !strings.HasPrefix(ap.HoldReference, "hold_") || !strings.HasPrefix(cp.CaptureReference, "cap_") || !strings.HasPrefix(rp.ReleaseReference, "rel_") {
		t.Fatalf("references %q %q %q", ap.HoldReference, cp.CaptureReference, rp.ReleaseReference)
	}
}
