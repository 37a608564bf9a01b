package ledger

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/shopspring/decimal"
)

// moneyCheck checks the result of parseMoney for one input.
type moneyCheck func(t *testing.T, m Money, err error)

// parsedAs wants a Money whose String is want, normalised to the currency's
// minor units.
func parsedAs(want string) moneyCheck {
	return func(t *testing.T, m Money, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("got error %v, want %s", err, want)
		}
		if got := m.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		checkNormalised(t, m.Currency, m.Value)
		if !m.Value.IsPositive() || m.Value.Cmp(maxValue) > 0 {
			t.Errorf("value %s outside (0, 10^15]", m.Value)
		}
	}
}

// refused wants a *MoneyError at pointer whose Detail contains about.
func refused(pointer, about string) moneyCheck {
	return func(t *testing.T, m Money, err error) {
		t.Helper()
		checkMoneyError(t, err, pointer, about)
		if m != (Money{}) {
			t.Errorf("got Money %v alongside an error, want the zero Money", m)
		}
	}
}

func checkMoneyError(t *testing.T, err error, pointer, about string) {
	t.Helper()
	var me *MoneyError
	if !errors.As(err, &me) {
		t.Fatalf("got error %v (%T), want *MoneyError at %q", err, err, pointer)
	}
	if me.Pointer != pointer {
		t.Errorf("Pointer = %q, want %q (detail %q)", me.Pointer, pointer, me.Detail)
	}
	if !strings.Contains(me.Detail, about) {
		t.Errorf("Detail = %q, want it to mention %q", me.Detail, about)
	}
	if len(me.Detail) > 200 {
		t.Errorf("Detail is %d bytes, want a short message", len(me.Detail))
	}
}

// checkNormalised wants v stored with exactly the currency's minor units.
func checkNormalised(t *testing.T, currency string, v decimal.Decimal) {
	t.Helper()
	places, ok := MinorUnits(currency)
	if !ok {
		t.Fatalf("currency %q unknown", currency)
	}
	if v.Exponent() != -places {
		t.Errorf("Exponent() = %d, want %d", v.Exponent(), -places)
	}
}

// Parts of parseMoney's refusals: what each kind of refused value says.
const (
	syntax   = "plain decimal"
	zero     = "greater than zero"
	tooLarge = "at most 1000000000000000"
	inexact  = "exactly representable"
	long     = "longer than 64"
)

// parseMoneyCase is a parseMoney call (code, decimalPlaces, value) and
// what it must give.
type parseMoneyCase struct {
	name  string
	code  string
	dp    int64
	value string
	check moneyCheck
}

// runParseMoney runs each case as a subtest of its own; a refusal never
// echoes the value it refuses.
func runParseMoney(t *testing.T, cases []parseMoneyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := parseMoney(tc.code, tc.dp, tc.value)
			tc.check(t, m, err)
			var me *MoneyError
			if errors.As(err, &me) && len(tc.value) >= 4 && strings.Contains(me.Detail, tc.value) {
				t.Errorf("Detail %q echoes the input value", me.Detail)
			}
		})
	}
}

// TestParseMoney* hold parseMoney to contract §2: an amount is a plain
// positive decimal of at most 64 characters and 10^15, exactly
// representable in its currency's minor units, which decimalPlaces must
// state.
//
// TestParseMoneyAccepts: amounts in range are normalised to the minor
// units, whatever their leading or trailing zeros, up to the length cap.
func TestParseMoneyAccepts(t *testing.T) {
	t.Parallel()
	// 64 characters exactly (the cap).
	at64 := strings.Repeat("0", 60) + "1.00"
	runParseMoney(t, []parseMoneyCase{
		{"USD", "USD", 2, "10.50", parsedAs("10.50 USD")},
		{"OneFractionDigitIsPadded", "USD", 2, "10.5", parsedAs("10.50 USD")},
		{"IntegerIsPadded", "USD", 2, "10", parsedAs("10.00 USD")},
		{"TrailingZerosPastMinorUnits", "USD", 2, "10.500", parsedAs("10.50 USD")},
		{"ManyTrailingZeros", "USD", 2, "10.5000000000", parsedAs("10.50 USD")},
		{"SmallestUnit", "USD", 2, "0.01", parsedAs("0.01 USD")},
		{"LeadingZerosAccepted", "USD", 2, "007.50", parsedAs("7.50 USD")},
		{"MaxExactly", "USD", 2, "1000000000000000", parsedAs("1000000000000000.00 USD")},
		{"MaxExactlyWithZeros", "USD", 2, "1000000000000000.000", parsedAs("1000000000000000.00 USD")},
		{"MaxWithLeadingZeros", "USD", 2, "01000000000000000.00", parsedAs("1000000000000000.00 USD")},
		{"AtLengthCap", "USD", 2, at64, parsedAs("1.00 USD")},
		{"EUR", "EUR", 2, "0.5", parsedAs("0.50 EUR")},
	})
}

