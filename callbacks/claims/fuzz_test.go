package claims_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/provider-ledger/adapter/callbacks/claims"
)

// The checked-in corpus under testdata/fuzz/FuzzParse is regenerated with:
//
//	CLAIMS_WRITE_CORPUS=1 go test -run TestFuzzCorpus ./callbacks/claims/
//
// FuzzParse runs over it as an ordinary test. Parse and Decode share one
// walk, so each input is also decoded for every endpoint (FuzzParse checks
// that Decode accepts nothing Parse refuses, and reads the same strings as
// encoding/json).

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

func FuzzParse(f *testing.F) {
	for _, s := range claimsSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := claims.Parse(b)
		checkDecode(t, b, err, h)
		var ce *claims.ClaimError
		if err != nil {
			if !errors.Is(err, claims.ErrMalformedClaims) || !errors.As(err, &ce) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		// Accepted claims are text that encoding/json decodes exactly.
		if !utf8.Valid(b) {
			t.Fatalf("Parse accepted bytes that are not UTF-8: %q", b)
		}
		// Differential check against encoding/json (case-sensitive lookup
		// in a map; duplicates were refused, so last-wins does not matter).
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("Parse accepted what encoding/json refuses: %v", err)
		}
		for name, got := range map[string]int64{"exp": h.Exp, "iat": h.Iat} {
			r, ok := new(big.Rat).SetString(string(m[name]))
			if !ok || !r.IsInt() || r.Num().Cmp(big.NewInt(got)) != 0 {
				t.Fatalf("%s: Parse = %d, encoding/json saw %s", name, got, m[name])
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

// checkDecode decodes b for every endpoint: Decode refuses what Parse
// refused, with the same error; it never refuses as malformed what Parse
// accepted; and the idempotencyKey it reads is encoding/json's.
func checkDecode(t *testing.T, b []byte, parseErr error, h claims.Header) {
	t.Helper()
	var svc map[string]any
	if parseErr == nil && h.Service != nil {
		if err := json.Unmarshal(h.Service, &svc); err != nil {
			t.Fatalf("service %s: %v", h.Service, err)
		}
	}
	for _, ep := range claims.Endpoints {
		var req claims.Request
		err := claims.Decode(b, ep, claims.Options{Now: time.Unix(h.Iat, 0), ProviderID: "local"}, &req)
		switch {
		case parseErr != nil:
			if err == nil || err.Error() != parseErr.Error() {
				t.Fatalf("%s: Decode = %v, Parse = %v", ep, err, parseErr)
			}
			continue
		case errors.Is(err, claims.ErrMalformedClaims):
			t.Fatalf("%s: Decode refused what Parse accepted: %v", ep, err)
		case req.Endpoint == "":
			continue
		}
		if k, ok := svc["idempotencyKey"].(string); ok && k != "" && len(k) <= 1024 && !strings.ContainsRune(k, 0) &&
			req.IdempotencyKey() != k {
			t.Fatalf("%s: idempotencyKey %q, encoding/json read %q", ep, req.IdempotencyKey(), k)
		}
	}
}

// TestFuzzCorpus checks (or, with CLAIMS_WRITE_CORPUS=1, writes) the
// checked-in seed files.
func TestFuzzCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	for name, s := range claimsSeeds() {
		content := "go test fuzz v1\n[]byte(" + strconv.Quote(s) + ")\n"
		path := filepath.Join(dir, "seed-"+name)
		if os.Getenv("CLAIMS_WRITE_CORPUS") == "1" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("missing corpus file (regenerate, see fuzz_test.go): %v", err)
		}
		if strings.TrimSpace(string(b)) != strings.TrimSpace(content) {
			t.Fatalf("%s differs from its seed (regenerate, see fuzz_test.go)", path)
		}
	}
}
