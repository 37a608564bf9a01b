package claims_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// TestServiceRoundTrip: the service object of a typed request, built into
// request claims, decodes to that request: the same fingerprint and the
// same audit claims.
func TestServiceRoundTrip(t *testing.T) {
	t.Parallel()
	money := func(cur, v string) ledger.Money {
		return ledger.Money{Currency: cur, Value: decimal.RequireFromString(v)}
	}
	for _, c := range []struct {
		name     string
		endpoint string
		service  any
		check    func(t *testing.T, r claims.Request)
	}{
		{"Authorize", claims.Authorize, claims.AuthorizeService(holds.AuthorizeRequest{PayoutID: "po-<1>&", ProviderID: "bank-1",
			ExternalID: "ålice", FundingSource: "src", Amount: money("USD", "30.5"), FraudScore: 0.75, IdempotencyKey: "k-1",
			CallerSubject: "svc", RequestID: "rq-1"}), func(t *testing.T, r claims.Request) {
			want := holds.AuthorizeRequest{PayoutID: "po-<1>&", ProviderID: "bank-1", ExternalID: "ålice", FundingSource: "src",
				Amount: money("USD", "30.50"), FraudScore: 0.75, IdempotencyKey: "k-1", CallerSubject: "svc", RequestID: "rq-1"}
			same(t, r.Authorize.Fingerprint(), want.Fingerprint(), r.Authorize, want)
			if r.Authorize.CallerSubject != "svc" || r.Authorize.RequestID != "rq-1" {
				t.Fatalf("audit claims %+v", r.Authorize)
			}
		}},
		{"AuthorizeNegativeZeroWithoutAuditClaims", claims.Authorize, claims.AuthorizeService(holds.AuthorizeRequest{PayoutID: "po-1",
			ProviderID: "bank-1", ExternalID: "a", FundingSource: "s", Amount: money("JPY", "100"), FraudScore: math.Copysign(0, -1),
			IdempotencyKey: "k"}), func(t *testing.T, r claims.Request) {
			if !math.Signbit(r.Authorize.FraudScore) || r.Authorize.CallerSubject != "" || r.Authorize.RequestID != "" ||
				r.Authorize.Amount.Currency != "JPY" || !r.Authorize.Amount.Value.Equal(decimal.NewFromInt(100)) {
				t.Fatalf("decoded %+v", r.Authorize)
			}
		}},
		{"Capture", claims.Capture, claims.CaptureService(holds.CaptureRequest{PayoutID: "po-1", ProviderID: "bank-1",
			HoldReference: "hold_1", IdempotencyKey: "k"}), func(t *testing.T, r claims.Request) {
			if r.Capture != (holds.CaptureRequest{PayoutID: "po-1", ProviderID: "bank-1", HoldReference: "hold_1", IdempotencyKey: "k"}) {
				t.Fatalf("decoded %+v", r.Capture)
			}
		}},
		{"Release", claims.Release, claims.ReleaseService(holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k",
			PayoutID: "po-1", ProviderID: "bank-1", Reason: "expired"}), func(t *testing.T, r claims.Request) {
			if r.Release != (holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k", PayoutID: "po-1", ProviderID: "bank-1", Reason: "expired"}) {
				t.Fatalf("decoded %+v", r.Release)
			}
		}},
		{"ReleaseOptionalClaimsLeftOut", claims.Release, claims.ReleaseService(holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k"}),
			func(t *testing.T, r claims.Request) {
				if r.Release != (holds.ReleaseRequest{HoldReference: "hold_1", IdempotencyKey: "k"}) {
					t.Fatalf("decoded %+v", r.Release)
				}
			}},
		{"Credit", claims.CreditAccount, claims.CreditService(ledger.CreditRequest{ProviderID: "bank-1", IdempotencyKey: "k",
			RequesterExternalID: "bob", FundingDestination: "dst", Amount: money("EUR", "12.34"), RequestID: "rq"}),
			func(t *testing.T, r claims.Request) {
				want := ledger.CreditRequest{ProviderID: "bank-1", IdempotencyKey: "k", RequesterExternalID: "bob",
					FundingDestination: "dst", Amount: money("EUR", "12.34"), RequestID: "rq"}
				same(t, r.Credit.Fingerprint(), want.Fingerprint(), r.Credit, want)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, err := claims.BuildRequest(decodeNow, c.endpoint, c.service)
			if err != nil {
				t.Fatal(err)
			}
			var r claims.Request
			if err := claims.Decode(b, c.endpoint, claims.Options{Now: decodeNow, ProviderID: "bank-1"}, &r); err != nil {
				t.Fatalf("Decode(%s) = %v", b, err)
			}
			c.check(t, r)
		})
	}
}

func same(t *testing.T, got, want []byte, gotReq, wantReq any) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded %+v, want %+v", gotReq, wantReq)
	}
}

// TestServiceRefuses: an amount the receiver would refuse or round is an
// error of the builder, not claims sent.
func TestServiceRefuses(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]ledger.Money{
		"UnknownCurrency": {Currency: "XYZ", Value: decimal.NewFromInt(1)},
		"TooManyDecimals": {Currency: "USD", Value: decimal.RequireFromString("1.005")},
	} {
		if _, err := json.Marshal(claims.CreditService(ledger.CreditRequest{Amount: m})); err == nil {
			t.Errorf("%s: marshalled", name)
		}
		if _, err := claims.BuildRequest(time.Now(), claims.Authorize, claims.AuthorizeService(holds.AuthorizeRequest{Amount: m})); !errors.Is(err, envelope.ErrInvalidClaims) {
			t.Errorf("%s: BuildRequest = %v", name, err)
		}
	}
}