// TestParseMoneyRefusesValues: too large, too long, inexact, zero, and
// anything but plain ASCII decimal digits with one inner dot.
func TestParseMoneyRefusesValues(t *testing.T) {
	t.Parallel()
	// One character past the 64-character cap.
	at65 := "0" + strings.Repeat("0", 60) + "1.00"
	runParseMoney(t, []parseMoneyCase{
		{"MaxPlusOneCent", "USD", 2, "1000000000000000.01", refused(pointerValue, tooLarge)},
		{"MaxPlusOne", "USD", 2, "1000000000000001", refused(pointerValue, tooLarge)},
		{"SixteenNines", "USD", 2, "9999999999999999", refused(pointerValue, tooLarge)},
		{"TwentyDigits", "USD", 2, "99999999999999999999", refused(pointerValue, tooLarge)},
		{"PastLengthCap", "USD", 2, at65, refused(pointerValue, long)},
		{"HundredThousandDigits", "USD", 2, strings.Repeat("1", 100_000), refused(pointerValue, long)},
		{"SubCentUSD", "USD", 2, "10.505", refused(pointerValue, inexact)},
		{"SubCentTrailingZero", "USD", 2, "10.5050", refused(pointerValue, inexact)},
		{"Zero", "USD", 2, "0", refused(pointerValue, zero)},
		{"ZeroWithPlaces", "USD", 2, "0.00", refused(pointerValue, zero)},
		{"ZeroPastPlaces", "USD", 2, "000.000", refused(pointerValue, zero)},
		{"Negative", "USD", 2, "-1", refused(pointerValue, syntax)},
		{"Plus", "USD", 2, "+1", refused(pointerValue, syntax)},
		{"Exponent", "USD", 2, "1e3", refused(pointerValue, syntax)},
		{"UpperExponent", "USD", 2, "1E3", refused(pointerValue, syntax)},
		{"LeadingSpace", "USD", 2, " 1", refused(pointerValue, syntax)},
		{"TrailingSpace", "USD", 2, "1 ", refused(pointerValue, syntax)},
		{"TrailingDot", "USD", 2, "1.", refused(pointerValue, syntax)},
		{"LeadingDot", "USD", 2, ".5", refused(pointerValue, syntax)},
		{"OnlyDot", "USD", 2, ".", refused(pointerValue, syntax)},
		{"TwoDots", "USD", 2, "1.2.3", refused(pointerValue, syntax)},
		{"Comma", "USD", 2, "1,00", refused(pointerValue, syntax)},
		{"Underscore", "USD", 2, "1_000", refused(pointerValue, syntax)},
		{"Hex", "USD", 2, "0x10", refused(pointerValue, syntax)},
		{"NaN", "USD", 2, "NaN", refused(pointerValue, syntax)},
		{"Infinity", "USD", 2, "Infinity", refused(pointerValue, syntax)},
		{"ArabicIndicDigits", "USD", 2, "١٢", refused(pointerValue, syntax)},
		{"FullwidthDigit", "USD", 2, "１", refused(pointerValue, syntax)},
		{"NUL", "USD", 2, "1\x00", refused(pointerValue, syntax)},
		{"Empty", "USD", 2, "", refused(pointerValue, "required")},
	})
}

// TestParseMoneyMinorUnits: currencies of 0, 3 and 4 minor units, and
// codes added or kept by ISO 4217 lately.
func TestParseMoneyMinorUnits(t *testing.T) {
	t.Parallel()
	runParseMoney(t, []parseMoneyCase{
		{"JPY", "JPY", 0, "100", parsedAs("100 JPY")},
		{"JPYTrailingZero", "JPY", 0, "100.0", parsedAs("100 JPY")},
		{"JPYFraction", "JPY", 0, "100.5", refused(pointerValue, "0 decimal places")},
		{"JPYWithTwoPlaces", "JPY", 2, "100", refused(pointerDecimalPlaces, "must be 0 for JPY")},
		{"KRW", "KRW", 0, "1000000000000000", parsedAs("1000000000000000 KRW")},
		{"BHD", "BHD", 3, "1", parsedAs("1.000 BHD")},
		{"BHDFils", "BHD", 3, "0.001", parsedAs("0.001 BHD")},
		{"BHDSubFils", "BHD", 3, "1.0005", refused(pointerValue, "3 decimal places")},
		{"BHDWithTwoPlaces", "BHD", 2, "1.00", refused(pointerDecimalPlaces, "must be 3 for BHD")},
		{"KWD", "KWD", 3, "12.345", parsedAs("12.345 KWD")},
		{"CLF", "CLF", 4, "1.2345", parsedAs("1.2345 CLF")},
		{"CLFFifthPlace", "CLF", 4, "1.23456", refused(pointerValue, "4 decimal places")},
		{"CLFMax", "CLF", 4, "1000000000000000.0000", parsedAs("1000000000000000.0000 CLF")},
		{"CLFMaxPlusOneUnit", "CLF", 4, "1000000000000000.0001", refused(pointerValue, tooLarge)},
		{"CLFSixteenNinesWouldOverflowUint64", "CLF", 4, "9999999999999999", refused(pointerValue, tooLarge)},
		{"CLFJustBelowMax", "CLF", 4, "999999999999999.9999", parsedAs("999999999999999.9999 CLF")},
		{"UYW", "UYW", 4, "0.0001", parsedAs("0.0001 UYW")},
		{"XAF", "XAF", 0, "5000", parsedAs("5000 XAF")},
		{"XCG", "XCG", 2, "1.25", parsedAs("1.25 XCG")},
	})
}

