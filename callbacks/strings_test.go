package callbacks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/store/storetest"
)

// sendRaw seals claims written by hand (so that they can hold what
// encoding/json never writes: lone surrogate escapes, bytes that are not
// UTF-8, duplicate members) in form and posts them to endpoint.
func (b *bundle) sendRaw(t *testing.T, endpoint string, form envelope.Form, claims string) *caller.Reply {
	t.Helper()
	tok, err := envelope.Seal(b.key, form, []byte(claims))
	if err != nil {
		t.Fatal(err)
	}
	c := *b.client
	c.Form = form
	r, err := c.Post(context.Background(), endpoint, tok)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rawClaims wraps a hand-written service object (and extra top-level
// members, each with a leading comma) into valid request claims.
func rawClaims(typ, service, extra string) string {
	now := time.Now().Unix()
	return `{"iat":` + itoa(now) + `,"exp":` + itoa(now+300) + `,"typ":"` + typ + `"` + extra + `,"service":` + service + `}`
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// rawAuthorize is an authorize service object for payout (a JSON string
// token, as written) with the other claims valid.
func rawAuthorize(payoutToken, keyToken string) string {
	return `{"payoutID":` + payoutToken + `,"providerID":"` + provider + `","externalID":"alice","fundingSource":"src-str",` +
		`"amount":{"currency":{"code":"USD","decimalPlaces":2},"value":"10.00"},"fraudScore":0,"idempotencyKey":` + keyToken + `}`
}

// TestInexactClaimStrings: a claim string that encoding/json would decode
// with a replacement character (a lone or reversed surrogate escape, bytes
// that are not UTF-8) or a member named twice is refused with 400
// invalid-claims pointing at it, in every inner form, and changes nothing:
// "p-\ud800" and "p-\udc00" are not merged into one payout.
func TestInexactClaimStrings(t *testing.T) {
	t.Parallel()

	t.Run("LoneSurrogatesDoNotMergePayouts", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		b.account(t, storetest.AccountOpts{AccountID: "str-1", Owner: "alice", Funds: "100", Source: "src-str"})
		for i, payout := range []string{`"p-\ud800"`, `"p-\udc00"`} {
			r := b.sendRaw(t, claims.Authorize, envelope.FormClaims, rawClaims("authorize", rawAuthorize(payout, `"k-1"`), ""))
			if r.Status != 400 || problemType(r) != "invalid-claims" || !hasPointer(r, "/service/payoutID") {
				t.Fatalf("payout %d (%s): %d %v %v, want 400 invalid-claims at /service/payoutID", i, payout, r.Status, r.Problem, r.Service)
			}
		}
		storetest.AssertBalances(t, b.db, "str-1", "100", "0", "100")
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		b.account(t, storetest.AccountOpts{AccountID: "str-2", Owner: "alice", Funds: "100", Source: "src-str"})
		for _, c := range []struct {
			name, claims, pointer string
			form                  envelope.Form
		}{
			{"LoneHighPayoutID", rawClaims("authorize", rawAuthorize(`"p-\ud800"`, `"k-2"`), ""), "/service/payoutID", envelope.FormClaims},
			{"LoneLowIdempotencyKey", rawClaims("authorize", rawAuthorize(`"p-2"`, `"k-\udc00"`), ""), "/service/idempotencyKey", envelope.FormClaims},
			{"ReversedPairJWS", rawClaims("authorize", rawAuthorize(`"p-\udc00\ud800"`, `"k-2"`), ""), "/service/payoutID", envelope.FormJWS},
			{"InvalidUTF8Unsecured", rawClaims("authorize", rawAuthorize("\"p-\xff\"", `"k-2"`), ""), "/service/payoutID", envelope.FormUnsecured},
			{"EncodedSurrogate", rawClaims("authorize", rawAuthorize("\"p-\xed\xa0\x80\"", `"k-2"`), ""), "/service/payoutID", envelope.FormClaims},
			{"InUnknownClaim", rawClaims("authorize", rawAuthorize(`"p-2"`, `"k-2"`), `,"note":"\ud800"`), "/note", envelope.FormClaims},
			{"InCurrencyCode", rawClaims("authorize", strings.Replace(rawAuthorize(`"p-2"`, `"k-2"`), `"code":"USD"`, `"code":"US\udc00"`, 1), ""), "/service/amount/currency/code", envelope.FormClaims},
			{"InMemberName", rawClaims("authorize", strings.Replace(rawAuthorize(`"p-2"`, `"k-2"`), `"fraudScore"`, `"fraudScore\ud800":1,"fraudScore"`, 1), ""), "/service", envelope.FormClaims},
			{"DuplicatePayoutID", rawClaims("authorize", strings.Replace(rawAuthorize(`"p-2"`, `"k-2"`), `"providerID"`, `"payoutID":"p-3","providerID"`, 1), ""), "/service/payoutID", envelope.FormClaims},
			{"DuplicateByEscape", rawClaims("authorize", strings.Replace(rawAuthorize(`"p-2"`, `"k-2"`), `"providerID"`, `"payout\u0049D":"p-3","providerID"`, 1), ""), "/service/payoutID", envelope.FormClaims},
			{"CaptureHoldReference", rawClaims("capture", `{"payoutID":"p-2","providerID":"`+provider+`","holdReference":"hold_\ud800","idempotencyKey":"k-c"}`, ""), "/service/holdReference", envelope.FormClaims},
			{"CreditRequestID", rawClaims("credit-account", `{"providerID":"`+provider+`","idempotencyKey":"k-cr","requesterExternalID":"alice","fundingDestination":"dst","amount":{"currency":{"code":"USD","decimalPlaces":2},"value":"1.00"},"requestID":"\udfff"}`, ""), "/service/requestID", envelope.FormClaims},
		} {
			t.Run(c.name, func(t *testing.T) {
				endpoint := claims.Authorize
				switch {
				case strings.Contains(c.claims, `"typ":"capture"`):
					endpoint = claims.Capture
				case strings.Contains(c.claims, `"typ":"credit-account"`):
					endpoint = claims.CreditAccount
				}
				r := b.sendRaw(t, endpoint, c.form, c.claims)
				if r.Status != 400 || problemType(r) != "invalid-claims" || !hasPointer(r, c.pointer) {
					t.Fatalf("%d %v, want 400 invalid-claims at %s", r.Status, r.Problem, c.pointer)
				}
				if strings.Contains(r.ProblemDetail(), "p-") {
					t.Fatalf("the problem echoes a claim: %v", r.Problem)
				}
			})
		}
		storetest.AssertBalances(t, b.db, "str-2", "100", "0", "100")
	})

	t.Run("ExactStringsAreTaken", func(t *testing.T) {
		t.Parallel()
		b := setup(t, opts{})
		b.account(t, storetest.AccountOpts{AccountID: "str-3", Owner: "alice", Funds: "100", Source: "src-str"})
		// A surrogate pair is one character; \\u0000 is a backslash and
		// the text u0000, not a NUL; U+FFFD written as such is a character
		// like any other.
		for i, payout := range []string{`"p-\ud83d\ude00"`, `"p-\\u0000"`, `"p-\uFFFD"`} {
			r := b.sendRaw(t, claims.Authorize, envelope.FormClaims, rawClaims("authorize", rawAuthorize(payout, `"k-3"`), ""))
			if r.Status != 200 || r.Outcome() != "approved" {
				t.Fatalf("payout %d (%s): %d %v %v", i, payout, r.Status, r.Problem, r.Service)
			}
		}
		storetest.AssertBalances(t, b.db, "str-3", "100", "30", "70")
		for _, payout := range []string{"p-😀", `p-\u0000`, "p-\uFFFD"} {
			if p, err := b.db.ListHolds(context.Background(), holds.ListOptions{PayoutID: payout}); err != nil || len(p.Holds) != 1 {
				t.Fatalf("holds of payout %q: %v %v", payout, p.Holds, err)
			}
		}
	})
}
