package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// checkCase is a document Check reads (with RefuseNUL when nul) and what
// it must say: ok, or the reason and the pointer of the refused value.
type checkCase struct {
	name, in string
	nul      bool
	reason   strictjson.Reason // 0: accepted
	pointer  string
}

// runCheck runs each case as a subtest of its own.
func runCheck(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wantCheck(t, strictjson.Check([]byte(c.in), strictjson.Options{RefuseNUL: c.nul}), c.reason, c.pointer)
		})
	}
}

// wantCheck checks err against reason (0: no error) and pointer.
func wantCheck(t *testing.T, err error, reason strictjson.Reason, pointer string) {
	t.Helper()
	if reason == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var e *strictjson.Error
	if !errors.As(err, &e) || e.Reason != reason || e.Pointer != pointer {
		t.Fatalf("err = %v, want reason %d at %q", err, reason, pointer)
	}
}

// TestCheckAcceptsExactJSON: valid documents pass, whatever their escapes,
// multibyte text, nesting or repeated names in different objects; NUL
// passes unless refused.
func TestCheckAcceptsExactJSON(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "Plain", in: `{"a":"b","c":[1,-2.5e3,true,false,null,{}],"d":{"e":[]}}`},
		{name: "SurrogatePair", in: `{"p":"p-\ud83d\ude00"}`},
		{name: "UpperCaseHex", in: `{"p":"\uD83D\uDE00\u00E9"}`},
		{name: "LiteralReplacementChar", in: "{\"p\":\"p-\uFFFD \\ufffd\"}"},
		{name: "Multibyte", in: `{"p":"é€𝄞"}`},
		{name: "EscapedBackslashThenU0000", in: `{"memo":"\\u0000"}`, nul: true},
		{name: "NULAllowedWithoutOption", in: `{"memo":"\u0000"}`},
		{name: "SameNameInSiblings", in: `{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`},
		{name: "SameNameNested", in: `{"x":{"x":{"x":1}}}`},
		{name: "DeepEnough", in: strings.Repeat("[", strictjson.MaxDepth) + strings.Repeat("]", strictjson.MaxDepth)},
	})
}

// TestCheckRefusesNUL: with RefuseNUL, a NUL in a value or a name is
// refused at its member, and an escaped backslash is not mistaken for one.
func TestCheckRefusesNUL(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "EscapedBackslashesThenNUL", in: `{"memo":"\\\\\u0000"}`, nul: true, reason: strictjson.NUL, pointer: "/memo"},
		{name: "NUL", in: `{"memo":"a\u0000"}`, nul: true, reason: strictjson.NUL, pointer: "/memo"},
		{name: "NULInName", in: `{"x":{"a\u0000":1}}`, nul: true, reason: strictjson.NUL, pointer: "/x"},
	})
}

// TestCheckRefusesLoneSurrogates: an escaped UTF-16 surrogate not in a
// high-low pair (which encoding/json would turn into U+FFFD) is refused,
// with the pointer of where it is.
func TestCheckRefusesLoneSurrogates(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "LoneHigh", in: `{"payoutID":"p-\ud800"}`, reason: strictjson.InvalidEscape, pointer: "/payoutID"},
		{name: "LoneLow", in: `{"payoutID":"p-\udc00"}`, reason: strictjson.InvalidEscape, pointer: "/payoutID"},
		{name: "Reversed", in: `{"payoutID":"\udc00\ud800"}`, reason: strictjson.InvalidEscape, pointer: "/payoutID"},
		{name: "HighThenOther", in: `{"p":"\ud800\u0041"}`, reason: strictjson.InvalidEscape, pointer: "/p"},
		{name: "HighThenText", in: `{"p":"\ud800x"}`, reason: strictjson.InvalidEscape, pointer: "/p"},
		{name: "HighAtEnd", in: `{"p":"\ud800"}`, reason: strictjson.InvalidEscape, pointer: "/p"},
		{name: "HighThenReplacementEscape", in: `{"p":"\ud800\ufffd"}`, reason: strictjson.InvalidEscape, pointer: "/p"},
		{name: "Deep", in: `{"service":{"amount":{"currency":{"code":"U\udfffSD"}}}}`, reason: strictjson.InvalidEscape, pointer: "/service/amount/currency/code"},
		{name: "InArray", in: `{"a":["x",{"b":["ok","\udc00"]}]}`, reason: strictjson.InvalidEscape, pointer: "/a/1/b/1"},
		{name: "PointerEscapes", in: `{"a/b":{"c~d":"\ud800"}}`, reason: strictjson.InvalidEscape, pointer: "/a~1b/c~0d"},
		{name: "BadName", in: `{"s":{"\ud800":1}}`, reason: strictjson.InvalidEscape, pointer: "/s"},
	})
}