// TestParseMoneyRefusesDecimalPlaces: decimalPlaces must be the
// currency's minor units, including values that wrap an int32.
func TestParseMoneyRefusesDecimalPlaces(t *testing.T) {
	t.Parallel()
	runParseMoney(t, []parseMoneyCase{
		{"DecimalPlacesTooMany", "USD", 3, "10.50", refused(pointerDecimalPlaces, "must be 2 for USD")},
		{"DecimalPlacesZero", "USD", 0, "10", refused(pointerDecimalPlaces, "must be 2 for USD")},
		{"DecimalPlacesNegative", "USD", -2, "10", refused(pointerDecimalPlaces, "must be 2 for USD")},
		{"DecimalPlacesHuge", "USD", 1 << 40, "10", refused(pointerDecimalPlaces, "must be 2 for USD")},
		{"DecimalPlacesWrapsInt32", "USD", 1<<32 + 2, "10", refused(pointerDecimalPlaces, "must be 2 for USD")},
	})
}

// TestParseMoneyRefusesCodes: the code must be an active ISO 4217 code
// with minor units; the code, then decimalPlaces, are checked before the
// value.
func TestParseMoneyRefusesCodes(t *testing.T) {
	t.Parallel()
	runParseMoney(t, []parseMoneyCase{
		{"UnknownCode", "ABC", 2, "10", refused(pointerCode, "ABC is not an active")},
		{"LowercaseCode", "usd", 2, "10", refused(pointerCode, "three uppercase letters")},
		{"ShortCode", "US", 2, "10", refused(pointerCode, "three uppercase letters")},
		{"LongCode", "USDX", 2, "10", refused(pointerCode, "three uppercase letters")},
		{"EmptyCode", "", 2, "10", refused(pointerCode, "three uppercase letters")},
		{"GoldHasNoMinorUnits", "XAU", 0, "1", refused(pointerCode, "XAU is not an active")},
		{"SDRHasNoMinorUnits", "XDR", 0, "1", refused(pointerCode, "XDR is not an active")},
		{"HistoricANG", "ANG", 2, "1", refused(pointerCode, "ANG is not an active")},
		{"CodeCheckedBeforeValue", "ABC", 9, "-x", refused(pointerCode, "ABC")},
		{"PlacesCheckedBeforeValue", "USD", 9, "-x", refused(pointerDecimalPlaces, "must be 2")},
	})
}

