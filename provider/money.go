package provider

import (
	"encoding/json"
	"fmt"

	"github.com/oapi-codegen/nullable"
	"github.com/shopspring/decimal"
)

// Currency is a Money's currency descriptor.
type Currency struct {
	Code          string `json:"code"`
	DecimalPlaces uint8  `json:"decimalPlaces"`
	NumericCode   string `json:"numericCode,omitempty"`
	Name          string `json:"name,omitempty"`
}

// Money is an amount: a decimal, never a float, sent as a string with the
// currency's decimal places.
type Money struct {
	Currency Currency
	Value    decimal.Decimal
}

type moneyWire struct {
	Currency Currency        `json:"currency"`
	Value    json.RawMessage `json:"value"`
}

// MarshalJSON writes the value as a string fixed to the currency's places
// ("12.50"). A value with more places than its currency has is an error,
// never rounded: a limit of 10.005 USD (or 12.5 in a Money whose currency
// was left zero) must not reach the service as 10.01 (or 13).
func (m Money) MarshalJSON() ([]byte, error) {
	places := int32(m.Currency.DecimalPlaces)
	if !m.Value.Equal(m.Value.Round(places)) {
		return nil, fmt.Errorf("provider: amount %s has more than the %d decimal places of currency %q",
			m.Value.String(), places, m.Currency.Code)
	}
	v, _ := json.Marshal(m.Value.StringFixed(places))
	return json.Marshal(moneyWire{Currency: m.Currency, Value: v})
}

// UnmarshalJSON reads a Money whose value is a decimal string with no more
// decimal places than its currency has (never rounded).
func (m *Money) UnmarshalJSON(b []byte) error {
	var w moneyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var s string
	if err := json.Unmarshal(w.Value, &s); err != nil {
		return fmt.Errorf("provider: money value must be a decimal string: %s", w.Value)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("provider: money value %q: %w", s, err)
	}
	if places := int32(w.Currency.DecimalPlaces); !d.Equal(d.Round(places)) {
		return fmt.Errorf("provider: money value %q has more than the %d decimal places of currency %q", s, places, w.Currency.Code)
	}
	m.Currency, m.Value = w.Currency, d
	return nil
}

// String is "12.50 USD".
func (m Money) String() string {
	return m.Value.StringFixed(int32(m.Currency.DecimalPlaces)) + " " + m.Currency.Code
}

// USDCurrency returns the descriptor of US dollars, the only currency of
// limit records in v1. Each call returns a fresh value, so no caller can
// change what another sees.
func USDCurrency() Currency {
	return Currency{Code: "USD", DecimalPlaces: 2, NumericCode: "840"}
}

// USD parses value ("25.00") as US dollars.
func USD(value string) (Money, error) {
	d, err := decimal.NewFromString(value)
	if err != nil {
		return Money{}, fmt.Errorf("provider: amount %q: %w", value, err)
	}
	return Money{Currency: USDCurrency(), Value: d}, nil
}

// MustUSD is USD for constants; it panics on a malformed value.
func MustUSD(value string) Money {
	m, err := USD(value)
	if err != nil {
		panic(err)
	}
	return m
}

// Limits are the limit dimensions of a group, override or policy as read.
// A nil field is unset: it inherits from the next level.
type Limits struct {
	PerTransactionAmount *Money `json:"perTransactionAmount,omitempty"`
	DailyAmount          *Money `json:"dailyAmount,omitempty"`
	WeeklyAmount         *Money `json:"weeklyAmount,omitempty"`
	MonthlyAmount        *Money `json:"monthlyAmount,omitempty"`
	DailySendCount       *int64 `json:"dailySendCount,omitempty"`
}

// Field is the tri-state of an update field: absent (the zero value, left
// out of the JSON), explicit null (Null), or a value (Value). Tag it
// `json:",omitempty"`; it is nullable.Nullable from oapi-codegen.
type Field[T any] = nullable.Nullable[T]

// Value returns a Field holding v.
func Value[T any](v T) Field[T] { return nullable.NewNullableWithValue(v) }

// Null returns a Field that is explicitly null.
func Null[T any]() Field[T] { return nullable.NewNullNullable[T]() }

// LimitsUpdate changes limit dimensions: an absent field stays unchanged,
// Null clears it to inherit, a Value sets it.
type LimitsUpdate struct {
	PerTransactionAmount Field[Money] `json:"perTransactionAmount,omitempty"`
	DailyAmount          Field[Money] `json:"dailyAmount,omitempty"`
	WeeklyAmount         Field[Money] `json:"weeklyAmount,omitempty"`
	MonthlyAmount        Field[Money] `json:"monthlyAmount,omitempty"`
	DailySendCount       Field[int64] `json:"dailySendCount,omitempty"`
}
