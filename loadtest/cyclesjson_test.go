package loadtest

import (
	"encoding/json"
	"testing"
)

// TestCycleJSON: the cycle's service claims, written directly, are the
// bytes encoding/json writes for the structs they stand for, whatever
// the strings hold.
func TestCycleJSON(t *testing.T) {
	t.Parallel()
	type (
		currency struct {
			Code          string `json:"code"`
			DecimalPlaces int    `json:"decimalPlaces"`
		}
		money struct {
			Currency currency `json:"currency"`
			Value    string   `json:"value"`
		}
		authorize struct {
			PayoutID       string  `json:"payoutID"`
			ProviderID     string  `json:"providerID"`
			ExternalID     string  `json:"externalID"`
			FundingSource  string  `json:"fundingSource"`
			Amount         money   `json:"amount"`
			FraudScore     float64 `json:"fraudScore"`
			IdempotencyKey string  `json:"idempotencyKey"`
		}
		capture struct {
			PayoutID       string `json:"payoutID"`
			ProviderID     string `json:"providerID"`
			HoldReference  string `json:"holdReference"`
			IdempotencyKey string `json:"idempotencyKey"`
		}
	)
	for _, s := range []string{"lt7-r0-c3-12", `q"u\\o<&>`, "é\u2028\x01"} {
		a := accountSeed{OwnerExternalID: "o-" + s, SourceToken: "src-" + s}
		want, _ := json.Marshal(authorize{PayoutID: s, ProviderID: "local" + s, ExternalID: a.OwnerExternalID, FundingSource: a.SourceToken,
			Amount: money{Currency: currency{Code: stormCurrency, DecimalPlaces: decimalPlaces}, Value: "12.34"}, FraudScore: 0.01,
			IdempotencyKey: "a-" + s})
		if got := authorizeJSON(s, "local"+s, a, "12.34"); string(got) != string(want) {
			t.Errorf("authorize:\n got %s\nwant %s", got, want)
		}
		want, _ = json.Marshal(capture{PayoutID: s, ProviderID: "local" + s, HoldReference: "hold_" + s, IdempotencyKey: "c-" + s})
		if got := captureJSON(s, "local"+s, "hold_"+s); string(got) != string(want) {
			t.Errorf("capture:\n got %s\nwant %s", got, want)
		}
	}
}