// TestParseMoneyEqualAmountsAreIdentical: every spelling of one amount
// parses to the same value, coefficient and exponent.
func TestParseMoneyEqualAmountsAreIdentical(t *testing.T) {
	t.Parallel()
	groups := []struct {
		code   string
		dp     int64
		values []string
	}{
		{"USD", 2, []string{"7.5", "7.50", "007.50", "7.500000", "07.5"}},
		{"JPY", 0, []string{"100", "100.0", "0100", "100.000"}},
		{"BHD", 3, []string{"1", "1.0", "1.00", "1.000", "1.0000"}},
	}
	for _, g := range groups {
		first, err := parseMoney(g.code, g.dp, g.values[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range g.values[1:] {
			m, err := parseMoney(g.code, g.dp, v)
			if err != nil {
				t.Fatalf("%s %q: %v", g.code, v, err)
			}
			if m.String() != first.String() || m.Value.Exponent() != first.Value.Exponent() ||
				m.Value.Coefficient().Cmp(first.Value.Coefficient()) != 0 {
				t.Errorf("%s %q parsed to %s (exp %d), want identical to %s (exp %d)",
					g.code, v, m, m.Value.Exponent(), first, first.Value.Exponent())
			}
		}
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()

	// amountIs wants the value rendered by FormatAmount as want.
	type amountCheck func(t *testing.T, currency string, v decimal.Decimal, err error)
	amountIs := func(want string) amountCheck {
		return func(t *testing.T, currency string, v decimal.Decimal, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("got error %v, want %s", err, want)
			}
			if got := FormatAmount(currency, v); got != want {
				t.Errorf("FormatAmount = %q, want %q", got, want)
			}
			checkNormalised(t, currency, v)
		}
	}
	// amountRefused wants a *MoneyError with Pointer "" mentioning about.
	amountRefused := func(about string) amountCheck {
		return func(t *testing.T, currency string, v decimal.Decimal, err error) {
			t.Helper()
			checkMoneyError(t, err, "", about)
			if !v.IsZero() {
				t.Errorf("got value %s alongside an error", v)
			}
		}
	}

	cases := []struct {
		name     string
		currency string
		value    string
		signed   bool
		check    amountCheck
	}{
		{"Unsigned", "USD", "10.5", false, amountIs("10.50")},
		{"SignedPositive", "USD", "10.5", true, amountIs("10.50")},
		{"SignedNegative", "USD", "-10.5", true, amountIs("-10.50")},
		{"NegativeWhenUnsigned", "USD", "-10.5", false, amountRefused("no sign")},
		{"PlusWhenSigned", "USD", "+10.5", true, amountRefused("optional leading '-'")},
		{"DoubleMinus", "USD", "--1", true, amountRefused("optional leading '-'")},
		{"MinusAlone", "USD", "-", true, amountRefused("optional leading '-'")},
		{"TrailingMinus", "USD", "1-", true, amountRefused("optional leading '-'")},
		{"MinusSpace", "USD", "- 1", true, amountRefused("optional leading '-'")},
		{"ZeroUnsigned", "USD", "0", false, amountRefused("greater than zero")},
		{"ZeroSigned", "USD", "0", true, amountRefused("must not be zero")},
		{"NegativeZero", "USD", "-0.00", true, amountRefused("must not be zero")},
		{"NegativeMax", "USD", "-1000000000000000", true, amountIs("-1000000000000000.00")},
		{"NegativePastMax", "USD", "-1000000000000000.01", true, amountRefused("at most 1000000000000000")},
		{"PastMax", "USD", "1000000000000000.01", false, amountRefused("at most 1000000000000000")},
		{"JPYNegative", "JPY", "-100.0", true, amountIs("-100")},
		{"JPYFraction", "JPY", "-100.5", true, amountRefused("0 decimal places")},
		{"BHD", "BHD", "1", false, amountIs("1.000")},
		{"CLFNegative", "CLF", "-0.0001", true, amountIs("-0.0001")},
		{"Exponent", "USD", "1e3", true, amountRefused("optional leading '-'")},
		{"Long", "USD", "-" + strings.Repeat("9", 100), true, amountRefused("longer than 64")},
		{"UnknownCurrency", "ABC", "1", false, amountRefused("ABC is not an active")},
		{"LowercaseCurrency", "usd", "1", true, amountRefused("three uppercase letters")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := ParseAmount(tc.currency, tc.value, tc.signed)
			tc.check(t, tc.currency, v, err)
		})
	}
}

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		currency string
		value    decimal.Decimal
		want     string
	}{
		{"USDPadsToTwo", "USD", decimal.RequireFromString("10.5"), "10.50"},
		{"USDInteger", "USD", decimal.New(10, 0), "10.00"},
		{"USDPositiveExponent", "USD", decimal.New(1, 3), "1000.00"},
		{"USDExtraZerosDropped", "USD", decimal.RequireFromString("10.5000"), "10.50"},
		{"USDNegative", "USD", decimal.RequireFromString("-3.2"), "-3.20"},
		{"USDZero", "USD", decimal.Zero, "0.00"},
		{"USDMax", "USD", maxValue, "1000000000000000.00"},
		{"JPY", "JPY", decimal.New(100, 0), "100"},
		{"JPYFromOnePlace", "JPY", decimal.RequireFromString("100.0"), "100"},
		{"BHD", "BHD", decimal.New(1, 0), "1.000"},
		{"CLF", "CLF", decimal.RequireFromString("1.23"), "1.2300"},
		{"NeverRoundsUp", "USD", decimal.RequireFromString("10.505"), "10.505"},
		{"NeverRoundsDown", "JPY", decimal.RequireFromString("100.4"), "100.4"},
		{"UnknownCurrencyInFull", "ABC", decimal.RequireFromString("1.50"), "1.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := FormatAmount(tc.currency, tc.value); got != tc.want {
				t.Errorf("FormatAmount(%s, %s) = %q, want %q", tc.currency, tc.value, got, tc.want)
			}
		})
	}

	t.Run("MoneyString", func(t *testing.T) {
		t.Parallel()
		m := Money{Currency: "USD", Value: decimal.RequireFromString("10.5")}
		if got := m.String(); got != "10.50 USD" {
			t.Errorf("String() = %q, want %q", got, "10.50 USD")
		}
	})
}

