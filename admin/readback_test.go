package admin_test

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// readback is the admin API over a database with a random workload on it,
// and the workload's record.
type readback struct {
	api *admin.Handler
	db  *store.DB
	w   *storetest.Workload
}

// longID is an account whose ID camt.053 cannot carry (over 34 characters).
const longID = "an-account-id-longer-than-thirty-four-characters"

func setupReadback(t *testing.T, seed uint64) readback {
	t.Helper()
	_, pool := storetest.DB(t)
	clock := storetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	db := store.Wrap(pool, clock.Now)
	w := storetest.RunWorkload(t, db, clock, storetest.WorkloadOpts{Seed: seed, Ops: 120})
	storetest.Account(t, db, storetest.AccountOpts{AccountID: longID, Funds: "1"})
	return readback{api: admin.New(admin.Config{DB: db}), db: db, w: w}
}

// get serves GET target and returns the recorder, after holding its
// status to the OpenAPI document.
func (b readback) get(t *testing.T, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	admintest.Handler(t, b.api).ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	documented(t, "GET", target, rec.Code, rec.Body.Bytes())
	return rec
}

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	return v.Encode()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// window picks a random period among the workload's times, bounds falling
// on writes and between them.
func window(rng *rand.Rand, w *storetest.Workload) (time.Time, time.Time) {
	for {
		from := w.Times[rng.IntN(len(w.Times))].Add(time.Duration(rng.IntN(3)-1) * time.Microsecond)
		to := w.Times[rng.IntN(len(w.Times))]
		if rng.IntN(4) == 0 {
			to = w.End
		}
		if to.After(from) {
			return from, to
		}
	}
}

func wantAmount(t *testing.T, what string, got adminapi.Amount, currency string, want decimal.Decimal) {
	t.Helper()
	// Exactly the currency's places: the text, not only the value.
	if string(got) != ledger.FormatAmount(currency, want) {
		t.Fatalf("%s: amount %q, want %s %s", what, got, ledger.FormatAmount(currency, want), currency)
	}
}

func decodeJSON[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("answer %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields() // the wire types carry every member the server writes
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %T: %v", v, err)
	}
	return v
}

// TestReadbackAPI reads random workloads back through the handlers: the
// listings page through exactly the recorded entries, with amounts in the
// currency's places; statements in both formats open at the balance before
// their period and close at the balance at its end, opening plus entries
// being closing, to the last minor unit.
func TestReadbackAPI(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{11, 12} {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			t.Parallel()
			b := setupReadback(t, seed)
			stream := uint64(0)
			newRand := func() *rand.Rand { stream++; return rand.New(rand.NewPCG(seed, stream)) }

			t.Run("Accounts", func(t *testing.T) { readbackAccounts(t, b, newRand()) })

			t.Run("HoldsOfAnAccount", func(t *testing.T) { readbackHoldsOfAnAccount(t, b, newRand()) })

			t.Run("EntriesOfAnAccount", func(t *testing.T) { readbackEntriesOfAnAccount(t, b, newRand()) })

			t.Run("TransactionsBalance", func(t *testing.T) { readbackTransactionsBalance(t, b) })

			t.Run("StatementCSV", func(t *testing.T) { readbackStatementCSV(t, b, newRand()) })

			t.Run("StatementCamt053", func(t *testing.T) { readbackStatementCamt053(t, b, newRand()) })

			t.Run("StatementOfDates", func(t *testing.T) { readbackStatementOfDates(t, b) })
		})
	}
}

