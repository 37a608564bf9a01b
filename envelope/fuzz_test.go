package envelope_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/provider-ledger/adapter/envelope"
)

// The checked-in corpus under testdata/fuzz is sealed with testKeys(2) and
// regenerated with:
//
//	ENVELOPE_WRITE_CORPUS=1 go test -run TestFuzzCorpus ./envelope/
//
// Without the variable, TestFuzzCorpus checks that the files are there and
// that the sealed seeds still open, so the corpus keeps exercising the deep
// paths (a seed that no longer opens only tests the header check).

var fuzzKeys = testKeys(2)

func openSeeds(t testing.TB) map[string]string {
	t.Helper()
	c := requestClaims(t, "fuzz")
	seeds := map[string]string{
		"empty":          "",
		"dots":           "....",
		"zip-header":     b64(`{"alg":"A256KW","enc":"A256GCM","zip":"DEF"}`) + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA",
		"dir-header":     b64(`{"alg":"dir","enc":"A256GCM"}`) + "..AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA",
		"garbage-inside": "",
	}
	for i, f := range forms {
		seeds["sealed-"+f.String()] = seal(t, fuzzKeys[i%2], f, c)
	}
	g, err := envelope.SealRaw(fuzzKeys[0], []byte("a.b.c"))
	if err != nil {
		t.Fatal(err)
	}
	seeds["garbage-inside"] = g
	return seeds
}

func claimsSeeds() map[string]string {
	return map[string]string{
		"valid":     `{"exp":1760000300,"iat":1760000000,"typ":"authorize","service":{"providerID":"local"}}`,
		"exponent":  `{"exp":1.7e9,"iat":17000000000e-1,"service":{}}`,
		"fraction":  `{"exp":1.5,"iat":1}`,
		"string":    `{"exp":"1","iat":1}`,
		"duplicate": `{"exp":1,"exp":2,"iat":1}`,
		"escaped":   `{"\u0065xp":1,"iat":1,"service":{"a":"\"}"}}`,
		"nested":    `{"exp":1,"iat":1,"service":{"a":[{"b":[]}],"c":"]}"}}`,
		"array":     `[]`,
		// Strings encoding/json would decode with U+FFFD, and their exact
		// neighbours.
		"lone-high":         `{"exp":1,"iat":1,"service":{"payoutID":"p-\ud800"}}`,
		"lone-low":          `{"exp":1,"iat":1,"service":{"payoutID":"p-\udc00"}}`,
		"reversed-pair":     `{"exp":1,"iat":1,"service":{"payoutID":"p-\udc00\ud800"}}`,
		"pair":              `{"exp":1,"iat":1,"service":{"payoutID":"p-\ud83d\ude00"}}`,
		"invalid-utf8":      "{\"exp\":1,\"iat\":1,\"service\":{\"payoutID\":\"p-\xff\"}}",
		"encoded-surrogate": "{\"exp\":1,\"iat\":1,\"service\":{\"payoutID\":\"p-\xed\xa0\x80\"}}",
		"bad-name":          `{"exp":1,"iat":1,"service":{"payout\udbff":"p"}}`,
		"backslash-u0000":   `{"exp":1,"iat":1,"service":{"memo":"\\u0000"}}`,
		"nested-duplicate":  `{"exp":1,"iat":1,"service":{"payoutID":"a","payout\u0049D":"b"}}`,
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range openSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, compact string) {
		o, err := envelope.Open(compact, fuzzKeys)
		if err != nil {
			for _, want := range []error{envelope.ErrMalformedJWE, envelope.ErrUnsupportedHeader,
				envelope.ErrUndecryptable, envelope.ErrMalformedJWT} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Open: unexpected error %v", err)
		}
		if c := bytes.TrimLeft(o.Claims, " \t\r\n"); !json.Valid(o.Claims) || len(c) == 0 || c[0] != '{' {
			t.Fatalf("opened claims are not a JSON object: %q", o.Claims)
		}
		_, _ = envelope.ParseClaims(o.Claims)
		// Whatever opens must round trip, in its form, with its key.
		again, err := o.Reply(o.Claims)
		if err != nil {
			t.Fatalf("reseal: %v", err)
		}
		o2, err := envelope.Open(again, fuzzKeys)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if !bytes.Equal(o2.Claims, o.Claims) || o2.Form != o.Form || o2.Key.ID != o.Key.ID {
			t.Fatalf("round trip changed %q %v %v into %q %v %v", o.Claims, o.Form, o.Key, o2.Claims, o2.Form, o2.Key)
		}
	})
}

func FuzzParseClaims(f *testing.F) {
	for _, s := range claimsSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := envelope.ParseClaims(b)
		var ce *envelope.ClaimError
		if err != nil {
			if !errors.Is(err, envelope.ErrMalformedClaims) || !errors.As(err, &ce) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		// Accepted claims are text that encoding/json decodes exactly.
		if !utf8.Valid(b) {
			t.Fatalf("ParseClaims accepted bytes that are not UTF-8: %q", b)
		}
		// Differential check against encoding/json (case-sensitive lookup
		// in a map; duplicates were refused, so last-wins does not matter).
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("ParseClaims accepted what encoding/json refuses: %v", err)
		}
		for name, got := range map[string]int64{"exp": h.Exp, "iat": h.Iat} {
			r, ok := new(big.Rat).SetString(string(m[name]))
			if !ok || !r.IsInt() || r.Num().Cmp(big.NewInt(got)) != 0 {
				t.Fatalf("%s: ParseClaims = %d, encoding/json saw %s", name, got, m[name])
			}
		}
		if raw, ok := m["typ"]; ok {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil || s != h.Typ {
				t.Fatalf("typ: %q vs %s", h.Typ, raw)
			}
		} else if h.Typ != "" {
			t.Fatalf("typ %q from nowhere", h.Typ)
		}
		if raw, ok := m["service"]; ok != (h.Service != nil) || ok && !bytes.Equal(raw, h.Service) {
			t.Fatalf("service: %s vs %s", h.Service, raw)
		}
	})
}

// TestFuzzCorpus checks (or, with ENVELOPE_WRITE_CORPUS=1, writes) the
// checked-in seed files.
func TestFuzzCorpus(t *testing.T) {
	t.Parallel()
	write := os.Getenv("ENVELOPE_WRITE_CORPUS") == "1"
	files := map[string]map[string]string{"FuzzOpen": {}, "FuzzParseClaims": {}}
	for name, s := range openSeeds(t) {
		files["FuzzOpen"][name] = "go test fuzz v1\nstring(" + strconv.Quote(s) + ")\n"
	}
	for name, s := range claimsSeeds() {
		files["FuzzParseClaims"][name] = "go test fuzz v1\n[]byte(" + strconv.Quote(s) + ")\n"
	}
	for fuzz, seeds := range files {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range seeds {
				if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name := range seeds {
			b, err := os.ReadFile(filepath.Join(dir, "seed-"+name))
			if err != nil {
				t.Fatalf("missing corpus file (regenerate, see fuzz_test.go): %v", err)
			}
			lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
			if len(lines) != 2 || lines[0] != "go test fuzz v1" {
				t.Fatalf("%s/%s: not a corpus file", fuzz, name)
			}
			if fuzz != "FuzzOpen" || !strings.HasPrefix(name, "sealed-") {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			o, err := envelope.Open(s, fuzzKeys)
			if err != nil || o.Form.String() != strings.TrimPrefix(name, "sealed-") {
				t.Fatalf("corpus seed %s no longer opens as its form: %v %v", name, o.Form, err)
			}
		}
	}
	if write {
		fmt.Println("corpus written")
	}
}
