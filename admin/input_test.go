package admin_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestInexactBodyStrings: a body string that encoding/json would decode
// with U+FFFD (a lone or reversed surrogate escape, bytes that are not
// UTF-8), a real NUL, or a member named twice is a 400 pointing at it, and
// changes nothing; the text \\u0000 (a backslash, then u0000) is not a NUL.
func TestInexactBodyStrings(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "in-1", Owner: "bob", Funds: "10.00", Source: "src-in-1"})
	for _, c := range []struct {
		name, method, path, body, pointer string
	}{
		{"LoneHighAccountID", "POST", "/v1/accounts", `{"accountID":"in-\ud800","ownerExternalID":"eve","currency":"USD"}`, "/accountID"},
		{"LoneLowAccountID", "POST", "/v1/accounts", `{"accountID":"in-\udc00","ownerExternalID":"eve","currency":"USD"}`, "/accountID"},
		{"ReversedOwner", "POST", "/v1/accounts", `{"accountID":"in-2","ownerExternalID":"\udc00\ud800","currency":"USD"}`, "/ownerExternalID"},
		{"InvalidUTF8Owner", "POST", "/v1/accounts", "{\"accountID\":\"in-2\",\"ownerExternalID\":\"e\xffve\",\"currency\":\"USD\"}", "/ownerExternalID"},
		{"DuplicateAccountID", "POST", "/v1/accounts", `{"accountID":"in-2","accountID":"in-3","ownerExternalID":"eve","currency":"USD"}`, "/accountID"},
		{"NULOwner", "POST", "/v1/accounts", `{"accountID":"in-2","ownerExternalID":"e\u0000ve","currency":"USD"}`, "/ownerExternalID"},
		{"BadName", "POST", "/v1/accounts", `{"accountID":"in-2","ownerExternalID":"eve","currency":"USD","\ud800":1}`, ""},
		{"MemoLoneSurrogate", "POST", "/v1/accounts/in-1/adjustments", `{"amount":"1","idempotencyKey":"k-in","memo":"\ud800"}`, "/memo"},
		{"KeyInvalidUTF8", "POST", "/v1/accounts/in-1/adjustments", "{\"amount\":\"1\",\"idempotencyKey\":\"k-\xfe\"}", "/idempotencyKey"},
		{"DuplicateAmount", "POST", "/v1/accounts/in-1/adjustments", `{"amount":"1","amount":"-5","idempotencyKey":"k-dup"}`, "/amount"},
		{"NULMemo", "POST", "/v1/accounts/in-1/adjustments", `{"amount":"1","idempotencyKey":"k-nul","memo":"\u0000"}`, "/memo"},
		{"StatusLoneSurrogate", "PATCH", "/v1/accounts/in-1", `{"status":"frozen\ud800"}`, "/status"},
		{"InstrumentToken", "POST", "/v1/instruments", `{"token":"card-\udc00","kind":"source","accountID":"in-1"}`, "/token"},
		{"DuplicateInstrumentAccount", "POST", "/v1/instruments", `{"token":"card-x","kind":"source","accountID":"in-1","accountID":"in-9"}`, "/accountID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := b.do(t, c.method, c.path, c.body)
			a.problem(t, 400, "invalid-request", c.pointer)
			for _, v := range []string{"in-", "e\xffve", "k-in", "k-dup", "card-"} {
				if strings.Contains(a.raw, v) {
					t.Fatalf("the problem echoes input: %s", a.raw)
				}
			}
		})
	}
	storetest.AssertBalances(t, b.db, "in-1", "10", "0", "10")
	if a, _ := b.db.GetAccount(context.Background(), "in-1"); a.Status != "open" {
		t.Fatalf("account changed: %+v", a)
	}
	for _, id := range []string{"in-2", "in-3"} {
		if _, err := b.db.GetAccount(context.Background(), id); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("a refused account %s was created: %v", id, err)
		}
	}

	t.Run("EscapedBackslashU0000IsText", func(t *testing.T) {
		if a := b.do(t, "POST", "/v1/accounts/in-1/adjustments", `{"amount":"1","idempotencyKey":"k-text","memo":"C:\\u0000 is a path"}`); a.status != 201 {
			t.Fatalf("adjust = %d %s", a.status, a.raw)
		}
		if a := b.do(t, "POST", "/v1/accounts", `{"accountID":"in-\\u0000","ownerExternalID":"a\\u0000b","currency":"USD"}`); a.status != 201 || a.body["accountID"] != `in-\u0000` || a.body["ownerExternalID"] != `a\u0000b` {
			t.Fatalf("create = %d %s", a.status, a.raw)
		}
	})
	t.Run("SurrogatePairIsText", func(t *testing.T) {
		// A Han ideograph beyond the BMP (an emoji is no identifier: UTS #39).
		if a := b.do(t, "POST", "/v1/accounts", `{"accountID":"in-\ud840\udc00","ownerExternalID":"eve","currency":"USD"}`); a.status != 201 || a.body["accountID"] != "in-\U00020000" {
			t.Fatalf("create = %d %s", a.status, a.raw)
		}
	})
}