func TestMoneyError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  *MoneyError
		want string
	}{
		{&MoneyError{Pointer: "/value", Detail: "value must be greater than zero"}, `invalid amount at "/value": value must be greater than zero`},
		{&MoneyError{Detail: "value must not be zero"}, "invalid amount: value must not be zero"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// mustParse is parseMoney of a valid amount.
func mustParse(t *testing.T, code string, dp int64, value string) Money {
	t.Helper()
	m, err := parseMoney(code, dp, value)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMoneyMarshal: Money marshals to the wire's shape with exactly its
// currency's minor units, and refuses what it cannot render exactly.
func TestMoneyMarshal(t *testing.T) {
	t.Parallel()
	t.Run("MarshalsWireShape", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			m    Money
			want string
		}{
			{mustParse(t, "USD", 2, "10.5"), `{"currency":{"code":"USD","decimalPlaces":2},"value":"10.50"}`},
			{mustParse(t, "JPY", 0, "100"), `{"currency":{"code":"JPY","decimalPlaces":0},"value":"100"}`},
			{mustParse(t, "BHD", 3, "1"), `{"currency":{"code":"BHD","decimalPlaces":3},"value":"1.000"}`},
			// Not normalised, but representable: still rendered canonically.
			{Money{Currency: "USD", Value: decimal.RequireFromString("7.5000")}, `{"currency":{"code":"USD","decimalPlaces":2},"value":"7.50"}`},
		}
		for _, tc := range cases {
			got, err := json.Marshal(tc.m)
			if err != nil {
				t.Fatalf("Marshal(%v): %v", tc.m, err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal(%v) = %s, want %s", tc.m, got, tc.want)
			}
		}
	})
	t.Run("MarshalRefusesWhatItCannotRenderExactly", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name    string
			m       Money
			pointer string
		}{
			{"UnknownCurrency", Money{Currency: "ABC", Value: decimal.New(1, 0)}, pointerCode},
			{"ZeroMoney", Money{}, pointerCode},
			{"SubCent", Money{Currency: "USD", Value: decimal.RequireFromString("10.505")}, pointerValue},
		}
		for _, tc := range cases {
			_, err := json.Marshal(tc.m)
			var me *MoneyError
			if !errors.As(err, &me) || me.Pointer != tc.pointer {
				t.Errorf("%s: Marshal error = %v, want *MoneyError at %q", tc.name, err, tc.pointer)
			}
		}
	})
}

// TestMoneyRoundTrips: what Money marshals, it unmarshals to the same
// currency, value and exponent.
func TestMoneyRoundTrips(t *testing.T) {
	t.Parallel()
	for _, m := range []Money{
		mustParse(t, "USD", 2, "10.5"),
		mustParse(t, "USD", 2, "1000000000000000"),
		mustParse(t, "JPY", 0, "1"),
		mustParse(t, "CLF", 4, "0.0001"),
		mustParse(t, "KWD", 3, "999.999"),
	} {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Money
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		if back.Currency != m.Currency || !back.Value.Equal(m.Value) || back.Value.Exponent() != m.Value.Exponent() {
			t.Errorf("round trip of %v gave %v (exp %d)", m, back, back.Value.Exponent())
		}
	}
}

