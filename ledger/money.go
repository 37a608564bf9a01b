package ledger

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"

	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/shopspring/decimal"
)

// Money is an amount in one currency, as the spec's Money object carries it
// (contract §2.2). A Money read by UnmarshalJSON always holds:
//
//  1. Currency is an active ISO 4217 code (ValidCurrency).
//  2. 0 < Value ≤ 10^15.
//  3. Value.Exponent() == -MinorUnits(Currency): the value is stored with
//     exactly the currency's decimal places, so equal amounts have equal
//     coefficients and format identically.
//
// Compare values with Cmp/Equal, never ==. To render a value for hashing or the
// wire use String, FormatAmount or MarshalJSON; decimal.Decimal's own String
// trims trailing zeros ("10.5"), so it is not canonical.
type Money struct {
	Currency string
	Value    decimal.Decimal
}

// String renders m as "10.50 USD": the value with exactly the currency's minor
// units (see FormatAmount), a space, and the code.
func (m Money) String() string {
	return FormatAmount(m.Currency, m.Value) + " " + m.Currency
}

// MoneyError reports why a Money or an amount was refused. It is malformed
// input: callers answer 400.
type MoneyError struct {
	// Pointer is a JSON Pointer (RFC 6901) relative to the Money object:
	// "" (the object itself), "/currency", "/currency/code",
	// "/currency/decimalPlaces" or "/value". Callers prefix the pointer of the
	// field that holds the Money, e.g. "/service/amount" + Pointer. ParseAmount
	// always leaves it "": the caller knows the field.
	Pointer string
	// Detail is a human-readable reason, safe to show to the caller. It never
	// echoes an arbitrary input value; it names a currency code only when the
	// code is three uppercase letters.
	Detail string
}

// Error implements error.
func (e *MoneyError) Error() string {
	if e.Pointer == "" {
		return "invalid amount: " + e.Detail
	}
	return "invalid amount at " + strconv.Quote(e.Pointer) + ": " + e.Detail
}

// Pointers of MoneyError, relative to the Money object.
const (
	pointerCurrency      = "/currency"
	pointerCode          = "/currency/code"
	pointerDecimalPlaces = "/currency/decimalPlaces"
	pointerValue         = "/value"
)

// maxValueLen is the longest value string parseMoney and ParseAmount look at
// (including a '-' sign). 10^15 with four decimal places and a few leading
// zeros fits easily; a longer string is refused before any arithmetic, so a
// pathological 100,000-digit input costs one length check. A side effect: a
// value padded past 64 characters with zeros ("0000…1.00") is refused even
// though the regular expression of contract §2.2 matches it.
const maxValueLen = 64

// maxValue is the largest accepted amount, 10^15 (contract §2.2).
var maxValue = decimal.New(1, 15)

// parseMoney validates a Money given as its wire fields and returns it
// normalised, exactly as contract §2.2 states:
//
//   - code matches ^[A-Z]{3}$ and is in the table of MinorUnits;
//   - decimalPlaces equals the ISO 4217 minor units of code;
//   - value matches ^[0-9]+(\.[0-9]+)?$ (no sign, exponent, spaces,
//     separators, non-ASCII digits or bare '.'), is at most maxValueLen
//     characters, is greater than zero and at most 10^15, and is exactly
//     representable in decimalPlaces places: trailing zeros past them are fine
//     ("10.500" is 10.50 USD, "100.0" is 100 JPY), other digits are not
//     ("10.505" USD, "100.5" JPY).
//
// Leading zeros are accepted ("007.50" is 7.50): the pattern allows them and
// the normalised value is the same as for "7.50", so fingerprints agree.
//
// The returned Value has Exponent() == -decimalPlaces. Errors are *MoneyError
// with Pointer "/currency/code", "/currency/decimalPlaces" or "/value"; checks
// run in that order and the first failure is reported.
func parseMoney(code string, decimalPlaces int64, value string) (Money, error) {
	places, err := currencyPlaces(code, pointerCode)
	if err != nil {
		return Money{}, err
	}
	if decimalPlaces != int64(places) {
		return Money{}, &MoneyError{
			Pointer: pointerDecimalPlaces,
			Detail:  "decimalPlaces must be " + strconv.Itoa(int(places)) + " for " + code,
		}
	}
	v, err := parseValue(value, places, false, pointerValue)
	if err != nil {
		return Money{}, err
	}
	return Money{Currency: code, Value: v}, nil
}

// ParseAmount parses an amount of the admin API (amounts as decimal strings)
// in currency, by the rules of parseMoney with the currency's own minor units.
// With signed, one leading '-' is allowed and the result may be negative (its
// absolute value at most 10^15); '+' is never allowed. Zero ("0", "-0.00") is
// refused either way: an amount that moves nothing is a mistake.
//
// Errors are *MoneyError with Pointer "" for every failure, including an
// unknown currency: the caller knows which request field it parsed and sets
// the pointer. A caller that takes the currency from the request checks it
// with ValidCurrency first, to point at its own currency field.
//
// The returned value has Exponent() == -MinorUnits(currency).
func ParseAmount(currency string, value string, signed bool) (decimal.Decimal, error) {
	places, err := currencyPlaces(currency, "")
	if err != nil {
		return decimal.Decimal{}, err
	}
	return parseValue(value, places, signed, "")
}

