package admin_test

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"net/http/httptest"
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