// TestCheckRefusesInvalidUTF8: bytes that are not UTF-8 (invalid,
// truncated, an encoded surrogate, overlong) are refused where they are.
func TestCheckRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "InvalidUTF8", in: "{\"p\":\"p-\xff\"}", reason: strictjson.InvalidUTF8, pointer: "/p"},
		{name: "TruncatedUTF8", in: "{\"p\":\"p-\xe2\x82\"}", reason: strictjson.InvalidUTF8, pointer: "/p"},
		{name: "EncodedSurrogate", in: "{\"p\":\"\xed\xa0\x80\"}", reason: strictjson.InvalidUTF8, pointer: "/p"},
		{name: "Overlong", in: "{\"p\":\"\xc0\xaf\"}", reason: strictjson.InvalidUTF8, pointer: "/p"},
		{name: "BadNameUTF8", in: "{\"\xff\":1}", reason: strictjson.InvalidUTF8, pointer: ""},
	})
}

// TestCheckRefusesDuplicateNames: a name twice in one object (also when
// one is spelled with an escape) is refused, even among many members.
func TestCheckRefusesDuplicateNames(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "Duplicate", in: `{"service":{"payoutID":"a","payoutID":"b"}}`, reason: strictjson.DuplicateName, pointer: "/service/payoutID"},
		{name: "DuplicateByEscape", in: `{"payoutID":"a","payout\u0049D":"b"}`, reason: strictjson.DuplicateName, pointer: "/payoutID"},
	})
	t.Run("ManyMembers", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		b.WriteString("{")
		for i := range 200 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"m` + strings.Repeat("x", i) + `":1`)
		}
		wantCheck(t, strictjson.Check([]byte(b.String()+"}"), strictjson.Options{}), 0, "")
		wantCheck(t, strictjson.Check([]byte(b.String()+`,"mxxx":2}`), strictjson.Options{}), strictjson.DuplicateName, "/mxxx")
	})
}

// TestCheckRefusesSyntax: what is not one JSON value (truncated, trailing
// data, bad escapes, control characters, leading zeros, empty, nested
// past 10000 levels) is a syntax error; the error never quotes a value.
func TestCheckRefusesSyntax(t *testing.T) {
	t.Parallel()
	runCheck(t, []checkCase{
		{name: "NotJSON", in: `{"a":`, reason: strictjson.Syntax},
		{name: "Trailing", in: `{} {}`, reason: strictjson.Syntax},
		{name: "BadEscape", in: `{"a":"\x"}`, reason: strictjson.Syntax},
		{name: "ShortU", in: `{"a":"\u12"}`, reason: strictjson.Syntax},
		{name: "HighThenBadHex", in: `{"a":"\ud800\uzzzz"}`, reason: strictjson.Syntax},
		{name: "ControlChar", in: "{\"a\":\"\n\"}", reason: strictjson.Syntax},
		{name: "LeadingZero", in: `[01]`, reason: strictjson.Syntax},
		{name: "Empty", in: ``, reason: strictjson.Syntax},
		{name: "TooDeep", in: strings.Repeat("[", strictjson.MaxDepth+1) + strings.Repeat("]", strictjson.MaxDepth+1), reason: strictjson.Syntax},
	})
	t.Run("ErrorHidesValues", func(t *testing.T) {
		t.Parallel()
		err := strictjson.Check([]byte(`{"k":"secret-value\ud800"}`), strictjson.Options{})
		if err == nil || strings.Contains(err.Error(), "secret-value") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestUnquoteBytes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		reason   strictjson.Reason // why it is refused: Check of the token says the same
	}{
		{`"p-1"`, "p-1", 0},
		{`""`, "", 0},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", 0},
		{`"\ud83d\ude00"`, "😀", 0},
		{`"\\u0000"`, `\u0000`, 0},
		{`"\u0000"`, "\x00", 0},
		{"\"\uFFFD\"", "\uFFFD", 0},
		{`"p-\ud800"`, "", strictjson.InvalidEscape},
		{`"p-\udc00"`, "", strictjson.InvalidEscape},
		{"\"p-\xff\"", "", strictjson.InvalidUTF8},
		{"\"a\nb\"", "", strictjson.Syntax}, // a raw line break
		{`"abc`, "", strictjson.Syntax},
		{`"a" `, "", strictjson.Syntax}, // Check allows the space; a token does not
		{`"a"b"`, "", strictjson.Syntax},
		{`abc`, "", strictjson.Syntax},
		{`42`, "", strictjson.Syntax},
		{``, "", strictjson.Syntax},
	} {
		got, ok := strictjson.UnquoteBytes([]byte(c.in))
		if c.reason == 0 {
			if !ok || string(got) != c.want {
				t.Errorf("UnquoteBytes(%q) = %q, %v; want %q", c.in, got, ok, c.want)
			}
			continue
		}
		if ok {
			t.Errorf("UnquoteBytes(%q) = %q, want refused", c.in, got)
		}
		var e *strictjson.Error
		if err := strictjson.Check([]byte(c.in), strictjson.Options{}); c.reason != strictjson.Syntax &&
			(!errors.As(err, &e) || e.Reason != c.reason) {
			t.Errorf("Check(%q) = %v, want reason %d", c.in, err, c.reason)
		}
	}
	// Without escapes the content is raw's own bytes: no allocation.
	raw := []byte(`"hold_1"`)
	if got, _ := strictjson.UnquoteBytes(raw); &got[0] != &raw[1] {
		t.Error("UnquoteBytes copied a string without escapes")
	}
}