// TestReconciliationBodyDuplicateFix: {"fix":false,"fix":true} is refused,
// not read as either.
func TestReconciliationBodyDuplicateFix(t *testing.T) {
	t.Parallel()
	rec := &recordingReconciler{}
	api := admin.New(admin.Config{Reconciler: rec})
	call(t, api, "POST", "/v1/reconciliation/runs", `{"fix":false,"fix":true}`).problem(t, 400, "invalid-request", "/fix")
	if len(rec.fixes) != 0 {
		t.Fatalf("a run was started: %v", rec.fixes)
	}
}

// TestPathAndQueryValues: NUL or bytes that are not UTF-8 in a path or
// query value are a 400 pointing at the parameter, found before any
// database call (here the database is unreachable: 503 would mean it was
// called); a holds cursor this API did not write is a 400 at /cursor.
func TestPathAndQueryValues(t *testing.T) {
	t.Parallel()
	down, err := store.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	offline := admin.New(admin.Config{DB: down})
	b := setup(t, "")
	for _, c := range []struct {
		name, method, path, body, pointer string
	}{
		{"AccountNUL", "GET", "/v1/accounts/%00", "", "/accountID"},
		{"AccountInvalidUTF8", "GET", "/v1/accounts/a%FFb", "", "/accountID"},
		{"AccountEncodedSurrogate", "GET", "/v1/accounts/a%ED%A0%80", "", "/accountID"},
		{"PatchAccountNUL", "PATCH", "/v1/accounts/a%00", `{"status":"frozen"}`, "/accountID"},
		{"AdjustAccountInvalidUTF8", "POST", "/v1/accounts/%C0%AF/adjustments", `{"amount":"1","idempotencyKey":"k"}`, "/accountID"},
		{"HoldNUL", "GET", "/v1/holds/hold_%00", "", "/holdReference"},
		{"HoldInvalidUTF8", "GET", "/v1/holds/%FF", "", "/holdReference"},
		{"PayoutIDInvalidUTF8", "GET", "/v1/holds?payoutID=%FF", "", "/payoutID"},
		{"PayoutIDNUL", "GET", "/v1/holds?payoutID=p%00", "", "/payoutID"},
		{"StatusNUL", "GET", "/v1/holds?status=held%00", "", "/status"},
		{"CursorInvalidUTF8", "GET", "/v1/holds?cursor=%FF", "", "/cursor"},
		{"LimitNUL", "GET", "/v1/holds?limit=1%00", "", "/limit"},
		{"CursorTwice", "GET", "/v1/holds?cursor=&cursor=garbage", "", "/cursor"},
		{"PayoutIDTwice", "GET", "/v1/holds?payoutID=a&payoutID=b", "", "/payoutID"},
		{"UnknownParameter", "GET", "/v1/holds?curser=garbage", "", "/curser"},
	} {
		t.Run(c.name, func(t *testing.T) {
			call(t, offline, c.method, c.path, c.body).problem(t, 400, "invalid-request", c.pointer)
			b.do(t, c.method, c.path, c.body).problem(t, 400, "invalid-request", c.pointer)
		})
	}

	t.Run("Cursor", func(t *testing.T) { checkHoldCursors(t, b) })

	t.Run("NoOptionsInAllow", func(t *testing.T) {
		for _, c := range []struct{ method, path, allow string }{
			{"DELETE", "/v1/accounts/x", "GET, PATCH"},
			{"OPTIONS", "/v1/accounts/x", "GET, PATCH"},
			{"PUT", "/v1/holds", "GET"},
			{"POST", "/healthz", "GET"},
		} {
			a := b.do(t, c.method, c.path, "")
			a.problem(t, 405, "method-not-allowed", "")
			if got := a.header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	})
}

// checkHoldCursors: the holds list pages by its cursor, and refuses any cursor
// it did not hand out (garbage, padding, a non-canonical or out-of-range time,
// no reference, NUL, invalid UTF-8) as invalid-request at /cursor.
func checkHoldCursors(t *testing.T, b bundle) {
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "cur-1", Owner: "dora", Funds: "50", Source: "src-cur-1"})
	for i := range 3 {
		if d := storetest.Hold(t, b.db, "po-cur-"+strconv.Itoa(i), "dora", "src-cur-1", "1"); !d.Approved() {
			t.Fatal(d)
		}
	}
	first := b.do(t, "GET", "/v1/holds?limit=2", "")
	next, _ := first.body["nextCursor"].(string)
	if first.status != 200 || next == "" {
		t.Fatalf("first page: %d %s", first.status, first.raw)
	}
	second := b.do(t, "GET", "/v1/holds?limit=2&cursor="+next, "")
	if hs, _ := second.body["holds"].([]any); second.status != 200 || len(hs) != 1 || second.body["hasMore"] != false {
		t.Fatalf("second page: %d %s", second.status, second.raw)
	}
	at, ref, _ := strings.Cut(string(must(base64.RawURLEncoding.DecodeString(next))), "|")
	for name, c := range map[string]string{
		"Garbage":          "garbage",
		"Padded":           next + "==",
		"NotCanonical":     cursor("+" + at + "|" + ref),
		"LeadingZero":      cursor("0" + at + "|" + ref),
		"NegativeTime":     cursor("-1|" + ref),
		"AfterYear9999":    cursor("253402300800000000|" + ref),
		"NoReference":      cursor(at + "|"),
		"NoSeparator":      cursor(at),
		"NULReference":     cursor(at + "|hold_\x00"),
		"InvalidUTF8Ref":   cursor(at + "|hold_\xff"),
		"NewlineInCursor":  next[:2] + "\n" + next[2:],
		"NonzeroTrailBits": trailBitSet(at + "|" + ref),
	} {
		t.Run(name, func(t *testing.T) {
			a := b.do(t, "GET", "/v1/holds?cursor="+urlQueryEscape(c), "")
			a.problem(t, 400, "invalid-request", "/cursor")
		})
	}
}

