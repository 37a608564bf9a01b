package providertest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/provider/providertest"
)

// TestMoneyJSON: a Money is a decimal, written as a string with its
// currency's places (or more, never rounded), and read back exactly.
func TestMoneyJSON(t *testing.T) {
	t.Parallel()
	usd := providertest.USD("0").Currency
	for _, tc := range []struct {
		m    providertest.Money
		want string
	}{
		{providertest.USD("25.00"), `"25.00"`},
		{providertest.USD("25"), `"25.00"`},
		{providertest.USD("0.5"), `"0.50"`},
		{providertest.Money{Currency: usd, Value: decimal.New(1250, -2)}, `"12.50"`},
		{providertest.Money{Currency: usd, Value: decimal.RequireFromString("10.005")}, `"10.005"`},
	} {
		b, err := json.Marshal(tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"currency":{"code":"USD","decimalPlaces":2,"numericCode":"840"},"value":` + tc.want + `}`; string(b) != want {
			t.Errorf("%v: %s, want %s", tc.m.Value, b, want)
		}
		var back providertest.Money
		if err := json.Unmarshal(b, &back); err != nil || back.Currency != tc.m.Currency || !back.Value.Equal(tc.m.Value) {
			t.Errorf("%s read back as %+v (%v)", b, back, err)
		}
	}
	for _, bad := range []string{`{"value":12.5}`, `{"value":"12,50"}`, `{"value":""}`} {
		var m providertest.Money
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s read as %+v", bad, m)
		}
	}
}

// TestLimitAmountsOnTheWire: a limit amount is kept as a decimal and
// answered with 2 places; a value that is not a plain non-negative decimal
// in cents is a 422 naming it.
func TestLimitAmountsOnTheWire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.register(t, "p1")
	amount := func(v string) string {
		return `{"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":` + v + `}}`
	}
	a := b.do(t, "PUT", "/providers/local/participants/p1/limits", amount(`"70.5"`)).want(t, 200)
	if !strings.Contains(a.body, `"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"70.50"}`) {
		t.Errorf("70.5 answered as %s", a.body)
	}
	if o, _, err := b.srv.Override("local", "p1"); err != nil || !o.WeeklyAmount.Value.Equal(decimal.New(705, -1)) {
		t.Errorf("override %+v %v", o, err)
	}
	for _, bad := range []string{`"-1.00"`, `"1e3"`, `"10.005"`, `"abc"`, `" 1.00"`} {
		a := b.do(t, "PUT", "/providers/local/participants/p1/limits", amount(bad)).want(t, 422)
		if !strings.Contains(a.body, `"pointer":"/weeklyAmount/value"`) {
			t.Errorf("%s: %s", bad, a.body)
		}
	}
	b.do(t, "PUT", "/providers/local/participants/p1/limits", amount(`70.5`)).want(t, 400)
}