// TestCheckComparesNamesExactly: names that differ only in case are two
// names to Check, as the package doc warns: encoding/json decoding into a
// struct would fill one field from both.
func TestCheckComparesNamesExactly(t *testing.T) {
	t.Parallel()
	data := []byte(`{"payoutID":"a","PayoutID":"b"}`)
	if err := strictjson.Check(data, strictjson.Options{}); err != nil {
		t.Fatalf("Check = %v", err)
	}
	var v struct{ PayoutID string }
	if err := json.Unmarshal(data, &v); err != nil || v.PayoutID != "b" {
		t.Fatalf("encoding/json gave %q, %v: the package doc's warning is out of date", v.PayoutID, err)
	}
	var seen []string
	err := strictjson.Check(data, strictjson.Options{Visit: func(path []strictjson.Step, _, text []byte) {
		seen = append(seen, string(path[0].Name)+"="+string(text))
	}})
	if err != nil || len(seen) != 2 || seen[0] != "payoutID=a" || seen[1] != "PayoutID=b" {
		t.Fatalf("the visitor saw %q, %v", seen, err)
	}
}

// The seed corpora of the fuzz targets are in testdata/fuzz (lone, reversed
// and paired surrogate escapes, invalid and encoded-surrogate UTF-8, a
// literal U+FFFD, NUL and the text \\u0000, duplicates by escape); go test
// runs them as ordinary tests. Run longer with
//
//	go test ./internal/strictjson -run '^$' -fuzz FuzzCheck -fuzztime 60s