// TestMoneyUnmarshal: the wire's money object is decoded as contract §2
// says, each refusal at the pointer of the member at fault.
func TestMoneyUnmarshal(t *testing.T) {
	t.Parallel()
	const usd = `"currency":{"code":"USD","decimalPlaces":2}`
	cases := []struct {
		name  string
		json  string
		check moneyCheck
	}{
		{"Valid", `{` + usd + `,"value":"10.50"}`, parsedAs("10.50 USD")},
		{"InformationalFieldsIgnored", `{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840","name":"US Dollar"},"value":"10.5"}`, parsedAs("10.50 USD")},
		{"UnknownKeysIgnored", `{` + usd + `,"value":"1","extra":[1,2]}`, parsedAs("1.00 USD")},
		{"Whitespace", " {\n" + usd + ` , "value" : "1" } `, parsedAs("1.00 USD")},
		{"ValueTrailingZeros", `{` + usd + `,"value":"10.500"}`, parsedAs("10.50 USD")},
		{"JPY", `{"currency":{"code":"JPY","decimalPlaces":0},"value":"100.0"}`, parsedAs("100 JPY")},

		{"ValueNumber", `{` + usd + `,"value":10.5}`, refused(pointerValue, "must be a JSON string")},
		{"ValueNull", `{` + usd + `,"value":null}`, refused(pointerValue, "required")},
		{"ValueMissing", `{` + usd + `}`, refused(pointerValue, "required")},
		{"ValueKeyIsCaseSensitive", `{` + usd + `,"Value":"10.50"}`, refused(pointerValue, "required")},
		{"ValueSubCent", `{` + usd + `,"value":"10.505"}`, refused(pointerValue, "exactly representable")},
		{"ValueZero", `{` + usd + `,"value":"0.00"}`, refused(pointerValue, "greater than zero")},
		{"ValueNegative", `{` + usd + `,"value":"-1"}`, refused(pointerValue, "plain decimal")},

		{"DecimalPlacesFloat", `{"currency":{"code":"USD","decimalPlaces":2.5},"value":"1"}`, refused(pointerDecimalPlaces, "integer")},
		{"DecimalPlacesFloatWhole", `{"currency":{"code":"USD","decimalPlaces":2.0},"value":"1"}`, refused(pointerDecimalPlaces, "integer")},
		{"DecimalPlacesExponent", `{"currency":{"code":"USD","decimalPlaces":2e0},"value":"1"}`, refused(pointerDecimalPlaces, "integer")},
		{"DecimalPlacesString", `{"currency":{"code":"USD","decimalPlaces":"2"},"value":"1"}`, refused(pointerDecimalPlaces, "integer")},
		{"DecimalPlacesOverflow", `{"currency":{"code":"USD","decimalPlaces":99999999999999999999},"value":"1"}`, refused(pointerDecimalPlaces, "integer")},
		{"DecimalPlacesNull", `{"currency":{"code":"USD","decimalPlaces":null},"value":"1"}`, refused(pointerDecimalPlaces, "required")},
		{"DecimalPlacesMissing", `{"currency":{"code":"USD"},"value":"1"}`, refused(pointerDecimalPlaces, "required")},
		{"DecimalPlacesMismatch", `{"currency":{"code":"USD","decimalPlaces":3},"value":"1"}`, refused(pointerDecimalPlaces, "must be 2 for USD")},
		{"DecimalPlacesNegative", `{"currency":{"code":"USD","decimalPlaces":-2},"value":"1"}`, refused(pointerDecimalPlaces, "must be 2 for USD")},

		{"CodeMissing", `{"currency":{"decimalPlaces":2},"value":"1"}`, refused(pointerCode, "required")},
		{"CodeNumber", `{"currency":{"code":840,"decimalPlaces":2},"value":"1"}`, refused(pointerCode, "must be a JSON string")},
		{"CodeLowercase", `{"currency":{"code":"usd","decimalPlaces":2},"value":"1"}`, refused(pointerCode, "three uppercase letters")},
		{"CodeUnknown", `{"currency":{"code":"ABC","decimalPlaces":2},"value":"1"}`, refused(pointerCode, "ABC is not an active")},

		{"CurrencyMissing", `{"value":"1"}`, refused(pointerCurrency, "required")},
		{"CurrencyNull", `{"currency":null,"value":"1"}`, refused(pointerCurrency, "required")},
		{"CurrencyString", `{"currency":"USD","value":"1"}`, refused(pointerCurrency, "must be an object")},
		{"CurrencyArray", `{"currency":[],"value":"1"}`, refused(pointerCurrency, "must be an object")},

		{"EscapedMemberNames", `{"curr\u0065ncy":{"c\u006fde":"USD","decimalPlaces":2},"v\u0061lue":"1"}`, parsedAs("1.00 USD")},
		{"LastOfTwoMembersWins", `{` + usd + `,"value":"1","value":"2"}`, parsedAs("2.00 USD")},
		{"ValueLoneSurrogate", `{` + usd + `,"value":"1\ud800"}`, refused(pointerValue, "must be a JSON string")},
		{"CodeInvalidUTF8", "{\"currency\":{\"code\":\"US\xff\",\"decimalPlaces\":2},\"value\":\"1\"}", refused(pointerCode, "must be a JSON string")},
		{"Truncated", `{` + usd + `,"value":"1"`, refused("", "must be a JSON object")},
		{"TrailingGarbage", `{` + usd + `,"value":"1"} x`, refused("", "must be a JSON object")},
		{"Null", `null`, refused("", "must be a JSON object")},
		{"Array", `[]`, refused("", "must be a JSON object")},
		{"String", `"10.50 USD"`, refused("", "must be a JSON object")},
		{"Number", `10.5`, refused("", "must be a JSON object")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m Money
			err := m.UnmarshalJSON([]byte(tc.json))
			tc.check(t, m, err)
		})
	}
}

// TestMoneyUnmarshalFailure: a refused amount leaves the Money as it was,
// and its error's pointer is relative to the Money, for the caller to
// prefix.
func TestMoneyUnmarshalFailure(t *testing.T) {
	t.Parallel()
	t.Run("ErrorUnchangedOnFailure", func(t *testing.T) {
		t.Parallel()
		m := mustParse(t, "USD", 2, "1")
		if err := json.Unmarshal([]byte(`{"currency":{"code":"USD","decimalPlaces":2},"value":"0"}`), &m); err == nil {
			t.Fatal("zero value accepted")
		}
		if m.String() != "1.00 USD" {
			t.Errorf("m changed to %v on a failed Unmarshal", m)
		}
	})
	t.Run("NestedErrorKeepsRelativePointer", func(t *testing.T) {
		t.Parallel()
		var req struct {
			Amount Money `json:"amount"`
		}
		err := json.Unmarshal([]byte(`{"amount":{"currency":{"code":"USD","decimalPlaces":2},"value":10}}`), &req)
		var me *MoneyError
		if !errors.As(err, &me) {
			t.Fatalf("got %v (%T), want a *MoneyError", err, err)
		}
		if got := "/amount" + me.Pointer; got != "/amount/value" {
			t.Errorf("prefixed pointer = %q, want /amount/value", got)
		}
	})
}