// trailBitSet encodes s as a cursor and sets a padding bit of its last
// character (s is lengthened to have one): the same bytes, encoded
// differently.
func trailBitSet(s string) string {
	if len(s)%3 == 0 {
		s += "x"
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	c := base64.RawURLEncoding.EncodeToString([]byte(s))
	return c[:len(c)-1] + string(alphabet[strings.IndexByte(alphabet, c[len(c)-1])^1])
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// urlQueryEscape escapes s for a query value, keeping it byte for byte.
func urlQueryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
	}
	return b.String()
}

// TestAccountIDLengthInCharacters: the README says 1 to 128 characters,
// and the database counts characters: 128 two-byte characters are an
// account ID, 129 are not.
func TestAccountIDLengthInCharacters(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	id := strings.Repeat("é", 128)
	if a := b.do(t, "POST", "/v1/accounts", `{"accountID":"`+id+`","ownerExternalID":"`+strings.Repeat("ü", 256)+`","currency":"USD"}`); a.status != 201 || a.body["accountID"] != id {
		t.Fatalf("128 characters: %d %s", a.status, a.raw)
	}
	b.do(t, "POST", "/v1/accounts", `{"accountID":"`+id+`é","ownerExternalID":"eve","currency":"USD"}`).problem(t, 400, "invalid-request", "/accountID")
	b.do(t, "POST", "/v1/accounts", `{"accountID":"x","ownerExternalID":"`+strings.Repeat("ü", 257)+`","currency":"USD"}`).problem(t, 400, "invalid-request", "/ownerExternalID")
}

// TestConfusableAccountIDs: an account ID that would print like another's
// is refused with 400 at /accountID and creates nothing: invisible format
// characters (zero-width space, a right-to-left override, a byte order
// mark) and a decomposed spelling ("e" and a combining accent) of what
// another account spells composed. Composed non-ASCII IDs stay accepted.
func TestConfusableAccountIDs(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	if a := b.do(t, "POST", "/v1/accounts", `{"accountID":"café-1","ownerExternalID":"zoe","currency":"USD"}`); a.status != 201 {
		t.Fatalf("composed café-1: %d %s", a.status, a.raw)
	}
	for name, id := range map[string]string{
		"ZeroWidthSpace":   `acc\u200b-1`,
		"RightToLeft":      `acc-\u202e1-gpj`,
		"ByteOrderMark":    `\ufeffacc-1`,
		"SoftHyphen":       `acc\u00ad-1`,
		"DecomposedAccent": `cafe\u0301-1`,
	} {
		t.Run(name, func(t *testing.T) {
			b.do(t, "POST", "/v1/accounts", `{"accountID":"`+id+`","ownerExternalID":"zoe","currency":"USD"}`).problem(t, 400, "invalid-request", "/accountID")
		})
	}
	if a := b.do(t, "GET", "/v1/accounts?ownerExternalID=zoe", ""); a.status != 200 || strings.Count(a.raw, `"accountID"`) != 1 {
		t.Errorf("zoe's accounts: %d %s, want café-1 alone", a.status, a.raw)
	}
}
