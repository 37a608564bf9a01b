package providertest

import (
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/provider"
)

// Currency is the currency descriptor of a Money: the client's, since the
// wire shape is one.
type Currency = provider.Currency

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

// USD returns value (a decimal string such as "25.00") as US dollars. It is
// for literals: it panics when value is not a decimal.
func USD(value string) Money {
	return Money{Currency: provider.USDCurrency(), Value: decimal.RequireFromString(value)}
}

// USDPtr is USD for the pointer fields of Limits.
func USDPtr(value string) *Money { m := USD(value); return &m }

// Count returns a pointer to n, for Limits.DailySendCount.
func Count(n int64) *int64 { return &n }
