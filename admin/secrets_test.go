package admin_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// secretsBundle is the admin API over a real keyring.Vault on a fresh
// database. Every secret a test sends or receives is remembered; when the
// test ends the logs must hold none of them.
type secretsBundle struct {
	api     *admin.Handler
	store   *keyring.Vault
	db      *store.DB
	kek     []byte
	kekFP   string
	log     *slog.Logger
	logs    *lockedBuffer
	mu      sync.Mutex
	secrets [][]byte
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func setupSecrets(t *testing.T, token string) *secretsBundle {
	t.Helper()
	db, _ := storetest.DB(t)
	b := &secretsBundle{logs: &lockedBuffer{}, db: db}
	log := slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.log = log
	b.kek = make([]byte, keyring.KEKSize)
	if _, err := rand.Read(b.kek); err != nil {
		t.Fatal(err)
	}
	b.kekFP = keyring.KEKFingerprint(b.kek)
	secrets, err := keyring.NewVault(db, b.kek, keyring.VaultOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	b.store = secrets
	b.api = admin.New(admin.Config{Secrets: secrets, Token: token, Logger: log})
	t.Cleanup(func() {
		logs := b.logs.String()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, s := range b.secrets {
			for _, enc := range secretEncodings(s) {
				if strings.Contains(logs, enc) {
					t.Errorf("the logs contain a secret")
				}
			}
		}
	})
	return b
}

// newSecret returns a random secret, remembered, and its standard Base64.
func (b *secretsBundle) newSecret(t *testing.T) ([]byte, string) {
	t.Helper()
	s := make([]byte, envelope.SecretSize)
	if _, err := rand.Read(s); err != nil {
		t.Fatal(err)
	}
	b.remember(s)
	return s, base64.StdEncoding.EncodeToString(s)
}

func (b *secretsBundle) remember(s []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.secrets = append(b.secrets, s)
}

func secretEncodings(s []byte) []string {
	return []string{
		base64.StdEncoding.EncodeToString(s), base64.RawStdEncoding.EncodeToString(s),
		base64.URLEncoding.EncodeToString(s), base64.RawURLEncoding.EncodeToString(s),
		hex.EncodeToString(s),
	}
}

func (b *secretsBundle) do(t *testing.T, method, path, body string, hdr ...string) answer {
	t.Helper()
	return call(t, b.api, method, path, body, hdr...)
}

func (a answer) mustNotContain(t *testing.T, secrets ...[]byte) {
	t.Helper()
	for _, s := range secrets {
		for _, enc := range secretEncodings(s) {
			if strings.Contains(a.raw, enc) {
				t.Fatalf("the answer contains a secret: %s", a.raw)
			}
		}
	}
}

// list fetches GET /v1/signing-secrets and returns its entries.
func (b *secretsBundle) list(t *testing.T) ([]map[string]any, answer) {
	t.Helper()
	a := b.do(t, "GET", "/v1/signing-secrets", "")
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("list = %d %s", a.status, a.raw)
	}
	raw, ok := a.body["signingSecrets"].([]any)
	if !ok || len(a.body) != 1 {
		t.Fatalf("list body %s, want {signingSecrets: [...]}", a.raw)
	}
	out := make([]map[string]any, len(raw))
	for i, e := range raw {
		out[i] = e.(map[string]any)
	}
	return out, a
}

func (b *secretsBundle) activeSecrets(t *testing.T) [][]byte {
	t.Helper()
	keys, err := b.store.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = k.Secret
	}
	return out
}

func TestSigningSecretsAPIListEmpty(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	entries, a := b.list(t)
	if len(entries) != 0 || strings.TrimSpace(a.raw) != `{"signingSecrets":[]}` {
		t.Fatalf("empty list = %s", a.raw)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Fatal("no Cache-Control: no-store")
	}
}

