package ledger

import (
	"regexp"
	"testing"
)

// codePattern is contract §2.2's pattern, checked by regexp as a second
// path next to isCurrencyCode.
var codePattern = regexp.MustCompile(`^[A-Z]{3}$`)

// TestCurrencyTable: the table of ISO 4217 codes is complete enough and
// every entry is a code with 0 to 4 minor units.
func TestCurrencyTable(t *testing.T) {
	t.Parallel()
	t.Run("TableHasAtLeast150Codes", func(t *testing.T) {
		t.Parallel()
		if n := len(minorUnits); n < 150 {
			t.Fatalf("table has %d codes, want at least 150 (ISO 4217 list one has about 165 with defined minor units)", n)
		}
	})

	t.Run("EveryEntryIsThreeUppercaseLettersWithMinorUnitsZeroToFour", func(t *testing.T) {
		t.Parallel()
		for code, units := range minorUnits {
			if !codePattern.MatchString(code) {
				t.Errorf("code %q does not match ^[A-Z]{3}$", code)
			}
			if units < 0 || units > 4 {
				t.Errorf("%s has %d minor units, want 0..4", code, units)
			}
			if !ValidCurrency(code) {
				t.Errorf("ValidCurrency(%q) = false for a table entry", code)
			}
		}
	})
}

// TestCurrencyCodes: the active codes a bank meets are there with their
// minor units; codes without minor units (metals, SDR, testing) and
// historic ones are not.
func TestCurrencyCodes(t *testing.T) {
	t.Parallel()
	t.Run("IncludesNamedCodesWithTheirMinorUnits", func(t *testing.T) {
		t.Parallel()
		want := map[string]int32{
			"USD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "JPY": 0, "KRW": 0, "ISK": 0, "VND": 0, "CLP": 0,
			"BHD": 3, "KWD": 3, "JOD": 3, "OMR": 3, "TND": 3, "LYD": 3, "IQD": 3,
			"CLF": 4, "UYW": 4,
			"VES": 2, "VED": 2, "ZWG": 2, "SLE": 2, "XCG": 2,
			"XAF": 0, "XOF": 0, "XPF": 0, "XCD": 2,
			// Fund codes with defined minor units are included.
			"USN": 2, "BOV": 2, "CHE": 2, "CHW": 2, "COU": 2, "MXV": 2, "UYI": 0, "XAD": 2,
		}
		for code, units := range want {
			got, ok := MinorUnits(code)
			if !ok || got != units {
				t.Errorf("MinorUnits(%q) = %d, %v; want %d, true", code, got, ok, units)
			}
		}
	})

	t.Run("ExcludesCodesWithoutMinorUnitsAndHistoricCodes", func(t *testing.T) {
		t.Parallel()
		excluded := []string{
			// Minor unit "N.A." in ISO 4217.
			"XAG", "XAU", "XPD", "XPT", "XBA", "XBB", "XBC", "XBD", "XDR", "XSU", "XUA", "XTS", "XXX",
			// Moved to the historic list.
			"ANG", "BGN", "CUC", "HRK", "SLL", "VEF", "ZWL", "LTL", "EEK",
		}
		for _, code := range excluded {
			if units, ok := MinorUnits(code); ok {
				t.Errorf("MinorUnits(%q) = %d, true; want it excluded", code, units)
			}
			if ValidCurrency(code) {
				t.Errorf("ValidCurrency(%q) = true; want false", code)
			}
		}
	})
}

// TestValidCurrency: only an exact active code is a currency, and an
// unknown one has no minor units.
func TestValidCurrency(t *testing.T) {
	t.Parallel()
	t.Run("ValidCurrency", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			code string
			want bool
		}{
			{"USD", true},
			{"JPY", true},
			{"usd", false},
			{"Usd", false},
			{"US", false},
			{"USDD", false},
			{"", false},
			{" USD", false},
			{"USD ", false},
			{"ABC", false},
			{"ＵＳＤ", false}, // fullwidth letters
			{"US\x00", false},
		}
		for _, tc := range cases {
			if got := ValidCurrency(tc.code); got != tc.want {
				t.Errorf("ValidCurrency(%q) = %v, want %v", tc.code, got, tc.want)
			}
			_, known := MinorUnits(tc.code)
			if known != tc.want {
				t.Errorf("MinorUnits(%q) known = %v, want %v", tc.code, known, tc.want)
			}
		}
	})

	t.Run("UnknownCodeHasZeroMinorUnits", func(t *testing.T) {
		t.Parallel()
		if units, ok := MinorUnits("ABC"); units != 0 || ok {
			t.Fatalf("MinorUnits(ABC) = %d, %v; want 0, false", units, ok)
		}
	})
}

// TestCurrencyLookupDoesNotAllocate is deliberately not parallel:
// testing.AllocsPerRun counts every goroutine's allocations, so it must run
// while no other test does (parallel top-level tests wait until sequential
// ones finish).
func TestCurrencyLookupDoesNotAllocate(t *testing.T) {
	codes := []string{"USD", "usd", "XAU", "ABC", "", "TOOLONG", "BHD"}
	allocs := testing.AllocsPerRun(200, func() {
		for _, c := range codes {
			MinorUnits(c)
			ValidCurrency(c)
		}
	})
	if allocs != 0 {
		t.Fatalf("MinorUnits/ValidCurrency allocate %.1f times per run, want 0", allocs)
	}
}
