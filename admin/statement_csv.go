package admin

// The CSV statement format (format=csv).

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// csvStatement is RFC 4180 CSV (CRLF line ends), one header row, then an
// opening row, one row per entry and a closing row:
//
//	record,accountID,bookedAt,transactionID,kind,reference,memo,contraAccountID,currency,amount,balance
//	opening,acc-1,2026-03-01T00:00:00.000000Z,,,,,,USD,,100.00
//	entry,acc-1,2026-03-01T09:12:00.000000Z,0190…,capture,cap_…,payout-1,settlement:USD,USD,-25.00,75.00
//	closing,acc-1,2026-04-01T00:00:00.000000Z,,,,,,USD,,75.00
//
// amount is signed (negative a debit); balance is the balance after the
// row. A balance dated after the statement was made (a period not yet
// over) is the balance booked when it was made: its row's record is
// "interim" and its bookedAt that moment.
//
// Text is written as stored, line breaks included (a field with CR or LF
// is quoted, its CR, LF and CRLF kept byte for byte: see writeRow),
// except that a text cell beginning with =, +, -, @, TAB or CR, which a
// spreadsheet would read as a formula, gets OWASP's leading apostrophe
// (csvCell). Amounts and balances are never altered.
type csvStatement struct {
	w       io.Writer
	err     error
	s       ledger.StatementSummary
	now     time.Time
	balance decimal.Decimal
}

var csvHeader = []string{"record", "accountID", "bookedAt", "transactionID", "kind", "reference", "memo",
	"contraAccountID", "currency", "amount", "balance"}

func newCSVStatement(w io.Writer, s ledger.StatementSummary, now time.Time) *csvStatement {
	return &csvStatement{w: w, s: s, now: now, balance: s.Opening}
}

func (c *csvStatement) contentType() string { return "text/csv; charset=utf-8; header=present" }
func (c *csvStatement) extension() string   { return "csv" }

func (c *csvStatement) amount(v decimal.Decimal) string {
	return ledger.FormatAmount(c.s.Account.Currency, v)
}

// csvCell neutralises a text cell a spreadsheet would evaluate (OWASP's
// CSV injection advice): one beginning with =, +, -, @, TAB or CR gets a
// leading apostrophe, which spreadsheets read as "text" and do not show.
// Only text columns pass through it, never amounts.
func csvCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// writeRow writes one CSV row ending in CRLF. encoding/csv's Writer with
// UseCRLF turns every LF inside a quoted field into CRLF and drops a lone
// CR, so rows are written here: a field is quoted when it holds a comma,
// a quote, CR or LF, or begins with white space (as encoding/csv
// quotes), its quotes doubled, everything else byte for byte (RFC 4180).
// A reader that keeps a quoted field's bytes gets the text back exactly
// (encoding/csv's Reader turns a CRLF inside quotes into LF).
func (c *csvStatement) writeRow(fields ...string) {
	if c.err != nil {
		return
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if r, _ := utf8.DecodeRuneInString(f); f == "" || !strings.ContainsAny(f, ",\"\r\n") && !unicode.IsSpace(r) {
			b.WriteString(f)
			continue
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(f, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteString("\r\n")
	_, c.err = io.WriteString(c.w, b.String())
}

// balanceRow is the opening or closing row of a balance at t; one dated
// after the statement was made is the interim balance booked then.
func (c *csvStatement) balanceRow(record string, t time.Time, v decimal.Decimal) {
	a := c.s.Account
	if t.After(c.now) {
		record, t = "interim", c.now
	}
	c.writeRow(record, csvCell(a.AccountID), statementTime(t), "", "", "", "", "", a.Currency, "", c.amount(v))
}

func (c *csvStatement) begin() error {
	c.writeRow(csvHeader...)
	c.balanceRow("opening", c.s.From, c.s.Opening)
	return c.err
}

func (c *csvStatement) entry(e ledger.Entry) error {
	c.balance = c.balance.Add(e.Amount)
	c.writeRow("entry", csvCell(e.AccountID), statementTime(e.CreatedAt), csvCell(e.TransactionID), csvCell(e.Kind),
		csvCell(e.Reference), csvCell(e.Memo), csvCell(e.ContraAccountID), e.Currency, c.amount(e.Amount), c.amount(c.balance))
	return c.err
}

func (c *csvStatement) end() error {
	if !c.balance.Equal(c.s.Closing) {
		return fmt.Errorf("admin: statement rows end at %s, the closing balance is %s", c.balance, c.s.Closing)
	}
	c.balanceRow("closing", c.s.To, c.s.Closing)
	return c.err
}