// valuePattern is contract §2.2's value pattern. The fuzz targets judge every
// input with it and decimal.NewFromString, a path independent of parseValue.
var valuePattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// oracleValue says whether s (unsigned, without '-') is acceptable in a
// currency with places minor units, and its value, by contract §2.2 and the
// documented length cap.
func oracleValue(t *testing.T, s string, places int32, signed bool) (decimal.Decimal, bool) {
	t.Helper()
	if len(s) > maxValueLen {
		return decimal.Decimal{}, false
	}
	neg := false
	if signed && strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if !valuePattern.MatchString(s) {
		return decimal.Decimal{}, false
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("decimal.NewFromString(%q) failed on a value matching the pattern: %v", s, err)
	}
	if !d.IsPositive() || d.Cmp(maxValue) > 0 || !d.Equal(d.Truncate(places)) {
		return decimal.Decimal{}, false
	}
	if neg {
		d = d.Neg()
	}
	return d, true
}

// checkAcceptedAmount checks the invariants of an accepted value and that its
// formatted form parses back to the same value.
func checkAcceptedAmount(t *testing.T, currency string, v decimal.Decimal, signed bool) {
	t.Helper()
	places, _ := MinorUnits(currency)
	if v.Exponent() != -places {
		t.Fatalf("exponent %d, want %d", v.Exponent(), -places)
	}
	if v.IsZero() || (!signed && !v.IsPositive()) || v.Abs().Cmp(maxValue) > 0 {
		t.Fatalf("accepted value %s outside the allowed range", v)
	}
	formatted := FormatAmount(currency, v)
	again, err := ParseAmount(currency, formatted, signed)
	if err != nil {
		t.Fatalf("FormatAmount output %q does not parse again: %v", formatted, err)
	}
	if !again.Equal(v) || FormatAmount(currency, again) != formatted {
		t.Fatalf("re-parse of %q gave %s", formatted, again)
	}
}

// checkRefusal checks the shape of a refusal: a short *MoneyError at the
// pointer expected, not echoing a long input.
func checkRefusal(t *testing.T, err error, pointer, input string) {
	t.Helper()
	var me *MoneyError
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is not a *MoneyError", err, err)
	}
	if me.Pointer != pointer {
		t.Fatalf("Pointer = %q, want %q (detail %q)", me.Pointer, pointer, me.Detail)
	}
	if me.Detail == "" || len(me.Detail) > 200 {
		t.Fatalf("Detail %q empty or too long", me.Detail)
	}
	if len(input) > 8 && strings.Contains(me.Detail, input) {
		t.Fatalf("Detail %q echoes the input", me.Detail)
	}
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []struct {
		code  string
		dp    int64
		value string
	}{
		{"USD", 2, "10.50"}, {"USD", 2, "10.505"}, {"USD", 2, "1000000000000000"},
		{"USD", 2, "1000000000000000.01"}, {"JPY", 0, "100.0"}, {"BHD", 3, "0.001"},
		{"CLF", 4, "1000000000000000.0000"}, {"USD", 2, "0.00"}, {"USD", 2, "1e3"},
		{"usd", 2, "1"}, {"XAU", 0, "1"}, {"USD", 3, "1"}, {"USD", 2, "007.50"},
		{"USD", 2, "١٢"}, {"UYW", 4, "0.0001"}, {"USD", 2, ".5"}, {"USD", 2, "1."},
	} {
		f.Add(s.code, s.dp, s.value)
	}
	f.Fuzz(func(t *testing.T, code string, dp int64, value string) {
		m, err := parseMoney(code, dp, value)

		places, known := MinorUnits(code)
		var want decimal.Decimal
		acceptable := known && dp == int64(places)
		if acceptable {
			want, acceptable = oracleValue(t, value, places, false)
		}

		if err != nil {
			if acceptable {
				t.Fatalf("parseMoney(%q, %d, %q) refused a valid Money: %v", code, dp, value, err)
			}
			pointer := pointerValue
			switch {
			case !known:
				pointer = pointerCode
			case dp != int64(places):
				pointer = pointerDecimalPlaces
			}
			checkRefusal(t, err, pointer, value)
			return
		}
		if !acceptable {
			t.Fatalf("parseMoney(%q, %d, %q) = %v, want a refusal", code, dp, value, m)
		}
		if m.Currency != code || !m.Value.Equal(want) {
			t.Fatalf("parseMoney(%q, %d, %q) = %v, want %s %s", code, dp, value, m, want, code)
		}
		if int64(m.Value.Exponent()) != -dp {
			t.Fatalf("exponent %d, want %d", m.Value.Exponent(), -dp)
		}
		checkAcceptedAmount(t, code, m.Value, false)

		data, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", m, err)
		}
		var back Money
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", data, err)
		}
		if back.String() != m.String() || back.Value.Exponent() != m.Value.Exponent() {
			t.Fatalf("JSON round trip of %v gave %v", m, back)
		}
	})
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []struct {
		currency string
		value    string
		signed   bool
	}{
		{"USD", "10.5", false}, {"USD", "-10.5", true}, {"USD", "-10.5", false},
		{"USD", "-0.00", true}, {"USD", "+1", true}, {"USD", "--1", true},
		{"USD", "-1000000000000000.00", true}, {"USD", "-1000000000000000.01", true},
		{"JPY", "-100.5", true}, {"BHD", "1.0005", false}, {"CLF", "-0.0001", true},
		{"ABC", "1", false}, {"USD", "-", true},
	} {
		f.Add(s.currency, s.value, s.signed)
	}
	f.Fuzz(func(t *testing.T, currency string, value string, signed bool) {
		v, err := ParseAmount(currency, value, signed)

		places, known := MinorUnits(currency)
		var want decimal.Decimal
		acceptable := known
		if acceptable {
			want, acceptable = oracleValue(t, value, places, signed)
		}

		if err != nil {
			if acceptable {
				t.Fatalf("ParseAmount(%q, %q, %v) refused a valid amount: %v", currency, value, signed, err)
			}
			checkRefusal(t, err, "", value)
			return
		}
		if !acceptable {
			t.Fatalf("ParseAmount(%q, %q, %v) = %s, want a refusal", currency, value, signed, v)
		}
		if !v.Equal(want) {
			t.Fatalf("ParseAmount(%q, %q, %v) = %s, want %s", currency, value, signed, v, want)
		}
		checkAcceptedAmount(t, currency, v, signed)
	})
}

