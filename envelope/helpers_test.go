package envelope_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/envelope"
)

// testKey returns a deterministic key; the fuzz corpus files are sealed with
// testKey(0..2), so these derivations must not change.
func testKey(n int) envelope.Key {
	sum := sha256.Sum256([]byte("envelope test key " + strconv.Itoa(n)))
	return envelope.Key{ID: "k" + strconv.Itoa(n), Secret: sum[:]}
}

func testKeys(n int) []envelope.Key {
	ks := make([]envelope.Key, n)
	for i := range ks {
		ks[i] = testKey(i)
	}
	return ks
}

var testNow = time.Unix(1_760_000_000, 0)

// requestClaims returns request claims with a marker so tests can tell
// envelopes apart.
func requestClaims(t testing.TB, marker string) []byte {
	t.Helper()
	return claimsJSON(t, "authorize", map[string]any{
		"providerID": "local", "idempotencyKey": marker,
		"amount": map[string]string{"value": "12.34", "currency": "USD"},
	})
}

// claimsJSON writes claims as the service and the adapter do (package
// callbacks/claims, which this package does not know of): iat testNow, exp
// 300 s later, typ when not "", then service.
func claimsJSON(t testing.TB, typ string, service any) []byte {
	t.Helper()
	svc, err := json.Marshal(service)
	if err != nil {
		t.Fatal(err)
	}
	b := fmt.Appendf(nil, `{"iat":%d,"exp":%d`, testNow.Unix(), testNow.Unix()+300)
	if typ != "" {
		b = fmt.Appendf(b, `,"typ":%q`, typ)
	}
	return fmt.Appendf(b, `,"service":%s}`, svc)
}

func seal(t testing.TB, k envelope.Key, f envelope.Form, claims []byte) string {
	t.Helper()
	s, err := envelope.Seal(k, f, claims)
	if err != nil {
		t.Fatalf("Seal(%v, %v): %v", k, f, err)
	}
	return s
}

var forms = []envelope.Form{envelope.FormClaims, envelope.FormJWS, envelope.FormUnsecured}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// withHeader replaces the protected header of a compact JWE, keeping the
// other four segments (which then no longer authenticate: the header is the
// AAD). A token built this way can only be refused for its header by the
// header check itself; had it reached decryption it would be
// ErrUndecryptable.
func withHeader(compact, header string) string {
	_, rest, _ := strings.Cut(compact, ".")
	return b64(header) + "." + rest
}

func segments(t testing.TB, compact string) []string {
	t.Helper()
	s := strings.Split(compact, ".")
	if len(s) != 5 {
		t.Fatalf("%d segments", len(s))
	}
	return s
}

func decodeHeader(t testing.TB, compact string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(segments(t, compact)[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