// readbackStatementOfDates: a statement of dates covers whole UTC days and
// is named by them.
func readbackStatementOfDates(t *testing.T, b readback) {
	t.Parallel()
	a := b.w.Accounts[0]
	day := b.w.Times[len(b.w.Times)/2].Truncate(24 * time.Hour)
	rec := b.get(t, "/v1/accounts/"+a.AccountID+"/statement?"+q("from", day.Format(time.DateOnly), "to", day.AddDate(0, 0, 1).Format(time.DateOnly)))
	checkCSVStatement(t, rec, b.w, a, day, day.AddDate(0, 0, 1))
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="statement-`+a.AccountID+"-"+day.Format("20060102")+"T000000Z-"+day.AddDate(0, 0, 1).Format("20060102")+`T000000Z.csv"` {
		t.Fatalf("Content-Disposition %q", cd)
	}
}

// readbackStatementCamt053: camt.053 statements of random windows hold the
// workload's entries.
func readbackStatementCamt053(t *testing.T, b readback, rng *rand.Rand) {
	t.Parallel()
	for range 10 {
		a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
		from, to := window(rng, b.w)
		rec := b.get(t, "/v1/accounts/"+a.AccountID+"/statement?"+q("from", stamp(from), "to", stamp(to), "format", "camt053"))
		checkCamtStatement(t, rec, b.w, a, from, to)
	}
}

// readbackStatementCSV: CSV statements of random windows hold the
// workload's entries.
func readbackStatementCSV(t *testing.T, b readback, rng *rand.Rand) {
	t.Parallel()
	for range 10 {
		a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
		from, to := window(rng, b.w)
		rec := b.get(t, "/v1/accounts/"+a.AccountID+"/statement?"+q("from", stamp(from), "to", stamp(to)))
		checkCSVStatement(t, rec, b.w, a, from, to)
	}
}

// readbackTransactionsBalance: every transaction has two balancing sides
// and is one the workload made (the long-ID account's funding aside).
func readbackTransactionsBalance(t *testing.T, b readback) {
	t.Parallel()
	var n, extra int
	cursor := ""
	for {
		page := decodeJSON[adminapi.JournalTransactionList](t, b.get(t, "/v1/journal/transactions?"+q("limit", "100", "cursor", cursor)))
		for _, tx := range page.Transactions {
			if tx.Entries[0].AccountID == longID {
				extra++
				continue
			}
			if n >= len(b.w.Entries) {
				t.Fatalf("more transactions than the workload made: %+v", tx)
			}
			w := b.w.Entries[n]
			if len(tx.Entries) != 2 || tx.TransactionID != w.TransactionID || tx.Entries[0].AccountID != w.AccountID || tx.Entries[1].AccountID != w.ContraAccountID {
				t.Fatalf("transaction %+v, want %+v", tx, w)
			}
			wantAmount(t, "customer side", tx.Entries[0].Amount, w.Currency, w.Amount)
			wantAmount(t, "system side", tx.Entries[1].Amount, w.Currency, w.Amount.Neg())
			n++
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	// The long-ID account's funding is the one transaction the
	// workload did not record.
	if n != len(b.w.Entries) || extra != 1 {
		t.Fatalf("%d transactions and %d more, the workload made %d", n, extra, len(b.w.Entries))
	}
}

// readbackEntriesOfAnAccount: an account's journal entries in a window,
// paged at random limits, are the workload's, field by field.
func readbackEntriesOfAnAccount(t *testing.T, b readback, rng *rand.Rand) {
	t.Parallel()
	for range 5 {
		a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
		from, to := window(rng, b.w)
		var got []adminapi.JournalEntry
		cursor := ""
		for {
			page := decodeJSON[adminapi.JournalEntryList](t, b.get(t, "/v1/journal/entries?"+
				q("accountID", a.AccountID, "from", stamp(from), "to", stamp(to), "cursor", cursor, "limit", fmt.Sprint(1+rng.IntN(20)))))
			got = append(got, page.Entries...)
			if !page.HasMore {
				break
			}
			cursor = page.NextCursor
		}
		want := b.w.EntriesOf(a.AccountID, from, to)
		if len(got) != len(want) {
			t.Fatalf("%s [%s, %s): %d entries, want %d", a.AccountID, from, to, len(got), len(want))
		}
		for i, e := range got {
			w := want[i]
			if e.TransactionID != w.TransactionID || e.AccountID != w.AccountID || e.ContraAccountID != w.ContraAccountID ||
				e.Kind != w.Kind || e.Reference != w.Reference || e.Memo != w.Memo || !e.CreatedAt.Equal(w.CreatedAt) {
				t.Fatalf("entry %d %+v, want %+v", i, e, w)
			}
			wantAmount(t, e.TransactionID, e.Amount, w.Currency, w.Amount)
		}
	}
}

// readbackHoldsOfAnAccount: an account's holds are the same by its route
// and by the filter, all its own; its held holds sum to its held amount.
func readbackHoldsOfAnAccount(t *testing.T, b readback, rng *rand.Rand) {
	t.Parallel()
	a := b.w.Accounts[rng.IntN(len(b.w.Accounts))]
	viaAccount := decodeJSON[adminapi.HoldList](t, b.get(t, "/v1/accounts/"+a.AccountID+"/holds?limit=100"))
	viaFilter := decodeJSON[adminapi.HoldList](t, b.get(t, "/v1/holds?"+q("accountID", a.AccountID, "limit", "100")))
	if len(viaAccount.Holds) == 0 || !slices.EqualFunc(viaAccount.Holds, viaFilter.Holds, func(x, y adminapi.Hold) bool { return x.HoldReference == y.HoldReference }) {
		t.Fatalf("%d holds by the account's route, %d by the filter", len(viaAccount.Holds), len(viaFilter.Holds))
	}
	for _, h := range viaAccount.Holds {
		if h.AccountID != a.AccountID {
			t.Fatalf("hold %+v of another account", h)
		}
	}
	held := decodeJSON[adminapi.HoldList](t, b.get(t, "/v1/accounts/"+a.AccountID+"/holds?status=held&limit=100"))
	sum := decimal.Zero
	for _, h := range held.Holds {
		d, _ := h.Amount.Decimal()
		sum = sum.Add(d)
	}
	now, _ := b.db.GetAccount(t.Context(), a.AccountID)
	if !sum.Equal(now.Held) {
		t.Fatalf("held holds sum to %s, the account holds %s", sum, now.Held)
	}
	empty := decodeJSON[adminapi.HoldList](t, b.get(t, "/v1/holds?accountID=nobody"))
	if len(empty.Holds) != 0 {
		t.Fatalf("holds of nobody: %+v", empty)
	}
}

// readbackAccounts: the accounts list, paged at random limits, is every
// account, in order; its filters select one, with its balances.
func readbackAccounts(t *testing.T, b readback, rng *rand.Rand) {
	t.Parallel()
	var got []string
	cursor := ""
	for {
		page := decodeJSON[adminapi.AccountList](t, b.get(t, "/v1/accounts?"+q("limit", fmt.Sprint(1+rng.IntN(3)), "cursor", cursor)))
		for _, a := range page.Accounts {
			got = append(got, a.AccountID)
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	var want []string
	for _, a := range b.w.Accounts {
		want = append(want, a.AccountID)
	}
	want = append(want, longID)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("accounts %v, want %v", got, want)
	}
	a := b.w.Accounts[1]
	page := decodeJSON[adminapi.AccountList](t, b.get(t, "/v1/accounts?"+q("currency", a.Currency, "ownerExternalID", a.OwnerExternalID, "status", "open")))
	now, err := b.db.GetAccount(t.Context(), a.AccountID)
	if err != nil || len(page.Accounts) != 1 || page.Accounts[0].AccountID != a.AccountID || page.HasMore || page.NextCursor != "" {
		t.Fatalf("filtered %+v %v", page, err)
	}
	wantAmount(t, "balance", page.Accounts[0].Balance, a.Currency, now.Balance)
	wantAmount(t, "available", page.Accounts[0].Available, a.Currency, now.Available)
}

// checkCSVStatement parses a CSV statement and holds it to the record:
// opening, every entry with the running balance, closing.
func checkCSVStatement(t *testing.T, rec *httptest.ResponseRecorder, w *storetest.Workload, a ledger.Account, from, to time.Time) {
	t.Helper()
	what := fmt.Sprintf("%s [%s, %s)", a.AccountID, from, to)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8; header=present" {
		t.Fatalf("%s: %d %q %s", what, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "\r\n") {
		t.Fatalf("%s: rows do not end in CRLF", what)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want := w.EntriesOf(a.AccountID, from, to)
	if len(rows) != len(want)+3 || strings.Join(rows[0], ",") != "record,accountID,bookedAt,transactionID,kind,reference,memo,contraAccountID,currency,amount,balance" {
		t.Fatalf("%s: %d rows for %d entries; header %v", what, len(rows), len(want), rows[0])
	}
	money := func(s string) decimal.Decimal {
		t.Helper()
		d, err := decimal.NewFromString(s)
		if err != nil || ledger.FormatAmount(a.Currency, d) != s {
			t.Fatalf("%s: amount %q is not in %s's places", what, s, a.Currency)
		}
		return d
	}
	opening, closing := rows[1], rows[len(rows)-1]
	if opening[0] != "opening" || closing[0] != "closing" || opening[2] != from.UTC().Format(adminapi.TimestampFormat) || closing[2] != to.UTC().Format(adminapi.TimestampFormat) {
		t.Fatalf("%s: opening %v, closing %v", what, opening, closing)
	}
	balance := money(opening[10])
	if !balance.Equal(w.BalanceAt(a.AccountID, from)) {
		t.Fatalf("%s: opens at %s, the record says %s", what, balance, w.BalanceAt(a.AccountID, from))
	}
	for i, row := range rows[2 : len(rows)-1] {
		e := want[i]
		amount := money(row[9])
		balance = balance.Add(amount)
		if row[0] != "entry" || row[1] != a.AccountID || row[3] != e.TransactionID || row[4] != e.Kind || row[5] != e.Reference ||
			row[6] != e.Memo || row[7] != e.ContraAccountID || row[8] != a.Currency || !amount.Equal(e.Amount) || !money(row[10]).Equal(balance) ||
			row[2] != e.CreatedAt.UTC().Format(adminapi.TimestampFormat) {
			t.Fatalf("%s: row %v, want %+v and balance %s", what, row, e, balance)
		}
	}
	if c := money(closing[10]); !c.Equal(balance) || !c.Equal(w.BalanceAt(a.AccountID, to)) {
		t.Fatalf("%s: closes at %s; opening plus entries is %s; the record says %s", what, c, balance, w.BalanceAt(a.AccountID, to))
	}
}

// camtDoc is what the tests read of a camt.053 document.
type camtDoc struct {
	XMLName xml.Name `xml:"urn:iso:std:iso:20022:tech:xsd:camt.053.001.08 Document"`
	MsgID   string   `xml:"BkToCstmrStmt>GrpHdr>MsgId"`
	Stmt    struct {
		ID      string `xml:"Id"`
		From    string `xml:"FrToDt>FrDtTm"`
		To      string `xml:"FrToDt>ToDtTm"`
		Account string `xml:"Acct>Id>Othr>Id"`
		Ccy     string `xml:"Acct>Ccy"`
		Bal     []struct {
			Code string     `xml:"Tp>CdOrPrtry>Cd"`
			Amt  camtAmount `xml:"Amt"`
			Ind  string     `xml:"CdtDbtInd"`
			At   string     `xml:"Dt>DtTm"`
		} `xml:"Bal"`
		Summary struct {
			N      int64  `xml:"TtlNtries>NbOfNtries"`
			Sum    string `xml:"TtlNtries>Sum"`
			Net    string `xml:"TtlNtries>TtlNetNtry>Amt"`
			NetInd string `xml:"TtlNtries>TtlNetNtry>CdtDbtInd"`
			NCdt   int64  `xml:"TtlCdtNtries>NbOfNtries"`
			SumCdt string `xml:"TtlCdtNtries>Sum"`
			NDbt   int64  `xml:"TtlDbtNtries>NbOfNtries"`
			SumDbt string `xml:"TtlDbtNtries>Sum"`
		} `xml:"TxsSummry"`
		Info string `xml:"AddtlStmtInf"`
		Ntry []struct {
			Ref         string     `xml:"NtryRef"`
			Amt         camtAmount `xml:"Amt"`
			Ind         string     `xml:"CdtDbtInd"`
			Status      string     `xml:"Sts>Cd"`
			Booked      string     `xml:"BookgDt>DtTm"`
			AcctSvcrRef string     `xml:"AcctSvcrRef"`
			Code        string     `xml:"BkTxCd>Prtry>Cd"`
			Ustrd       []string   `xml:"NtryDtls>TxDtls>RmtInf>Ustrd"`
			Info        string     `xml:"NtryDtls>TxDtls>AddtlTxInf"`
			NtryInfo    string     `xml:"AddtlNtryInf"`
		} `xml:"Ntry"`
	} `xml:"BkToCstmrStmt>Stmt"`
}

type camtAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

// signed reads an amount and its indicator as a signed decimal, holding
// its text to the currency's places and camt's non-negative amounts.
func signed(t *testing.T, a camtAmount, ind, currency string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(a.Value)
	if err != nil || a.Ccy != currency || d.IsNegative() || ledger.FormatAmount(currency, d) != a.Value {
		t.Fatalf("amount %+v in %s", a, currency)
	}
	switch ind {
	case "CRDT":
		return d
	case "DBIT":
		return d.Neg()
	}
	t.Fatalf("CdtDbtInd %q", ind)
	return d
}

// checkCamtStatement parses a camt.053 statement, holds its elements to
// the schema's order, and its balances and entries to the record.
func checkCamtStatement(t *testing.T, rec *httptest.ResponseRecorder, w *storetest.Workload, a ledger.Account, from, to time.Time) {
	t.Helper()
	what := fmt.Sprintf("%s [%s, %s)", a.AccountID, from, to)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/xml; charset=utf-8" {
		t.Fatalf("%s: %d %q %s", what, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	body := rec.Body.Bytes()
	if !bytes.HasPrefix(body, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Fatalf("%s: no XML declaration: %.60s", what, body)
	}
	checkCamtOrder(t, body)
	var d camtDoc
	if err := xml.Unmarshal(body, &d); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	s := d.Stmt
	if s.Account != a.AccountID || s.Ccy != a.Currency || len(s.ID) != 32 || d.MsgID == "" || len(d.MsgID) > 35 ||
		s.From != from.UTC().Format(adminapi.TimestampFormat) || s.To != to.UTC().Format(adminapi.TimestampFormat) {
		t.Fatalf("%s: statement %+v, message %q", what, s, d.MsgID)
	}
	if len(s.Bal) != 2 || s.Bal[0].Code != "OPBD" || s.Bal[1].Code != "CLBD" || s.Bal[0].At != s.From || s.Bal[1].At != s.To {
		t.Fatalf("%s: balances %+v", what, s.Bal)
	}
	opening, closing := signed(t, s.Bal[0].Amt, s.Bal[0].Ind, a.Currency), signed(t, s.Bal[1].Amt, s.Bal[1].Ind, a.Currency)
	if !opening.Equal(w.BalanceAt(a.AccountID, from)) || !closing.Equal(w.BalanceAt(a.AccountID, to)) {
		t.Fatalf("%s: opens at %s and closes at %s; the record says %s and %s", what, opening, closing,
			w.BalanceAt(a.AccountID, from), w.BalanceAt(a.AccountID, to))
	}
	want := w.EntriesOf(a.AccountID, from, to)
	if len(s.Ntry) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(s.Ntry), len(want))
	}
	sum, credits, debits := opening, decimal.Zero, decimal.Zero
	var nCdt, nDbt int64
	for i, n := range s.Ntry {
		e := want[i]
		v := signed(t, n.Amt, n.Ind, a.Currency)
		sum = sum.Add(v)
		if v.IsPositive() {
			credits, nCdt = credits.Add(v), nCdt+1
		} else {
			debits, nDbt = debits.Add(v.Neg()), nDbt+1
		}
		ref := strings.ReplaceAll(e.TransactionID, "-", "")
		if !v.Equal(e.Amount) || n.Ref != ref || n.AcctSvcrRef != ref || n.Status != "BOOK" || n.Code != e.Kind ||
			n.Booked != e.CreatedAt.UTC().Format(adminapi.TimestampFormat) || strings.Join(n.Ustrd, "") != e.Memo || n.Info != e.Reference {
			t.Fatalf("%s: entry %+v, want %+v", what, n, e)
		}
		for _, u := range n.Ustrd {
			if l := len([]rune(u)); l < 1 || l > 140 {
				t.Fatalf("%s: Ustrd of %d characters", what, l)
			}
		}
	}
	if !sum.Equal(closing) {
		t.Fatalf("%s: opening %s plus entries is %s, closing %s", what, opening, sum, closing)
	}
	m := s.Summary
	num := func(s string) decimal.Decimal {
		d, err := decimal.NewFromString(s)
		if err != nil {
			t.Fatalf("%s: %q", what, s)
		}
		return d
	}
	net := closing.Sub(opening)
	netInd := "CRDT"
	if net.IsNegative() {
		netInd = "DBIT"
	}
	text := func(v decimal.Decimal) string { return ledger.FormatAmount(a.Currency, v) }
	if m.N != int64(len(want)) || m.NCdt != nCdt || m.NDbt != nDbt || m.SumCdt != text(credits) || m.SumDbt != text(debits) ||
		m.Sum != text(credits.Add(debits)) || m.Net != text(net.Abs()) || !num(m.Net).Equal(net.Abs()) || m.NetInd != netInd {
		t.Fatalf("%s: summary %+v; credits %d %s, debits %d %s", what, m, nCdt, credits, nDbt, debits)
	}
}

// camtOrder lists, for the elements the statement writes, the order of
// their children in the camt.053.001.08 schema (xs:sequence of
// GroupHeader81, AccountStatement9, CashAccount39, CashBalance8,
// TotalTransactions6, ReportEntry10, EntryTransaction10).
var camtOrder = map[string][]string{
	"Document":      {"BkToCstmrStmt"},
	"BkToCstmrStmt": {"GrpHdr", "Stmt"},
	"GrpHdr":        {"MsgId", "CreDtTm"},
	"Stmt":          {"Id", "StmtPgntn", "ElctrncSeqNb", "RptgSeq", "LglSeqNb", "CreDtTm", "FrToDt", "CpyDplctInd", "RptgSrc", "Acct", "RltdAcct", "Intrst", "Bal", "TxsSummry", "Ntry", "AddtlStmtInf"},
	"Acct":          {"Id", "Tp", "Ccy", "Nm"},
	"Bal":           {"Tp", "CdtLine", "Amt", "CdtDbtInd", "Dt", "Avlbty"},
	"TxsSummry":     {"TtlNtries", "TtlCdtNtries", "TtlDbtNtries"},
	"TtlNtries":     {"NbOfNtries", "Sum", "TtlNetNtry"},
	"Ntry":          {"NtryRef", "Amt", "CdtDbtInd", "RvslInd", "Sts", "BookgDt", "ValDt", "AcctSvcrRef", "Avlbty", "BkTxCd", "ComssnWvrInd", "AddtlInfInd", "AmtDtls", "Chrgs", "TechInptChanl", "Intrst", "CardTx", "NtryDtls", "AddtlNtryInf"},
	"TxDtls":        {"Refs", "Amt", "CdtDbtInd", "AmtDtls", "Avlbty", "BkTxCd", "Chrgs", "Intrst", "RltdPties", "RltdAgts", "LclInstrm", "Purp", "RltdRmtInf", "RmtInf", "RltdDts", "RltdPric", "RltdQties", "FinInstrmId", "Tax", "RtrInf", "CorpActn", "SfkpgAcct", "CshDpst", "CardTx", "AddtlTxInf"},
}

// camtRequired lists children the schema requires of the elements written.
var camtRequired = map[string][]string{
	"GrpHdr": {"MsgId", "CreDtTm"},
	"Stmt":   {"Id", "Acct", "Bal"},
	"Bal":    {"Tp", "Amt", "CdtDbtInd", "Dt"},
	"Ntry":   {"Amt", "CdtDbtInd", "Sts", "BkTxCd"},
}

// checkCamtOrder walks the document and fails t when an element's children
// are out of the schema's order, one it requires is missing, text of a
// Max35Text, Max140Text or Max500Text element is longer than that, or text
// holds a character XML 1.0 cannot carry.
func checkCamtOrder(t *testing.T, body []byte) {
	t.Helper()
	maxLen := map[string]int{"MsgId": 35, "NtryRef": 35, "AcctSvcrRef": 35, "Cd": 35, "Issr": 35,
		"Ustrd": 140, "AddtlTxInf": 500, "AddtlNtryInf": 500, "AddtlStmtInf": 500}
	dec := xml.NewDecoder(bytes.NewReader(body))
	type frame struct {
		name     string
		children []string
	}
	stack := []frame{{name: ""}}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("camt.053: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Space != "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08" {
				t.Fatalf("element %s in namespace %q", tok.Name.Local, tok.Name.Space)
			}
			top := &stack[len(stack)-1]
			top.children = append(top.children, tok.Name.Local)
			stack = append(stack, frame{name: tok.Name.Local})
		case xml.CharData:
			top := stack[len(stack)-1]
			if n, ok := maxLen[top.name]; ok && len([]rune(string(tok))) > n {
				t.Fatalf("%s holds %q: over %d characters", top.name, tok, n)
			}
			for _, r := range string(tok) {
				if !(r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000) {
					t.Fatalf("%s holds %U, which XML 1.0 cannot carry", top.name, r)
				}
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if order, ok := camtOrder[f.name]; ok {
				last := -1
				for _, c := range f.children {
					i := slices.Index(order, c)
					if i < last {
						t.Fatalf("in %s, %s comes after %s: %v", f.name, c, order[last], f.children)
					}
					if i < 0 {
						t.Fatalf("%s has a child %s the schema does not place", f.name, c)
					}
					last = i
				}
			}
			for _, r := range camtRequired[f.name] {
				if !slices.Contains(f.children, r) {
					t.Fatalf("%s lacks %s: %v", f.name, r, f.children)
				}
			}
		}
	}
}

// TestReadbackBadInput: malformed queries and path IDs are 400 problems
// pointing at the parameter, unknown accounts 404, a statement camt.053
// cannot express 422; none of them writes a byte of a statement.
func TestReadbackBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "bad-1", Funds: "5"})
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: longID, Funds: "5"})
	for _, c := range readbackBadInputs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := b.do(t, "GET", c.target, "")
			a.problem(t, c.status, c.slug, c.pointer)
			if cd := a.header.Get("Content-Disposition"); cd != "" {
				t.Fatalf("a problem with Content-Disposition %q", cd)
			}
		})
	}
	readbackEdgesThatAreFine(t, b)
}

// readbackPeriod is a period of a statement's query.
const readbackPeriod = "from=2026-01-01&to=2026-02-01"

// readbackBadInputs are the requests TestReadbackBadInput refuses.
var readbackBadInputs = []struct {
	name, target  string
	status        int
	slug, pointer string
}{
	{"LimitZero", "/v1/accounts?limit=0", 400, "invalid-request", "/limit"},
	{"LimitWord", "/v1/journal/entries?limit=ten", 400, "invalid-request", "/limit"},
	{"LimitTooLarge", "/v1/journal/transactions?limit=101", 400, "invalid-request", "/limit"},
	{"UnknownParameter", "/v1/accounts?owner=alice", 400, "invalid-request", "/owner"},
	{"UnknownParameterOnHolds", "/v1/holds?acount=x", 400, "invalid-request", "/acount"},
	{"RepeatedParameter", "/v1/accounts?status=open&status=frozen", 400, "invalid-request", "/status"},
	{"BadStatus", "/v1/accounts?status=gone", 400, "invalid-request", "/status"},
	{"BadCurrency", "/v1/accounts?currency=usd", 400, "invalid-request", "/currency"},
	{"BadCursor", "/v1/accounts?cursor=%21%21", 400, "invalid-request", "/cursor"},
	{"CursorOfAnotherListing", "/v1/journal/transactions?cursor=" + entriesCursor(), 400, "invalid-request", "/cursor"},
	{"BadFrom", "/v1/journal/entries?from=yesterday", 400, "invalid-request", "/from"},
	{"BadTo", "/v1/journal/entries?to=2026-13-01", 400, "invalid-request", "/to"},
	{"ToBeforeFrom", "/v1/journal/entries?from=2026-02-01&to=2026-01-01", 400, "invalid-request", "/to"},
	{"NULInQuery", "/v1/journal/entries?accountID=a%00b", 400, "invalid-request", "/accountID"},
	{"InvalidUTF8InQuery", "/v1/accounts?ownerExternalID=%FF", 400, "invalid-request", "/ownerExternalID"},
	{"InvalidUTF8InName", "/v1/accounts?%FF=1", 400, "invalid-request", ""},
	{"BadEscape", "/v1/accounts?status=%zz", 400, "invalid-request", ""},
	{"Semicolon", "/v1/accounts?status=open;limit=1", 400, "invalid-request", ""},
	{"NULInPath", "/v1/accounts/a%00b/statement?" + readbackPeriod, 400, "invalid-request", "/accountID"},
	{"InvalidUTF8InPath", "/v1/accounts/%FF/holds", 400, "invalid-request", "/accountID"},
	{"StatementWithoutFrom", "/v1/accounts/bad-1/statement?to=2026-01-01", 400, "invalid-request", "/from"},
	{"StatementWithoutTo", "/v1/accounts/bad-1/statement?from=2026-01-01", 400, "invalid-request", "/to"},
	{"StatementToBeforeFrom", "/v1/accounts/bad-1/statement?from=2026-01-02&to=2026-01-01", 400, "invalid-request", "/to"},
	{"EmptyLimit", "/v1/accounts?limit=", 400, "invalid-request", "/limit"},
	{"EmptyFilter", "/v1/journal/entries?accountID=", 400, "invalid-request", "/accountID"},
	{"EmptyCursorOfHolds", "/v1/accounts/bad-1/holds?cursor=", 400, "invalid-request", "/cursor"},
	{"StatementBadFormat", "/v1/accounts/bad-1/statement?format=pdf&" + readbackPeriod, 400, "invalid-request", "/format"},
	{"StatementUnknownParameter", "/v1/accounts/bad-1/statement?fmt=csv&" + readbackPeriod, 400, "invalid-request", "/fmt"},
	{"StatementUnknownAccount", "/v1/accounts/nobody/statement?" + readbackPeriod, 404, "account-not-found", ""},
	{"StatementOfASystemAccount", "/v1/accounts/settlement:USD/statement?" + readbackPeriod, 404, "account-not-found", ""},
	{"StatementCamtLongID", "/v1/accounts/" + longID + "/statement?format=camt053&" + readbackPeriod, 422, "statement-format-unsupported", "/format"},
	{"HoldsOfUnknownAccount", "/v1/accounts/nobody/holds", 404, "account-not-found", ""},
	{"NULInAnAccountID", "/v1/accounts/a%00b", 400, "invalid-request", "/accountID"},
	{"InvalidUTF8InAHoldReference", "/v1/holds/hold_%C3", 400, "invalid-request", "/holdReference"},
}

// readbackEdgesThatAreFine are inputs at the edges that are answered.
func readbackEdgesThatAreFine(t *testing.T, b bundle) {
	t.Run("CSVOfTheLongIDIsFine", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		admintest.Handler(t, b.api).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/accounts/"+longID+"/statement?from=2000-01-01&to=2100-01-01", nil))
		// The period is not over: its closing row is the interim balance.
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "\r\ninterim,"+longID) {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})
	t.Run("EmptyPeriodIsAStatementWithoutEntries", func(t *testing.T) {
		t.Parallel()
		rec := httptest.NewRecorder()
		admintest.Handler(t, b.api).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/accounts/bad-1/statement?from=2030-01-01&to=2030-01-01", nil))
		body := rec.Body.String()
		if rec.Code != 200 || strings.Count(body, "\r\ninterim,bad-1,") != 2 || strings.Contains(body, "\r\nentry,") ||
			!strings.HasSuffix(body, ",USD,,5.00\r\n") {
			t.Fatalf("%d %s", rec.Code, body)
		}
	})
	t.Run("AnOffsetWhosePlusWasNotEscaped", func(t *testing.T) {
		t.Parallel()
		a := b.do(t, "GET", "/v1/journal/entries?from=2026-01-01T00:00:00+01:00&limit=1", "")
		if a.status != 200 {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
}

// entriesCursor is a well-formed cursor of GET /v1/journal/entries.
func entriesCursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte("e1|1772355600000000|018f0e2a-0000-7000-8000-000000000000|0"))
}

// failingWriter fails every write: a client gone, a full disk.
type failingWriter struct {
	header http.Header
	status int
	wrote  int
}

func (f *failingWriter) Header() http.Header { return f.header }
func (f *failingWriter) WriteHeader(s int)   { f.status = s }
func (f *failingWriter) Write(p []byte) (int, error) {
	f.wrote += len(p)
	return 0, errors.New("write failed")
}

// TestStatementCutShort: a statement that cannot be finished after its
// first byte is not finished with a problem or a clean end: the handler
// panics with http.ErrAbortHandler, which net/http answers by closing the
// connection mid-body, so the client sees a broken transfer.
func TestStatementCutShort(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "cut-1", Funds: "5"})
	for _, format := range []string{"csv", "camt053"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			w := &failingWriter{header: http.Header{}}
			defer func() {
				if v := recover(); v != http.ErrAbortHandler {
					t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
				}
				if w.status != 200 || strings.Contains(w.header.Get("Content-Type"), "problem") {
					t.Fatalf("status %d, Content-Type %q", w.status, w.header.Get("Content-Type"))
				}
			}()
			b.api.ServeHTTP(w, httptest.NewRequest("GET", "/v1/accounts/cut-1/statement?from=2000-01-01&to=2100-01-01&format="+format, nil))
			t.Fatal("the handler returned")
		})
	}
	t.Run("OverAListener", func(t *testing.T) {
		t.Parallel()
		// A proxy that fails to write the body makes the real handler cut
		// the connection: the client's read ends in an error, not EOF.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.api.ServeHTTP(&cutAfter{ResponseWriter: w, n: 10}, r)
		}))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/v1/accounts/cut-1/statement?from=2000-01-01&to=2100-01-01")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || err == nil {
			t.Fatalf("status %d, read %q, %v: want a broken body", resp.StatusCode, got, err)
		}
	})
}

// cutAfter passes n bytes on, then fails.
type cutAfter struct {
	http.ResponseWriter
	n int
}

func (c *cutAfter) Write(p []byte) (int, error) {
	if len(p) > c.n {
		n, _ := c.ResponseWriter.Write(p[:c.n])
		c.n -= n
		if f, ok := c.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		return n, errors.New("cut")
	}
	c.n -= len(p)
	return c.ResponseWriter.Write(p)
}