// FuzzMoneyJSON checks Money.UnmarshalJSON, a member walk, against an
// independent oracle: encoding/json's decoding into maps, which the walk
// replaced. On input whose strings are all exact (strictjson.Check with
// duplicates allowed by removing them from the comparison), both give the
// same Money or the same error pointer.
func FuzzMoneyJSON(f *testing.F) {
	for _, s := range []string{
		`{"currency":{"code":"USD","decimalPlaces":2},"value":"10.50"}`,
		`{"currency":{"code":"JPY","decimalPlaces":0},"value":"100"}`,
		`{"currency":{"code":"USD","decimalPlaces":2.0},"value":"1"}`,
		`{"currency":{"code":"USD","decimalPlaces":2},"value":10.5}`,
		`{"currency":"USD","value":"1"}`, `{"value":"1"}`, `null`, `[]`, `{"currency":null}`,
		`{"curr\u0065ncy":{"code":"USD","decimalPlaces":2},"value":"1"}`,
		`{"currency":{"code":"USD","decimalPlaces":2,"name":{"a":[1,"}"]}},"value":"1"}`,
		` { "currency" : { "code" : "BHD" , "decimalPlaces" : 3 } , "value" : "0.001" } `,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if strictjson.Check([]byte(data), strictjson.Options{}) != nil {
			return // inexact strings or a member named twice: the oracle repairs what the walk refuses
		}
		var got Money
		gotErr := got.UnmarshalJSON([]byte(data))
		want, wantErr := oracleMoneyJSON([]byte(data))
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Fatalf("UnmarshalJSON(%q) = %v, %v; oracle %v, %v", data, got, gotErr, want, wantErr)
		case gotErr == nil && (got.Currency != want.Currency || !got.Value.Equal(want.Value)):
			t.Fatalf("UnmarshalJSON(%q) = %v; oracle %v", data, got, want)
		case gotErr != nil && gotErr.(*MoneyError).Pointer != wantErr.(*MoneyError).Pointer:
			t.Fatalf("UnmarshalJSON(%q) error at %q (%v); oracle at %q (%v)", data,
				gotErr.(*MoneyError).Pointer, gotErr, wantErr.(*MoneyError).Pointer, wantErr)
		}
	})
}

// oracleMoneyJSON decodes the wire shape through encoding/json's maps.
func oracleMoneyJSON(data []byte) (Money, error) {
	var obj map[string]json.RawMessage
	if isNull(data) || json.Unmarshal(data, &obj) != nil {
		return Money{}, &MoneyError{Pointer: ""}
	}
	rawCur, ok := obj["currency"]
	if !ok || isNull(rawCur) {
		return Money{}, &MoneyError{Pointer: pointerCurrency}
	}
	var cur map[string]json.RawMessage
	if json.Unmarshal(rawCur, &cur) != nil {
		return Money{}, &MoneyError{Pointer: pointerCurrency}
	}
	str := func(raw json.RawMessage, pointer string) (string, error) {
		var s string
		if raw == nil || isNull(raw) || json.Unmarshal(raw, &s) != nil {
			return "", &MoneyError{Pointer: pointer}
		}
		return s, nil
	}
	code, err := str(cur["code"], pointerCode)
	if err != nil {
		return Money{}, err
	}
	rawDP, ok := cur["decimalPlaces"]
	if !ok || isNull(rawDP) {
		return Money{}, &MoneyError{Pointer: pointerDecimalPlaces}
	}
	dp, err := strconv.ParseInt(strings.TrimSpace(string(rawDP)), 10, 64)
	if err != nil {
		return Money{}, &MoneyError{Pointer: pointerDecimalPlaces}
	}
	value, err := str(obj["value"], pointerValue)
	if err != nil {
		return Money{}, err
	}
	return parseMoney(code, dp, value)
}
