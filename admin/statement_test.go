package admin_test

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// statementOf serves the statement of accountID over all time in format
// and returns its body, after holding its status to 200.
func statementOf(t *testing.T, api *admin.Handler, accountID, format, period string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	admintest.Handler(t, api).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/accounts/"+accountID+"/statement?"+period+"&format="+format, nil))
	if rec.Code != 200 {
		t.Fatalf("statement: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// adjusted posts an adjustment of amount with key and memo to accountID.
func adjusted(t *testing.T, db *store.DB, accountID, amount, key, memo string) {
	t.Helper()
	if _, err := db.Adjust(context.Background(), accountID, decimal.RequireFromString(amount), key, memo); err != nil {
		t.Fatal(err)
	}
}

// TestCSVStatementKeepsLineBreaks: a memo's CR, LF and CRLF come out of
// a CSV statement byte for byte inside its quoted field, rows still end
// in CRLF.
func TestCSVStatementKeepsLineBreaks(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	a := storetest.Account(t, db, storetest.AccountOpts{})
	memo := "one\ntwo\rthree\r\nfour \"quoted\", five"
	adjusted(t, db, a.AccountID, "2.50", "lines-1", memo)
	body := statementOf(t, admin.New(admin.Config{DB: db}), a.AccountID, "csv", "from=2000-01-01&to=2100-01-01")
	quoted := `"one` + "\n" + `two` + "\r" + `three` + "\r\n" + `four ""quoted"", five"`
	if !strings.Contains(body, ","+quoted+",") {
		t.Fatalf("the memo is not kept byte for byte in its quoted field:\n%q", body)
	}
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[2][6] != strings.ReplaceAll(memo, "\r\n", "\n") || rows[2][9] != "2.50" {
		t.Fatalf("rows %q", rows)
	}
	if strings.Count(body, "\r\n") != 4+1 { // four row ends and the memo's own CRLF
		t.Fatalf("row ends: %q", body)
	}
}

// TestCSVStatementNeutralisesFormulas: text cells a spreadsheet would
// evaluate (=, +, -, @, TAB, CR first) get OWASP's leading apostrophe;
// other text and every amount, negative ones included, are untouched.
func TestCSVStatementNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	a := storetest.Account(t, db, storetest.AccountOpts{AccountID: "-acct"})
	memos := map[string]string{
		`=HYPERLINK("http://x.example","click")`: `'=HYPERLINK("http://x.example","click")`,
		"+cmd|' /C calc'!A0":                     "'+cmd|' /C calc'!A0",
		"-2+3":                                   "'-2+3",
		"@SUM(1+1)":                              "'@SUM(1+1)",
		"\t=1":                                   "'\t=1",
		"\r=1":                                   "'\r=1",
		"plain = text":                           "plain = text",
		"'already":                               "'already",
	}
	keys := map[string]string{}
	i := 0
	for memo := range memos {
		i++
		key := "=k" + string(rune('a'+i))
		keys[memo] = key
		adjusted(t, db, a.AccountID, "1.25", key, memo)
	}
	adjusted(t, db, a.AccountID, "-3.00", "plain-key", "debit")
	body := statementOf(t, admin.New(admin.Config{DB: db}), a.AccountID, "csv", "from=2000-01-01&to=2100-01-01")
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, row := range rows[1:] {
		if row[1] != "'-acct" {
			t.Fatalf("accountID cell %q", row[1])
		}
		if row[0] != "entry" {
			continue
		}
		if row[6] == "debit" {
			if row[9] != "-3.00" || row[5] != "plain-key" {
				t.Fatalf("debit row %q: amounts and plain text must be untouched", row)
			}
			continue
		}
		for memo, want := range memos {
			if row[6] == want {
				seen++
				if row[5] != "'"+keys[memo] || row[9] != "1.25" {
					t.Fatalf("row %q: reference or amount", row)
				}
			}
		}
	}
	if seen != len(memos) {
		t.Fatalf("%d of %d memos as expected:\n%q", seen, len(memos), rows)
	}
}

// TestStatementOfAPeriodNotOver: a period that ends after the statement
// is made is marked: camt.053's balances dated after that moment are
// interim booked (ITBD) at it and AddtlStmtInf says so; CSV's rows are
// "interim" rows at it. A period already over has booked balances only.
func TestStatementOfAPeriodNotOver(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	a := storetest.Account(t, db, storetest.AccountOpts{Funds: "7.00"})
	now := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	api := admin.New(admin.Config{DB: db, Now: func() time.Time { return now }})
	stampNow := now.Format(adminapi.TimestampFormat)

	body := statementOf(t, api, a.AccountID, "camt053", "from=2000-01-01&to=2031-01-01")
	checkCamtOrder(t, []byte(body))
	var d camtDoc
	if err := xml.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	bal := d.Stmt.Bal
	if len(bal) != 2 || bal[0].Code != "OPBD" || bal[0].At != "2000-01-01T00:00:00.000000Z" || bal[1].Code != "ITBD" || bal[1].At != stampNow ||
		bal[1].Amt.Value != "7.00" || !strings.HasPrefix(d.Stmt.Info, "PROVISIONAL: the period ends 2031-01-01T00:00:00.000000Z") {
		t.Fatalf("balances %+v, note %q", bal, d.Stmt.Info)
	}
	csvBody := statementOf(t, api, a.AccountID, "csv", "from=2000-01-01&to=2031-01-01")
	if !strings.Contains(csvBody, "\r\nopening,"+a.AccountID+",2000-01-01T00:00:00.000000Z,") ||
		!strings.HasSuffix(csvBody, "\r\ninterim,"+a.AccountID+","+stampNow+",,,,,,USD,,7.00\r\n") {
		t.Fatalf("CSV %q", csvBody)
	}

	// Wholly in the future: both balances are the one booked now.
	body = statementOf(t, api, a.AccountID, "camt053", "from=2031-01-01&to=2032-01-01")
	d = camtDoc{}
	if err := xml.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if bal := d.Stmt.Bal; len(bal) != 2 || bal[0].Code != "ITBD" || bal[1].Code != "ITBD" || bal[0].At != stampNow || d.Stmt.Info == "" {
		t.Fatalf("balances %+v", bal)
	}

	// Over: booked balances, no note.
	body = statementOf(t, api, a.AccountID, "camt053", "from=2000-01-01&to=2030-06-01")
	d = camtDoc{}
	if err := xml.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if bal := d.Stmt.Bal; len(bal) != 2 || bal[0].Code != "OPBD" || bal[1].Code != "CLBD" || bal[1].At != "2030-06-01T00:00:00.000000Z" || d.Stmt.Info != "" {
		t.Fatalf("balances %+v, note %q", bal, d.Stmt.Info)
	}
	csvBody = statementOf(t, api, a.AccountID, "csv", "from=2000-01-01&to=2030-06-01")
	if strings.Contains(csvBody, "interim") || !strings.HasSuffix(csvBody, "\r\nclosing,"+a.AccountID+",2030-06-01T00:00:00.000000Z,,,,,,USD,,7.00\r\n") {
		t.Fatalf("CSV %q", csvBody)
	}
}

// TestStatementFromTheZeroTime: from (or to) 0001-01-01, which the
// database's reader takes for "not given", is refused saying what is
// wrong with it, not that it is missing.
func TestStatementFromTheZeroTime(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	a := storetest.Account(t, b.db, storetest.AccountOpts{})
	for _, tc := range []struct{ query, pointer string }{
		{"from=0001-01-01&to=2026-01-01", "/from"},
		{"from=0001-01-01T00:00:00Z&to=2026-01-01", "/from"},
		{"from=0001-01-01&to=0001-01-01", "/from"},
	} {
		got := b.do(t, "GET", "/v1/accounts/"+a.AccountID+"/statement?"+tc.query, "")
		got.problem(t, 400, "invalid-request", tc.pointer)
		if strings.Contains(got.raw, "required") || !strings.Contains(got.raw, "after 0001-01-01T00:00:00Z") {
			t.Fatalf("%s: %s", tc.query, got.raw)
		}
	}
	if body := statementOf(t, b.api, a.AccountID, "csv", "from=0001-01-01T00:00:00.000001Z&to=2026-01-01"); !strings.Contains(body, "\r\nopening,"+a.AccountID+",0001-01-01T00:00:00.000001Z,") {
		t.Fatalf("the earliest from: %q", body)
	}
}

// unescapeCamt reverses the escape camt.053 statements mark with
// AddtlNtryInf: \\ is a backslash, \uXXXX the character U+XXXX.
func unescapeCamt(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case i+5 < len(s) && s[i+1] == 'u':
			n, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
			if err != nil {
				t.Fatalf("escape %q", s[i:i+6])
			}
			b.WriteRune(rune(n))
			i += 5
		default:
			t.Fatalf("a lone backslash in %q", s)
		}
	}
	return b.String()
}

