package envelope_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

// TestFuzzCorpus checks (or, with ENVELOPE_WRITE_CORPUS=1, writes) the
// checked-in seed files.
func TestFuzzCorpus(t *testing.T) {
	t.Parallel()
	write := os.Getenv("ENVELOPE_WRITE_CORPUS") == "1"
	files := map[string]map[string]string{"FuzzOpen": {}}
	for name, s := range openSeeds(t) {
		files["FuzzOpen"][name] = "go test fuzz v1\nstring(" + strconv.Quote(s) + ")\n"
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
