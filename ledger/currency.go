package ledger

import (
	"maps"
	"slices"
)

// ISO 4217 minor units.
//
// The table below is ISO 4217 "List One" (current currency and funds codes) as
// published by SIX on 2026-01-01, reduced to the codes whose minor unit is a
// number. Choices, in one place:
//
//   - Codes whose minor unit is "N.A." in ISO 4217 are excluded: XAG, XAU, XPD,
//     XPT (precious metals), XBA, XBB, XBC, XBD (bond market units), XDR (IMF
//     SDR), XSU (Sucre), XUA (ADB unit of account), XTS (testing) and XXX (no
//     currency). With no minor unit there is no decimalPlaces a Money could
//     carry, so the spec's rule "decimalPlaces equals the ISO minor units"
//     cannot be met and such a Money is always refused.
//   - Fund codes with a defined minor unit are included (BOV, CHE, CHW, CLF,
//     COU, MXV, USN, UYI, UYW, XAD): they are active ISO 4217 codes, and
//     whether the service may send them is the service's business, not this
//     table's. Refusing a currency for business reasons belongs to the
//     callback decision, not to Money parsing.
//   - Codes ISO moved to List Three (historic) are excluded even where notes
//     may still be in circulation: ANG (replaced by XCG, 2025), BGN (Bulgaria
//     adopted the euro on 2026-01-01), CUC, HRK, SLL (redenominated 1000:1 to
//     SLE; accepting it would invite thousand-fold mistakes), VEF, ZWL
//     (replaced by ZWG, 2024).
//
// Updating: when ISO publishes an amendment, edit the table and the lists above;
// TestCurrency pins the codes the project relies on.

