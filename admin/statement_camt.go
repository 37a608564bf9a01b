package admin

// The ISO 20022 camt.053 statement format (format=camt053).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// camtNamespace is the ISO 20022 BankToCustomerStatement this writes.
const camtNamespace = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"

// camtIssuer names the proprietary bank transaction codes (the journal
// kinds: adjustment, capture, credit, reconciliation).
const camtIssuer = "provider-ledger"

// camtStatement is an ISO 20022 camt.053.001.08 document with one
// statement of one account (see writeCamtHead for what goes where):
//
//   - Acct/Id/Othr/Id is the accountID (at most 34 characters: longer IDs
//     are refused), Acct/Ccy its currency;
//   - two balances, OPBD (opening booked, at From) and CLBD (closing
//     booked, at To), each an absolute amount with CRDT or DBIT; a
//     balance dated after the statement was made is ITBD (interim
//     booked) at that moment instead, and a period that ends after it
//     says so in AddtlStmtInf (provisionalNote);
//   - TxsSummry: the number and sum of all, credit and debit entries, and
//     the net;
//   - one Ntry per journal entry, status BOOK: NtryRef, AcctSvcrRef and
//     Refs/AcctSvcrRef are the transaction ID (32 hex digits: Max35Text
//     has no room for the hyphens); BookgDt and ValDt its creation time;
//     BkTxCd/Prtry the kind; RmtInf/Ustrd the memo (payoutID, requestID
//     or the adjustment's memo, in pieces of 140 characters);
//     AddtlTxInf the reference (its first 500 characters: Max500Text);
//     both exactly as stored, or escaped as camtTexts says, with
//     AddtlNtryInf saying so.
//
// It validates against the camt.053.001.08 XSD (checked when the writer
// was built; the schema is not vendored).
type camtStatement struct {
	enc *xml.Encoder
	s   ledger.StatementSummary
	now time.Time
}

// camtMaxDigits and camtMaxFraction bound ActiveOrHistoricCurrencyAndAmount.
const (
	camtMaxDigits   = 18
	camtMaxFraction = 5
)

func newCamtStatement(w io.Writer, s ledger.StatementSummary, now time.Time) (*camtStatement, error) {
	if n := utf8.RuneCountInString(s.Account.AccountID); n > 34 {
		return nil, errStatementFormat("camt.053 identifies an account in at most 34 characters; this accountID has %d: use format=csv", n)
	}
	for _, v := range []decimal.Decimal{s.Opening, s.Closing, s.Credits, s.Debits, s.Credits.Sub(s.Debits)} {
		if !camtFits(v) {
			return nil, errStatementFormat("camt.053 amounts have at most %d digits; this statement's totals have more: use format=csv", camtMaxDigits)
		}
	}
	return &camtStatement{enc: xml.NewEncoder(w), s: s, now: now}, nil
}

func (c *camtStatement) contentType() string { return "application/xml; charset=utf-8" }
func (c *camtStatement) extension() string   { return "xml" }

// camtFits reports whether |v| fits ActiveOrHistoricCurrencyAndAmount.
func camtFits(v decimal.Decimal) bool {
	s := v.Abs().String() // no exponent, no trailing fractional zeros
	intPart, frac, _ := strings.Cut(s, ".")
	intPart = strings.TrimLeft(intPart, "0")
	return len(frac) <= camtMaxFraction && len(intPart)+len(frac) <= camtMaxDigits
}

type camtAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

// amount is |v| with the currency's minor units, and its direction.
func (c *camtStatement) amount(v decimal.Decimal) (camtAmount, string) {
	ind := "CRDT"
	if v.IsNegative() {
		ind = "DBIT"
	}
	return camtAmount{Ccy: c.s.Account.Currency, Value: ledger.FormatAmount(c.s.Account.Currency, v.Abs())}, ind
}

type camtBalance struct {
	XMLName   xml.Name   `xml:"Bal"`
	Code      string     `xml:"Tp>CdOrPrtry>Cd"`
	Amt       camtAmount `xml:"Amt"`
	CdtDbtInd string     `xml:"CdtDbtInd"`
	At        string     `xml:"Dt>DtTm"`
}

type camtCount struct {
	N   int64  `xml:"NbOfNtries"`
	Sum string `xml:"Sum"`
}

type camtSummary struct {
	XMLName xml.Name `xml:"TxsSummry"`
	All     struct {
		camtCount
		Net struct {
			Amt       string `xml:"Amt"`
			CdtDbtInd string `xml:"CdtDbtInd"`
		} `xml:"TtlNetNtry"`
	} `xml:"TtlNtries"`
	Credits camtCount `xml:"TtlCdtNtries"`
	Debits  camtCount `xml:"TtlDbtNtries"`
}