// FormatAmount renders v with exactly the currency's minor units: "10.50" for
// USD, "100" for JPY, "1.000" for BHD, "-3.20" for a negative USD value. It
// never rounds: a value with more significant decimals than the currency has
// (which parseMoney never returns) is rendered in full, so it fails loudly
// when parsed again instead of silently changing. For a code not in the table
// the value is rendered in full as well.
func FormatAmount(currency string, v decimal.Decimal) string {
	places, ok := minorUnits[currency]
	if !ok || !v.Equal(v.Truncate(places)) {
		return v.String()
	}
	return v.StringFixed(places)
}

// currencyPlaces validates code and returns its minor units, or a *MoneyError
// at pointer.
func currencyPlaces(code, pointer string) (int32, error) {
	if !isCurrencyCode(code) {
		return 0, &MoneyError{Pointer: pointer, Detail: "currency code must be three uppercase letters (ISO 4217)"}
	}
	places, ok := minorUnits[code]
	if !ok {
		return 0, &MoneyError{Pointer: pointer, Detail: "currency code " + code + " is not an active ISO 4217 currency with minor units"}
	}
	return places, nil
}

// parseValue checks s against contract §2.2 for a currency with places minor
// units and returns it with exponent -places. It reads s byte by byte, so
// non-ASCII digits, spaces and anything else outside [0-9.] are refused, and
// it builds the coefficient in a uint64 whose range the length checks keep it
// inside: the integer part is at most 10^15, with no fraction when it is
// 10^15, so the coefficient is at most 10^15·10^4 = 10^19 < 2^64.
func parseValue(s string, places int32, signed bool, pointer string) (decimal.Decimal, error) {
	fail := func(detail string) (decimal.Decimal, error) {
		return decimal.Decimal{}, &MoneyError{Pointer: pointer, Detail: detail}
	}
	if s == "" {
		return fail("value is required")
	}
	if len(s) > maxValueLen {
		return fail("value is longer than " + strconv.Itoa(maxValueLen) + " characters")
	}
	neg := false
	if signed && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	intPart, frac := s, ""
	dot := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' && dot < 0 {
			dot = i
			continue
		}
		if c < '0' || c > '9' {
			dot = -2
			break
		}
	}
	if dot >= 0 {
		intPart, frac = s[:dot], s[dot+1:]
	}
	if dot == -2 || intPart == "" || (dot >= 0 && frac == "") {
		if signed {
			return fail("value must be a plain decimal number with an optional leading '-' (digits, optionally '.' and more digits; no '+', exponent, spaces or separators)")
		}
		return fail("value must be a plain decimal number (digits, optionally '.' and more digits; no sign, exponent, spaces or separators)")
	}

	// Exactness: digits past the minor units must all be zero.
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(frac) > int(places) {
		return fail("value must be exactly representable in " + strconv.Itoa(int(places)) + " decimal places")
	}

	// Magnitude: at most 10^15, decided on the digits before any arithmetic.
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	const maxInt = "1000000000000000" // 10^15
	if len(intPart) > len(maxInt) || (len(intPart) == len(maxInt) && (intPart > maxInt || frac != "")) {
		return fail("value must be at most 1000000000000000 (10^15)")
	}

	var units uint64
	for i := 0; i < len(intPart); i++ {
		units = units*10 + uint64(intPart[i]-'0')
	}
	for i := 0; i < int(places); i++ {
		d := uint64(0)
		if i < len(frac) {
			d = uint64(frac[i] - '0')
		}
		units = units*10 + d
	}
	if units == 0 {
		if signed {
			return fail("value must not be zero")
		}
		return fail("value must be greater than zero")
	}
	coef := new(big.Int).SetUint64(units)
	if neg {
		coef.Neg(coef)
	}
	return decimal.NewFromBigInt(coef, -places), nil
}

// moneyJSON is the wire shape Money marshals to.
type moneyJSON struct {
	Currency currencyJSON `json:"currency"`
	Value    string       `json:"value"`
}

type currencyJSON struct {
	Code          string `json:"code"`
	DecimalPlaces int32  `json:"decimalPlaces"`
}

// MarshalJSON renders the spec's wire shape,
// {"currency":{"code":"USD","decimalPlaces":2},"value":"10.50"}, with the
// value as a string with exactly the currency's minor units. It fails, rather
// than emit a Money the other side would refuse or round, when the currency is
// unknown or the value has more decimals than the currency allows.
func (m Money) MarshalJSON() ([]byte, error) {
	places, err := currencyPlaces(m.Currency, pointerCode)
	if err != nil {
		return nil, err
	}
	if !m.Value.Equal(m.Value.Truncate(places)) {
		return nil, &MoneyError{Pointer: pointerValue, Detail: "value must be exactly representable in " + strconv.Itoa(int(places)) + " decimal places"}
	}
	return json.Marshal(moneyJSON{
		Currency: currencyJSON{Code: m.Currency, DecimalPlaces: places},
		Value:    m.Value.StringFixed(places),
	})
}