// minorUnits maps every active ISO 4217 alphabetic code with a defined minor
// unit to that minor unit. It is built once at package initialisation and never
// written afterwards, so concurrent reads are safe; a lookup with a string key
// does not allocate.
var minorUnits = map[string]int32{
	"AED": 2, // UAE Dirham
	"AFN": 2, // Afghani
	"ALL": 2, // Lek
	"AMD": 2, // Armenian Dram
	"AOA": 2, // Kwanza
	"ARS": 2, // Argentine Peso
	"AUD": 2, // Australian Dollar
	"AWG": 2, // Aruban Florin
	"AZN": 2, // Azerbaijan Manat
	"BAM": 2, // Convertible Mark
	"BBD": 2, // Barbados Dollar
	"BDT": 2, // Taka
	"BHD": 3, // Bahraini Dinar
	"BIF": 0, // Burundi Franc
	"BMD": 2, // Bermudian Dollar
	"BND": 2, // Brunei Dollar
	"BOB": 2, // Boliviano
	"BOV": 2, // Mvdol (fund)
	"BRL": 2, // Brazilian Real
	"BSD": 2, // Bahamian Dollar
	"BTN": 2, // Ngultrum
	"BWP": 2, // Pula
	"BYN": 2, // Belarusian Ruble
	"BZD": 2, // Belize Dollar
	"CAD": 2, // Canadian Dollar
	"CDF": 2, // Congolese Franc
	"CHE": 2, // WIR Euro (fund)
	"CHF": 2, // Swiss Franc
	"CHW": 2, // WIR Franc (fund)
	"CLF": 4, // Unidad de Fomento (fund)
	"CLP": 0, // Chilean Peso
	"CNY": 2, // Yuan Renminbi
	"COP": 2, // Colombian Peso
	"COU": 2, // Unidad de Valor Real (fund)
	"CRC": 2, // Costa Rican Colon
	"CUP": 2, // Cuban Peso
	"CVE": 2, // Cabo Verde Escudo
	"CZK": 2, // Czech Koruna
	"DJF": 0, // Djibouti Franc
	"DKK": 2, // Danish Krone
	"DOP": 2, // Dominican Peso
	"DZD": 2, // Algerian Dinar
	"EGP": 2, // Egyptian Pound
	"ERN": 2, // Nakfa
	"ETB": 2, // Ethiopian Birr
	"EUR": 2, // Euro
	"FJD": 2, // Fiji Dollar
	"FKP": 2, // Falkland Islands Pound
	"GBP": 2, // Pound Sterling
	"GEL": 2, // Lari
	"GHS": 2, // Ghana Cedi
	"GIP": 2, // Gibraltar Pound
	"GMD": 2, // Dalasi
	"GNF": 0, // Guinean Franc
	"GTQ": 2, // Quetzal
	"GYD": 2, // Guyana Dollar
	"HKD": 2, // Hong Kong Dollar
	"HNL": 2, // Lempira
	"HTG": 2, // Gourde
	"HUF": 2, // Forint
	"IDR": 2, // Rupiah
	"ILS": 2, // New Israeli Sheqel
	"INR": 2, // Indian Rupee
	"IQD": 3, // Iraqi Dinar
	"IRR": 2, // Iranian Rial
	"ISK": 0, // Iceland Krona
	"JMD": 2, // Jamaican Dollar
	"JOD": 3, // Jordanian Dinar
	"JPY": 0, // Yen
	"KES": 2, // Kenyan Shilling
	"KGS": 2, // Som
	"KHR": 2, // Riel
	"KMF": 0, // Comorian Franc
	"KPW": 2, // North Korean Won
	"KRW": 0, // Won
	"KWD": 3, // Kuwaiti Dinar
	"KYD": 2, // Cayman Islands Dollar
	"KZT": 2, // Tenge
	"LAK": 2, // Lao Kip
	"LBP": 2, // Lebanese Pound
	"LKR": 2, // Sri Lanka Rupee
	"LRD": 2, // Liberian Dollar
	"LSL": 2, // Loti
	"LYD": 3, // Libyan Dinar
	"MAD": 2, // Moroccan Dirham
	"MDL": 2, // Moldovan Leu
	"MGA": 2, // Malagasy Ariary
	"MKD": 2, // Denar
	"MMK": 2, // Kyat
	"MNT": 2, // Tugrik
	"MOP": 2, // Pataca
	"MRU": 2, // Ouguiya
	"MUR": 2, // Mauritius Rupee
	"MVR": 2, // Rufiyaa
	"MWK": 2, // Malawi Kwacha
	"MXN": 2, // Mexican Peso
	"MXV": 2, // Mexican Unidad de Inversion (fund)
	"MYR": 2, // Malaysian Ringgit
	"MZN": 2, // Mozambique Metical
	"NAD": 2, // Namibia Dollar
	"NGN": 2, // Naira
	"NIO": 2, // Cordoba Oro
	"NOK": 2, // Norwegian Krone
	"NPR": 2, // Nepalese Rupee
	"NZD": 2, // New Zealand Dollar
	"OMR": 3, // Rial Omani
	"PAB": 2, // Balboa
	"PEN": 2, // Sol
	"PGK": 2, // Kina
	"PHP": 2, // Philippine Peso
	"PKR": 2, // Pakistan Rupee
	"PLN": 2, // Zloty
	"PYG": 0, // Guarani
	"QAR": 2, // Qatari Rial
	"RON": 2, // Romanian Leu
	"RSD": 2, // Serbian Dinar
	"RUB": 2, // Russian Ruble
	"RWF": 0, // Rwanda Franc
	"SAR": 2, // Saudi Riyal
	"SBD": 2, // Solomon Islands Dollar
	"SCR": 2, // Seychelles Rupee
	"SDG": 2, // Sudanese Pound
	"SEK": 2, // Swedish Krona
	"SGD": 2, // Singapore Dollar
	"SHP": 2, // Saint Helena Pound
	"SLE": 2, // Leone
	"SOS": 2, // Somali Shilling
	"SRD": 2, // Surinam Dollar
	"SSP": 2, // South Sudanese Pound
	"STN": 2, // Dobra
	"SVC": 2, // El Salvador Colon
	"SYP": 2, // Syrian Pound
	"SZL": 2, // Lilangeni
	"THB": 2, // Baht
	"TJS": 2, // Somoni
	"TMT": 2, // Turkmenistan New Manat
	"TND": 3, // Tunisian Dinar
	"TOP": 2, // Pa'anga
	"TRY": 2, // Turkish Lira
	"TTD": 2, // Trinidad and Tobago Dollar
	"TWD": 2, // New Taiwan Dollar
	"TZS": 2, // Tanzanian Shilling
	"UAH": 2, // Hryvnia
	"UGX": 0, // Uganda Shilling
	"USD": 2, // US Dollar
	"USN": 2, // US Dollar (Next day) (fund)
	"UYI": 0, // Uruguay Peso en Unidades Indexadas (fund)
	"UYU": 2, // Peso Uruguayo
	"UYW": 4, // Unidad Previsional (fund)
	"UZS": 2, // Uzbekistan Sum
	"VED": 2, // Bolivar Soberano (digital)
	"VES": 2, // Bolivar Soberano
	"VND": 0, // Dong
	"VUV": 0, // Vatu
	"WST": 2, // Tala
	"XAD": 2, // Arab Accounting Dinar (fund)
	"XAF": 0, // CFA Franc BEAC
	"XCD": 2, // East Caribbean Dollar
	"XCG": 2, // Caribbean Guilder
	"XOF": 0, // CFA Franc BCEAO
	"XPF": 0, // CFP Franc
	"YER": 2, // Yemeni Rial
	"ZAR": 2, // Rand
	"ZMW": 2, // Zambian Kwacha
	"ZWG": 2, // Zimbabwe Gold
}

// MinorUnits reports the ISO 4217 minor units (decimal places) of an active
// currency code, and whether the code is in the table. Codes must be exactly
// three uppercase ASCII letters; anything else, including "usd", is unknown.
// It does not allocate.
func MinorUnits(code string) (int32, bool) {
	u, ok := minorUnits[code]
	return u, ok
}

// ValidCurrency reports whether code matches ^[A-Z]{3}$ and is an active ISO
// 4217 code with a defined minor unit (see the table's notes for what is left
// out). It does not allocate.
func ValidCurrency(code string) bool {
	if !isCurrencyCode(code) {
		return false
	}
	_, ok := minorUnits[code]
	return ok
}

// isCurrencyCode reports whether s matches ^[A-Z]{3}$.
func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// Currencies returns every code MinorUnits knows, sorted: the currencies
// an account may be opened in (the admin API's OpenAPI document lists the
// same).
func Currencies() []string {
	return slices.Sorted(maps.Keys(minorUnits))
}