func TestSigningSecretsAPIAddListRetire(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	secret, b64 := b.newSecret(t)
	fp := envelope.Key{Secret: secret}.Fingerprint()

	a := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	id, _ := a.body["secretID"].(string)
	if a.status != http.StatusCreated || !strings.HasPrefix(id, "sec_") || a.body["fingerprint"] != fp || len(a.body) != 2 {
		t.Fatalf("add = %d %s; want 201 {secretID, fingerprint}", a.status, a.raw)
	}
	a.mustNotContain(t, secret)

	// The same secret again, written URL-safe and unpadded: found, 200.
	again := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+base64.RawURLEncoding.EncodeToString(secret)+`"}`)
	if again.status != http.StatusOK || again.body["secretID"] != id || again.body["fingerprint"] != fp || len(again.body) != 2 {
		t.Fatalf("add again = %d %s; want 200 with %s", again.status, again.raw, id)
	}
	if act := b.activeSecrets(t); len(act) != 1 || !bytes.Equal(act[0], secret) {
		t.Fatal("the added secret is not the active one")
	}

	entries, la := b.list(t)
	la.mustNotContain(t, secret)
	if len(entries) != 1 || entries[0]["secretID"] != id || entries[0]["fingerprint"] != fp ||
		entries[0]["retiredOn"] != nil || entries[0]["kekFingerprint"] != b.kekFP || len(entries[0]) != 5 {
		t.Fatalf("list = %s", la.raw)
	}
	if _, present := entries[0]["retiredOn"]; !present {
		t.Fatal("retiredOn is absent, want null while active")
	}
	if _, err := time.Parse(time.RFC3339Nano, entries[0]["addedOn"].(string)); err != nil {
		t.Fatalf("addedOn is not RFC 3339: %v", err)
	}

	del := b.do(t, "DELETE", "/v1/signing-secrets/"+id, "")
	if del.status != http.StatusNoContent || del.raw != "" {
		t.Fatalf("delete = %d %q; want 204, no body", del.status, del.raw)
	}
	if len(b.activeSecrets(t)) != 0 {
		t.Fatal("a retired secret is still active")
	}
	entries, _ = b.list(t)
	retiredOn, _ := entries[0]["retiredOn"].(string)
	if ts, err := time.Parse(time.RFC3339Nano, retiredOn); err != nil || ts.IsZero() {
		t.Fatalf("retiredOn = %v: %v", entries[0]["retiredOn"], err)
	}

	// Retiring again is a no-op; adding it again is refused.
	if a := b.do(t, "DELETE", "/v1/signing-secrets/"+id, ""); a.status != http.StatusNoContent {
		t.Fatalf("delete again = %d %s", a.status, a.raw)
	}
	if entries2, _ := b.list(t); entries2[0]["retiredOn"] != retiredOn {
		t.Fatal("a second retire moved retiredOn")
	}
	re := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	re.problem(t, http.StatusConflict, "secret-retired", "")
	re.mustNotContain(t, secret)
	b.do(t, "DELETE", "/v1/signing-secrets/sec_aaaaaaaaaaaaaaaaaaaaaaaaaa", "").problem(t, http.StatusNotFound, "secret-not-found", "")
	b.do(t, "DELETE", "/v1/signing-secrets/whatever", "").problem(t, http.StatusNotFound, "secret-not-found", "")
	if len(b.activeSecrets(t)) != 0 {
		t.Fatal("a refused add made a secret active")
	}
}

func TestSigningSecretsAPIListIsNewestFirst(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	var ids []string
	for range 3 {
		_, b64 := b.newSecret(t)
		a := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
		ids = append(ids, a.body["secretID"].(string))
		// Distinct addedOn (kept to the microsecond): the store's clock is
		// real here, and stamped this one before it answered; the next is
		// added once the clock is past the microsecond of the answer.
		answered := time.Now().Truncate(time.Microsecond)
		for !time.Now().Truncate(time.Microsecond).After(answered) {
			runtime.Gosched()
		}
	}
	entries, _ := b.list(t)
	got := []string{}
	for _, e := range entries {
		got = append(got, e["secretID"].(string))
	}
	if want := []string{ids[2], ids[1], ids[0]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("list order %v, want %v", got, want)
	}
}

