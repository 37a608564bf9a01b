package providertest

import (
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"
)

// Currency is the currency descriptor of a Money.
type Currency struct {
	Code          string `json:"code"`
	DecimalPlaces uint8  `json:"decimalPlaces"`
	NumericCode   string `json:"numericCode,omitempty"`
	Name          string `json:"name,omitempty"`
}

// Money is an amount as the spec writes it: a currency descriptor and a
// decimal value, never a float. On the wire the value is a decimal string.
type Money struct {
	Currency Currency
	Value    decimal.Decimal
}

// moneyWire is Money's JSON shape. It is also how a request's amount is
// read before validation (moneyIn), so that a malformed value is a 422
// naming its field rather than a 400 for the whole body.
type moneyWire struct {
	Currency Currency `json:"currency"`
	Value    string   `json:"value"`
}

// MarshalJSON writes the value as a string with the currency's decimal
// places ("25.00"), or with more when the value has more: it never rounds.
func (m Money) MarshalJSON() ([]byte, error) {
	places := max(int32(m.Currency.DecimalPlaces), -m.Value.Exponent())
	return json.Marshal(moneyWire{Currency: m.Currency, Value: m.Value.StringFixed(places)})
}

// UnmarshalJSON reads a Money whose value is a decimal string.
func (m *Money) UnmarshalJSON(b []byte) error {
	var w moneyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d, err := decimal.NewFromString(w.Value)
	if err != nil {
		return fmt.Errorf("providertest: money value %q: %w", w.Value, err)
	}
	m.Currency, m.Value = w.Currency, d
	return nil
}

// usdCurrency is the descriptor of US dollars, the currency of every amount
// the fake accepts in limits.
func usdCurrency() Currency { return Currency{Code: "USD", DecimalPlaces: 2, NumericCode: "840"} }

// USD returns value (a decimal string such as "25.00") as US dollars. It is
// for literals: it panics when value is not a decimal.
func USD(value string) Money {
	return Money{Currency: usdCurrency(), Value: decimal.RequireFromString(value)}
}

// USDPtr is USD for the pointer fields of Limits.
func USDPtr(value string) *Money { m := USD(value); return &m }

// Count returns a pointer to n, for Limits.DailySendCount.
func Count(n int64) *int64 { return &n }