type camtEntry struct {
	XMLName     xml.Name   `xml:"Ntry"`
	Ref         string     `xml:"NtryRef"`
	Amt         camtAmount `xml:"Amt"`
	CdtDbtInd   string     `xml:"CdtDbtInd"`
	Status      string     `xml:"Sts>Cd"`
	Booked      string     `xml:"BookgDt>DtTm"`
	Value       string     `xml:"ValDt>DtTm"`
	AcctSvcrRef string     `xml:"AcctSvcrRef"`
	Code        string     `xml:"BkTxCd>Prtry>Cd"`
	Issuer      string     `xml:"BkTxCd>Prtry>Issr"`
	Tx          struct {
		AcctSvcrRef string     `xml:"Refs>AcctSvcrRef"`
		Amt         camtAmount `xml:"Amt"`
		CdtDbtInd   string     `xml:"CdtDbtInd"`
		Remittance  []string   `xml:"RmtInf>Ustrd"`
		Info        string     `xml:"AddtlTxInf,omitempty"`
	} `xml:"NtryDtls>TxDtls"`
	Note string `xml:"AddtlNtryInf,omitempty"`
}

// camtEscapedNote is AddtlNtryInf of an entry whose memo or reference
// holds a character XML 1.0 cannot carry (camtText).
const camtEscapedNote = `ESCAPED: in RmtInf/Ustrd (joined) and AddtlTxInf, \uXXXX is the character U+XXXX, which XML 1.0 cannot carry, and \\ is a backslash`

// xmlChar reports whether XML 1.0 can carry r (its production Char).
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// camtTexts returns the memo and reference as camt.053 writes them, and
// whether they are escaped. Texts XML 1.0 can carry are written exactly
// (encoding/xml writes TAB, LF and CR as character references, so a
// parser reads them back as they were). Where either holds a character it
// cannot carry (C0 controls but TAB, LF and CR; U+FFFE, U+FFFF), which
// encoding/xml would replace by U+FFFD without a word, both are escaped
// reversibly (every such character as \uXXXX, every backslash as \\)
// and the entry says so in AddtlNtryInf (camtEscapedNote).
func camtTexts(memo, reference string) (string, string, bool) {
	bad := func(r rune) bool { return !xmlChar(r) }
	if !strings.ContainsFunc(memo, bad) && !strings.ContainsFunc(reference, bad) {
		return memo, reference, false
	}
	return camtEscape(memo), camtEscape(reference), true
}

// camtEscape writes a backslash as \\ and a character XML 1.0 cannot
// carry as \uXXXX (all of them are in the Basic Multilingual Plane).
func camtEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case !xmlChar(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (c *camtStatement) start(name string, attrs ...xml.Attr) error {
	return c.enc.EncodeToken(xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs})
}

func (c *camtStatement) finish(name string) error {
	return c.enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: name}})
}

// statementID names the statement of this account and period, the same
// each time it is asked for: 32 hex digits of a SHA-256.
func statementID(s ledger.StatementSummary) string {
	h := sha256.Sum256([]byte(s.Account.AccountID + "\x00" + statementTime(s.From) + "\x00" + statementTime(s.To)))
	return hex.EncodeToString(h[:16])
}