func TestSigningSecretsAPIGenerate(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	a := b.do(t, "POST", "/v1/signing-secrets", `{"generate":true}`)
	b64, _ := a.body["secret"].(string)
	secret, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err == nil {
		b.remember(secret)
	}
	if a.status != http.StatusCreated || err != nil || len(secret) != envelope.SecretSize || len(a.body) != 3 ||
		a.body["fingerprint"] != (envelope.Key{Secret: secret}).Fingerprint() {
		t.Fatalf("generate = %d %s; want 201 {secretID, fingerprint, secret (standard Base64 of 32 bytes)}", a.status, a.raw)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Fatal("the answer holding a secret may be cached")
	}
	if act := b.activeSecrets(t); len(act) != 1 || !bytes.Equal(act[0], secret) {
		t.Fatal("the generated secret is not the active one")
	}
	_, la := b.list(t)
	la.mustNotContain(t, secret)
	if !strings.Contains(la.raw, a.body["secretID"].(string)) {
		t.Fatal("the generated secret is not listed")
	}
	// Adding the generated value back finds it and does not echo it.
	again := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	if again.status != http.StatusOK || again.body["secretID"] != a.body["secretID"] {
		t.Fatalf("add of the generated secret = %d %s", again.status, again.raw)
	}
	again.mustNotContain(t, secret)
}

func TestSigningSecretsAPIBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	existing, existingB64 := b.newSecret(t)
	if a := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+existingB64+`"}`); a.status != http.StatusCreated {
		t.Fatalf("seed = %d %s", a.status, a.raw)
	}
	fresh, freshB64 := b.newSecret(t)
	short := base64.StdEncoding.EncodeToString(fresh[:31])
	long := base64.StdEncoding.EncodeToString(append(append([]byte(nil), fresh...), 0))
	_, before := b.list(t)

	for _, c := range []struct {
		name, method, path, body string
		status                   int
		slug, pointer            string
	}{
		{"NotBase64", "POST", "/v1/signing-secrets", `{"secret":"this is not base64 at all, no!!"}`, 400, "invalid-request", "/secret"},
		{"Short", "POST", "/v1/signing-secrets", `{"secret":"` + short + `"}`, 400, "invalid-request", "/secret"},
		{"Long", "POST", "/v1/signing-secrets", `{"secret":"` + long + `"}`, 400, "invalid-request", "/secret"},
		{"Empty", "POST", "/v1/signing-secrets", `{"secret":""}`, 400, "invalid-request", "/secret"},
		{"SecretNumber", "POST", "/v1/signing-secrets", `{"secret":12345}`, 400, "invalid-request", "/secret"},
		{"SecretNull", "POST", "/v1/signing-secrets", `{"secret":null}`, 400, "invalid-request", "/secret"},
		{"SecretArray", "POST", "/v1/signing-secrets", `{"secret":["` + freshB64 + `"]}`, 400, "invalid-request", "/secret"},
		{"SecretBytesArray", "POST", "/v1/signing-secrets", `{"secret":[1,2,3]}`, 400, "invalid-request", "/secret"},
		{"Both", "POST", "/v1/signing-secrets", `{"secret":"` + freshB64 + `","generate":true}`, 400, "invalid-request", "/generate"},
		{"BothWithGenerateFalse", "POST", "/v1/signing-secrets", `{"secret":"` + freshB64 + `","generate":false}`, 400, "invalid-request", "/generate"},
		{"Neither", "POST", "/v1/signing-secrets", `{}`, 400, "invalid-request", "/secret"},
		{"AllZero", "POST", "/v1/signing-secrets", `{"secret":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"}`, 400, "invalid-request", "/secret"},
		{"AllSame", "POST", "/v1/signing-secrets", `{"secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 32)) + `"}`, 400, "invalid-request", "/secret"},
		{"RepeatingPattern", "POST", "/v1/signing-secrets", `{"secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat(fresh[:8], 4)) + `"}`, 400, "invalid-request", "/secret"},
		{"RepeatedHalf", "POST", "/v1/signing-secrets", `{"secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat(fresh[:16], 2)) + `"}`, 400, "invalid-request", "/secret"},
		{"Counting", "POST", "/v1/signing-secrets", `{"secret":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`, 400, "invalid-request", "/secret"},
		{"FewDistinctBytes", "POST", "/v1/signing-secrets", `{"secret":"` + base64.StdEncoding.EncodeToString([]byte("letmein!letmeout!letmein!letmeou")) + `"}`, 400, "invalid-request", "/secret"},
		{"SecretLoneSurrogate", "POST", "/v1/signing-secrets", `{"secret":"\ud800` + freshB64[1:] + `"}`, 400, "invalid-request", "/secret"},
		{"SecretTwice", "POST", "/v1/signing-secrets", `{"secret":"` + freshB64 + `","secret":"` + freshB64 + `"}`, 400, "invalid-request", "/secret"},
		{"RetireNUL", "DELETE", "/v1/signing-secrets/sec_%00", "", 400, "invalid-request", "/secretID"},
		{"GenerateFalse", "POST", "/v1/signing-secrets", `{"generate":false}`, 400, "invalid-request", "/generate"},
		{"GenerateString", "POST", "/v1/signing-secrets", `{"generate":"true"}`, 400, "invalid-request", "/generate"},
		{"GenerateNumber", "POST", "/v1/signing-secrets", `{"generate":1}`, 400, "invalid-request", "/generate"},
		{"GenerateNull", "POST", "/v1/signing-secrets", `{"generate":null}`, 400, "invalid-request", "/generate"},
		{"UnknownField", "POST", "/v1/signing-secrets", `{"secret":"` + freshB64 + `","id":"mine"}`, 400, "invalid-request", "/id"},
		{"WrongCase", "POST", "/v1/signing-secrets", `{"Secret":"` + freshB64 + `"}`, 400, "invalid-request", "/Secret"},
		{"NotJSON", "POST", "/v1/signing-secrets", `{"secret":`, 400, "invalid-request", ""},
		{"TwoObjects", "POST", "/v1/signing-secrets", `{"secret":"` + freshB64 + `"}{"generate":true}`, 400, "invalid-request", ""},
		{"Array", "POST", "/v1/signing-secrets", `[{"generate":true}]`, 400, "invalid-request", ""},
		{"EmptyBody", "POST", "/v1/signing-secrets", ``, 400, "invalid-request", ""},
		{"RetiredOnlyByID", "DELETE", "/v1/signing-secrets/sec_zzzzzzzzzzzzzzzzzzzzzzzzzz", "", 404, "secret-not-found", ""},
		{"WrongMethod", "PUT", "/v1/signing-secrets", `{"generate":true}`, 405, "method-not-allowed", ""},
		{"DeleteCollection", "DELETE", "/v1/signing-secrets", "", 405, "method-not-allowed", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := b.do(t, c.method, c.path, c.body)
			a.problem(t, c.status, c.slug, c.pointer)
			a.mustNotContain(t, fresh, existing)
			if strings.Contains(a.raw, short) || strings.Contains(a.raw, long) {
				t.Fatalf("the problem echoes the input: %s", a.raw)
			}
		})
	}
	t.Run("TooLarge", func(t *testing.T) {
		big := `{"secret":"` + strings.Repeat("A", admin.MaxBody) + `"}`
		b.do(t, "POST", "/v1/signing-secrets", big).problem(t, 400, "body-too-large", "")
	})

	_, after := b.list(t)
	if after.raw != before.raw {
		t.Fatalf("bad input changed the secrets:\nbefore %s\nafter  %s", before.raw, after.raw)
	}
	if act := b.activeSecrets(t); len(act) != 1 || !bytes.Equal(act[0], existing) {
		t.Fatalf("active secrets changed: %d", len(act))
	}
}

func TestSigningSecretsAPIRequiresTheToken(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "s3cret-token")
	_, b64 := b.newSecret(t)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/signing-secrets", ""},
		{"POST", "/v1/signing-secrets", `{"secret":"` + b64 + `"}`},
		{"POST", "/v1/signing-secrets", `{"generate":true}`},
		{"DELETE", "/v1/signing-secrets/sec_aaaaaaaaaaaaaaaaaaaaaaaaaa", ""},
	} {
		b.do(t, c.method, c.path, c.body).problem(t, http.StatusUnauthorized, "unauthorized", "")
		b.do(t, c.method, c.path, c.body, "Authorization", "Bearer wrong").problem(t, http.StatusUnauthorized, "unauthorized", "")
	}
	if len(b.activeSecrets(t)) != 0 {
		t.Fatal("an unauthorized request stored a secret")
	}
	if a := b.do(t, "GET", "/v1/signing-secrets", "", "Authorization", "Bearer s3cret-token"); a.status != http.StatusOK {
		t.Fatalf("authorized list = %d %s", a.status, a.raw)
	}
}

func TestSigningSecretsAPINotMountedWithoutAStore(t *testing.T) {
	t.Parallel()
	api := admin.New(admin.Config{})
	rec := httptest.NewRecorder()
	admintest.Handler(t, api).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/signing-secrets", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("GET without a SecretStore = %d, want 404", rec.Code)
	}
}