// UnmarshalJSON reads the spec's wire shape and validates it with parseMoney.
// Keys match exactly (encoding/json's case-insensitive matching is not used);
// currency.numericCode, currency.name and unknown keys are ignored (spec).
// It refuses, with a *MoneyError: null or a non-object (pointer ""), a missing
// or non-object currency ("/currency"), a missing or non-string code
// ("/currency/code"), a missing decimalPlaces or one that is not a JSON integer
// such as 2.5, 2.0, 2e0 or "2" ("/currency/decimalPlaces"), and a missing or
// non-string value such as the number 10.5 ("/value"). A null member counts as
// missing. On error m is left unchanged.
func (m *Money) UnmarshalJSON(data []byte) error {
	// Walked member by member with strictjson rather than through maps and
	// reflection. A member named twice keeps its last value, as
	// encoding/json does.
	t := MoneyTokens{Object: data}
	if !json.Valid(data) {
		t.Object = nil
	} else if strictjson.EachMember(data, func(name, value []byte) error {
		switch n, _ := strictjson.UnquoteBytes(name); string(n) {
		case "currency":
			t.Currency = value
		case "value":
			t.Value = value
		}
		return nil
	}) == nil && t.Currency != nil {
		_ = strictjson.EachMember(t.Currency, func(name, value []byte) error {
			switch n, _ := strictjson.UnquoteBytes(name); string(n) {
			case "code":
				t.Code = value
			case "decimalPlaces":
				t.DecimalPlaces = value
			}
			return nil
		})
	}
	parsed, err := DecodeMoney(t)
	if err != nil {
		return err
	}
	*m = parsed
	return nil
}

// MoneyTokens are the raw JSON tokens of a Money object's members as a
// decoder that walked the object found them (nil: absent): Object the
// whole value, Currency and Value its members', Code and DecimalPlaces the
// members of the currency object. A decoder that walks the claims of a
// callback once collects them on its way and calls DecodeMoney, which
// reads no structure again.
type MoneyTokens struct {
	Object, Currency, Code, DecimalPlaces, Value []byte
}

// DecodeMoney validates a Money given as its wire tokens with the rules
// and errors of UnmarshalJSON: null or a non-object Object (pointer ""), a
// missing or non-object currency ("/currency"), a missing or non-string
// code ("/currency/code"), a missing decimalPlaces or one that is not a
// JSON integer ("/currency/decimalPlaces"), a missing or non-string value
// ("/value"); then parseMoney. A null member counts as missing. Strings
// are decoded exactly: a lone surrogate escape or a byte that is not UTF-8
// is not a string here.
func DecodeMoney(t MoneyTokens) (Money, error) {
	if t.Object == nil || isNull(t.Object) || !isObject(t.Object) {
		return Money{}, &MoneyError{Pointer: "", Detail: "money must be a JSON object with currency and value"}
	}
	if t.Currency == nil || isNull(t.Currency) {
		return Money{}, &MoneyError{Pointer: pointerCurrency, Detail: "currency is required"}
	}
	if !isObject(t.Currency) {
		return Money{}, &MoneyError{Pointer: pointerCurrency, Detail: "currency must be an object with code and decimalPlaces"}
	}
	code, err := jsonString(t.Code, pointerCode, "currency code")
	if err != nil {
		return Money{}, err
	}
	if t.DecimalPlaces == nil || isNull(t.DecimalPlaces) {
		return Money{}, &MoneyError{Pointer: pointerDecimalPlaces, Detail: "decimalPlaces is required"}
	}
	dp, err := jsonInteger(t.DecimalPlaces)
	if err != nil {
		return Money{}, &MoneyError{Pointer: pointerDecimalPlaces, Detail: "decimalPlaces must be an integer"}
	}
	value, err := jsonString(t.Value, pointerValue, "value")
	if err != nil {
		return Money{}, err
	}
	return parseMoney(code, dp, value)
}

// isObject reports whether the JSON value raw (valid JSON) is an object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// jsonString decodes a required JSON string member exactly: a lone
// surrogate escape or a byte that is not UTF-8 is not a string here.
func jsonString(raw []byte, pointer, name string) (string, error) {
	if raw == nil || isNull(raw) {
		return "", &MoneyError{Pointer: pointer, Detail: name + " is required"}
	}
	s, ok := strictjson.UnquoteBytes(raw)
	if !ok {
		return "", &MoneyError{Pointer: pointer, Detail: name + " must be a JSON string"}
	}
	return string(s), nil
}

// jsonInteger decodes a JSON number written as an integer (-?[0-9]+): a
// fraction or exponent, even 2.0 or 2e0, is refused by ParseInt, as is a
// string and anything outside int64.
func jsonInteger(raw []byte) (int64, error) {
	return strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
}

func isNull(raw []byte) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