func (c *camtStatement) begin() error {
	s := c.s
	if err := c.enc.EncodeToken(xml.ProcInst{Target: "xml", Inst: []byte(`version="1.0" encoding="UTF-8"`)}); err != nil {
		return err
	}
	if err := c.start("Document", xml.Attr{Name: xml.Name{Local: "xmlns"}, Value: camtNamespace}); err != nil {
		return err
	}
	if err := c.start("BkToCstmrStmt"); err != nil {
		return err
	}
	hdr := struct {
		XMLName xml.Name `xml:"GrpHdr"`
		MsgID   string   `xml:"MsgId"`
		Created string   `xml:"CreDtTm"`
	}{MsgID: ledger.NewReference("stmt_"), Created: statementTime(c.now)}
	if err := c.enc.Encode(hdr); err != nil {
		return err
	}
	// Stmt's leading elements, then its balances, summary and entries as
	// siblings: the element is opened here and closed in end.
	if err := c.start("Stmt"); err != nil {
		return err
	}
	for _, v := range []any{
		struct {
			XMLName xml.Name `xml:"Id"`
			V       string   `xml:",chardata"`
		}{V: statementID(s)},
		struct {
			XMLName xml.Name `xml:"CreDtTm"`
			V       string   `xml:",chardata"`
		}{V: statementTime(c.now)},
		struct {
			XMLName xml.Name `xml:"FrToDt"`
			From    string   `xml:"FrDtTm"`
			To      string   `xml:"ToDtTm"`
		}{From: statementTime(s.From), To: statementTime(s.To)},
		struct {
			XMLName xml.Name `xml:"Acct"`
			ID      string   `xml:"Id>Othr>Id"`
			Ccy     string   `xml:"Ccy"`
		}{ID: s.Account.AccountID, Ccy: s.Account.Currency},
		c.balance("OPBD", s.Opening, s.From),
		c.balance("CLBD", s.Closing, s.To),
		c.summary(),
	} {
		if err := c.enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// balance is a booked balance at at; one dated after the statement was
// made is not booked yet: it is the interim booked balance (ITBD) at the
// moment the statement was made.
func (c *camtStatement) balance(code string, v decimal.Decimal, at time.Time) camtBalance {
	if at.After(c.now) {
		code, at = "ITBD", c.now
	}
	amt, ind := c.amount(v)
	return camtBalance{Code: code, Amt: amt, CdtDbtInd: ind, At: statementTime(at)}
}

// summary is TxsSummry: sums of absolute amounts, with the currency's
// places like every other amount of the statement.
func (c *camtStatement) summary() camtSummary {
	s := c.s
	format := func(v decimal.Decimal) string { return ledger.FormatAmount(s.Account.Currency, v.Abs()) }
	var out camtSummary
	out.All.N, out.All.Sum = s.Count(), format(s.Credits.Sub(s.Debits))
	net := s.Credits.Add(s.Debits)
	out.All.Net.Amt, out.All.Net.CdtDbtInd = format(net), "CRDT"
	if net.IsNegative() {
		out.All.Net.CdtDbtInd = "DBIT"
	}
	out.Credits = camtCount{N: s.CreditCount, Sum: format(s.Credits)}
	out.Debits = camtCount{N: s.DebitCount, Sum: format(s.Debits)}
	return out
}

func (c *camtStatement) entry(e ledger.Entry) error {
	if !camtFits(e.Amount) {
		return fmt.Errorf("admin: entry %s of %s does not fit camt.053", e.TransactionID, e.Amount)
	}
	ref := strings.ReplaceAll(e.TransactionID, "-", "")
	var n camtEntry
	n.Ref, n.AcctSvcrRef, n.Tx.AcctSvcrRef = ref, ref, ref
	n.Amt, n.CdtDbtInd = c.amount(e.Amount)
	n.Tx.Amt, n.Tx.CdtDbtInd = n.Amt, n.CdtDbtInd
	n.Status = "BOOK"
	n.Booked = statementTime(e.CreatedAt)
	n.Value = n.Booked
	n.Code, n.Issuer = e.Kind, camtIssuer
	memo, reference, escaped := camtTexts(e.Memo, e.Reference)
	n.Tx.Remittance = chunks(memo, 140)
	n.Tx.Info = truncateRunes(reference, 500)
	if escaped {
		n.Note = camtEscapedNote
	}
	return c.enc.Encode(n)
}

// provisionalNote is AddtlStmtInf of a statement whose period ends after
// it was made (Max500Text).
func (c *camtStatement) provisionalNote() string {
	return "PROVISIONAL: the period ends " + statementTime(c.s.To) + ", after this statement was made (" +
		statementTime(c.now) + "); balances dated after that are interim booked balances (ITBD) at " +
		statementTime(c.now) + ", and entries booked later are not in it."
}

func (c *camtStatement) end() error {
	if c.s.To.After(c.now) {
		note := struct {
			XMLName xml.Name `xml:"AddtlStmtInf"`
			V       string   `xml:",chardata"`
		}{V: c.provisionalNote()}
		if err := c.enc.Encode(note); err != nil {
			return err
		}
	}
	for _, name := range []string{"Stmt", "BkToCstmrStmt", "Document"} {
		if err := c.finish(name); err != nil {
			return err
		}
	}
	return c.enc.Close()
}

// chunks cuts s into pieces of at most n characters (none for "").
func chunks(s string, n int) []string {
	var out []string
	for s != "" {
		i, count := 0, 0
		for i < len(s) && count < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	if c := chunks(s, n); len(c) > 0 {
		return c[0]
	}
	return ""
}