// TestCamtStatementKeepsText: camt.053 keeps text XML can carry exactly
// (TAB, CR, LF, CRLF, markup characters, backslashes); an entry whose memo
// or reference holds characters XML 1.0 cannot carry (controls, U+FFFE,
// U+FFFF) is escaped reversibly and marked in AddtlNtryInf, never
// replaced by U+FFFD.
func TestCamtStatementKeepsText(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	a := storetest.Account(t, db, storetest.AccountOpts{})
	plain := "tab\there LF\nCR\rCRLF\r\n back\\slash <b>&amp;</b> ]]> \u00a0\u0085\U0001F4B8 " + strings.Repeat("é", 150)
	odd := "bell\a esc\x1b[31m \ufffe\uffff back\\slash \\u0041 \x01" + strings.Repeat("\x02", 60)
	oddKey := "key\\u\x1f"
	adjusted(t, db, a.AccountID, "1.00", "plain\\key\t", plain)
	adjusted(t, db, a.AccountID, "2.00", oddKey, odd)
	adjusted(t, db, a.AccountID, "3.00", "plain-2", "\\u0041 stays as written")

	body := statementOf(t, admin.New(admin.Config{DB: db}), a.AccountID, "camt053", "from=2000-01-01&to=2100-01-01")
	checkCamtOrder(t, []byte(body))
	if strings.ContainsRune(body, '\uFFFD') {
		t.Fatal("a character became U+FFFD")
	}
	var d camtDoc
	if err := xml.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		memo, reference string
		escaped         bool
	}{
		{plain, "plain\\key\t", false},
		{odd, oddKey, true},
		{"\\u0041 stays as written", "plain-2", false},
	}
	if len(d.Stmt.Ntry) != len(want) {
		t.Fatalf("%d entries", len(d.Stmt.Ntry))
	}
	for i, w := range want {
		n := d.Stmt.Ntry[i]
		memo, reference := strings.Join(n.Ustrd, ""), n.Info
		if w.escaped {
			if n.NtryInfo == "" || !strings.HasPrefix(n.NtryInfo, "ESCAPED:") {
				t.Fatalf("entry %d: escaped without a word: %q", i, n.NtryInfo)
			}
			memo, reference = unescapeCamt(t, memo), unescapeCamt(t, reference)
		} else if n.NtryInfo != "" {
			t.Fatalf("entry %d: AddtlNtryInf %q", i, n.NtryInfo)
		}
		if memo != w.memo || reference != w.reference {
			t.Fatalf("entry %d: memo %q reference %q, want %q %q", i, memo, reference, w.memo, w.reference)
		}
	}
}