// FuzzCheck compares Check with encoding/json: what Check accepts,
// encoding/json accepts and decodes without any replacement character it
// did not read, and with no member named twice; what encoding/json takes
// exactly, Check accepts.
func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		err := strictjson.Check(data, strictjson.Options{RefuseNUL: true})
		var e *strictjson.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error %v is not an *Error", err)
		}
		valid := json.Valid(data)
		if e != nil && e.Reason == strictjson.Syntax {
			if valid && depth(data) <= strictjson.MaxDepth {
				t.Fatalf("Check says syntax error, encoding/json says valid: %q", data)
			}
			return
		}
		if !valid {
			if err == nil {
				t.Fatalf("Check accepted what encoding/json refuses: %q", data)
			}
			return // a problem found before the syntax error
		}
		exact, dup, nul := exactly(t, data)
		accept := exact && !dup && !nul && utf8.Valid(data)
		if accept != (err == nil) {
			t.Fatalf("Check = %v; encoding/json: exact %v, duplicate %v, NUL %v, UTF-8 %v: %q", err, exact, dup, nul, utf8.Valid(data), data)
		}
	})
}

// FuzzUnquote checks UnquoteBytes against encoding/json on one string
// token: what it decodes, encoding/json decodes to the same; what it
// refuses, encoding/json refuses or decodes with a replacement character
// the input did not hold.
func FuzzUnquote(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := strictjson.UnquoteBytes(raw)
		var want string
		jsonErr := json.Unmarshal(raw, &want)
		if jsonErr == nil && len(bytes.Trim(raw, " \t\r\n")) != len(raw) {
			jsonErr = errors.New("white space around the token") // UnquoteBytes takes the token alone
		}
		if jsonErr == nil && (len(raw) == 0 || raw[0] != '"') {
			jsonErr = errors.New("not a string")
		}
		if !ok {
			if jsonErr == nil && replacements(raw) == strings.Count(want, "\uFFFD") {
				t.Fatalf("UnquoteBytes refused what encoding/json decodes exactly: %q", raw)
			}
			return
		}
		if jsonErr != nil || string(got) != want {
			t.Fatalf("UnquoteBytes(%q) = %q, encoding/json %q, %v", raw, got, want, jsonErr)
		}
		if !utf8.Valid(got) || strings.Count(string(got), "\uFFFD") != replacements(raw) {
			t.Fatalf("UnquoteBytes(%q) = %q is not exact", raw, got)
		}
	})
}

// exactly walks data (valid JSON) with encoding/json's tokenizer and reports
// whether every string decoded without a replacement character that the
// input did not hold, whether an object named a member twice, and whether
// a string held NUL.
func exactly(t *testing.T, data []byte) (exact, dup, nul bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var decoded int
	type frame struct {
		names  map[string]bool
		object bool
		key    bool // the next string token is a member name
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("tokenizing valid JSON: %v", err)
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{names: map[string]bool{}, object: true, key: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
				if top > 0 && stack[top-1].object {
					stack[top-1].key = true
				}
			}
			continue
		case string:
			decoded += strings.Count(v, "\uFFFD")
			nul = nul || strings.IndexByte(v, 0) >= 0
			if top >= 0 && stack[top].object && stack[top].key {
				dup = dup || stack[top].names[v]
				stack[top].names[v] = true
				stack[top].key = false
				continue
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].key = true
		}
	}
	return decoded == replacements(data), dup, nul
}

// replacements counts the replacement characters written in data: U+FFFD
// itself, and \ufffd escapes (a backslash preceded by an even number of
// backslashes). Outside strings neither can occur in valid JSON.
func replacements(data []byte) int {
	n := bytes.Count(data, []byte("\uFFFD"))
	for i := 0; i+5 < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		if data[i+1] == 'u' && strings.EqualFold(string(data[i+2:i+6]), "fffd") {
			n++
		}
		i++ // skip the escaped character
	}
	return n
}

// depth is the nesting depth of valid JSON data.
func depth(data []byte) int {
	d, most, in := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			d++
			most = max(most, d)
		case !in && (c == '}' || c == ']'):
			d--
		}
	}
	return most
}

func BenchmarkCheckClaims(b *testing.B) {
	claims := []byte(`{"iat":1760000000,"exp":1760000300,"typ":"authorize","service":{"payoutID":"po-123456","providerID":"bank-1","externalID":"alice","fundingSource":"card-alice","amount":{"currency":{"code":"USD","decimalPlaces":2},"value":"10.00"},"fraudScore":0.1,"idempotencyKey":"k-123456","callerSubject":"sdk-user","requestID":"trace-1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := strictjson.Check(claims, strictjson.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
