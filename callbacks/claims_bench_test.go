package callbacks

import (
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
)

// benchClaims are realistic request claims of each endpoint, as the
// service's SDK writes them.
var benchClaims = map[string]string{
	claims.Authorize: `{"iat":1760000000,"exp":1760000300,"typ":"authorize","service":{"payoutID":"po-3f1c9a7e","providerID":"bank-1",` +
		`"externalID":"alice-0001","fundingSource":"src-alice-usd","amount":{"currency":{"code":"USD","decimalPlaces":2,` +
		`"numericCode":"840","name":"US Dollar"},"value":"125.50"},"fraudScore":0.12,"idempotencyKey":"idem-8c2d4f60",` +
		`"callerSubject":"sdk-user","requestID":"trace-5e0b"}}`,
	claims.Capture: `{"iat":1760000000,"exp":1760000300,"typ":"capture","service":{"payoutID":"po-3f1c9a7e","providerID":"bank-1",` +
		`"holdReference":"hold_abcdefghijklmnopqrstuvwxyz","idempotencyKey":"idem-8c2d4f61"}}`,
	claims.Release: `{"iat":1760000000,"exp":1760000300,"typ":"release","service":{"payoutID":"po-3f1c9a7e","providerID":"bank-1",` +
		`"holdReference":"hold_abcdefghijklmnopqrstuvwxyz","idempotencyKey":"idem-8c2d4f62","reason":"cancelled"}}`,
	claims.CreditAccount: `{"iat":1760000000,"exp":1760000300,"typ":"credit-account","service":{"providerID":"bank-1",` +
		`"idempotencyKey":"idem-8c2d4f63","requesterExternalID":"bob-0002","fundingDestination":"dst-bob-usd",` +
		`"amount":{"currency":{"code":"USD","decimalPlaces":2},"value":"40.00"},"requestID":"req-77a1"}}`,
}

// BenchmarkClaims measures the decode of one callback's claims, from the
// decrypted claims object to the typed request the decision takes, with
// every check of the wire (exact strings, duplicate members, exp and iat,
// typ, the service object, Money).
//
//	go test ./callbacks -run '^$' -bench Claims -benchmem -count 10
func BenchmarkClaims(b *testing.B) {
	s := &Handler{cfg: Config{ProviderID: "bank-1", ClockLeeway: time.Minute}}
	now := time.Unix(1_760_000_010, 0)
	for _, ep := range claims.Endpoints {
		opened := envelope.Opened{Claims: []byte(benchClaims[ep])}
		b.Run(ep, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var req claims.Request
				if p := s.claims(opened, ep, now, &req); req.Endpoint == "" || p != nil {
					b.Fatalf("%s: %v", ep, p)
				}
			}
		})
	}
}
