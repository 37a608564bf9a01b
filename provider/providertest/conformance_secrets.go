package providertest

// Conformance scenario SigningSecrets.

import (
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oapi-codegen/nullable"
)

func (c *conformance) createSecret(t *testing.T, version, key string) reply {
	t.Helper()
	h := hdr{"X-Service-Version": version}
	if key != "" {
		h["X-Idempotency-Key"] = key
	}
	return c.req(t, "POST", c.p("/signing-secrets"), "", h)
}

// secretCreated is the body of a signing-secret create: from v2026.10.00
// the secret nested under signingSecret, before it the secret itself.
type secretCreated struct {
	Nested nullable.Nullable[wireSecret] `json:"signingSecret"`
	wireSecret
}

func checkSecret(t *testing.T, s wireSecret) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s.Secret)
	if err != nil || len(raw) != 32 {
		t.Fatalf("secret is not Base64 of 32 bytes: %+v", s)
	}
	if s.SecretID == "" || s.CreatedOn == "" {
		t.Fatalf("secret metadata: %+v", s)
	}
	if has(s.RevokedOn) {
		t.Fatalf("new secret revoked: %+v", s)
	}
}

func (c *conformance) signingSecrets(t *testing.T) {
	key := "conf-" + c.run + "-" + randomHex(4)
	r := c.createSecret(t, "v2026.10.00", key)
	expect(t, r, http.StatusCreated)
	if r.Header.Get("X-Idempotency-Key") != key {
		t.Fatalf("key not echoed: %v", r.Header)
	}
	nested, ok := value(decode[secretCreated](t, r).Nested)
	if !ok {
		t.Fatalf("v2026.10.00 body is not nested: %s", r.Body)
	}
	checkSecret(t, nested)
	plaintext := nested.Secret

	t.Run("BeforeV20261000TheBodyIsTheSecret", func(t *testing.T) {
		r := c.createSecret(t, "v2026.07.00", "conf-old-"+randomHex(6))
		expect(t, r, http.StatusCreated)
		m := decode[secretCreated](t, r)
		if m.Nested.IsSpecified() {
			t.Fatalf("pre-v2026.10.00 body nested: %s", r.Body)
		}
		checkSecret(t, m.wireSecret)
	})
	t.Run("MissingOrMalformedKeyIsBadRequest", func(t *testing.T) {
		expectProblem(t, c.createSecret(t, "v2026.10.00", ""), http.StatusBadRequest)
		expectProblem(t, c.createSecret(t, "v2026.10.00", strings.Repeat("k", 256)), http.StatusBadRequest)
		expect(t, c.createSecret(t, "v2026.10.00", strings.Repeat("k", 250)+randomHex(2)), http.StatusCreated)
	})
	t.Run("ReplayIsConflictWithoutPlaintext", func(t *testing.T) {
		r := c.createSecret(t, "v2026.10.00", key)
		expectCode(t, r, "idempotency-key-reused")
		if strings.Contains(string(r.Body), plaintext) || strings.Contains(string(r.Body), `"secret"`) {
			t.Fatalf("replay leaks the secret: %s", r.Body)
		}
	})
	t.Run("ListIsMetadataNewestFirstSeveralActive", func(t *testing.T) { c.secretList(t, nested) })
	t.Run("ConcurrentRequestIsInProgress", c.secretCreateInProgress)
	t.Run("AfterTheRetentionWindowTheKeyCreatesANewSecret", func(t *testing.T) { c.secretKeyRetention(t, key, nested) })
}

// listsSecret reports whether a list of signing secrets holds the one of
// secretID.
func listsSecret(list []wireSecret, secretID string) bool {
	return slices.ContainsFunc(list, func(s wireSecret) bool { return s.SecretID == secretID })
}

// secretsList reads a page of signing secrets.
func secretsList(t *testing.T, r reply) []wireSecret {
	t.Helper()
	page := decode[secretsAnswer](t, r)
	if page.SigningSecrets == nil {
		t.Fatalf("no signingSecrets list: %s", r.Body)
	}
	return *page.SigningSecrets
}

// secretList checks that the list of signing secrets is metadata without
// values, newest first, and holds several active secrets, created among
// them.
func (c *conformance) secretList(t *testing.T, created wireSecret) {
	r := c.req(t, "GET", c.p("/signing-secrets?limit=100"), "", nil)
	expect(t, r, http.StatusOK)
	if strings.Contains(string(r.Body), created.Secret) || strings.Contains(string(r.Body), `"secret"`) {
		t.Fatalf("list carries secret values: %s", r.Body)
	}
	list := secretsList(t, r)
	if len(list) < 2 {
		t.Fatalf("want several active secrets, got %s", r.Body)
	}
	var prev time.Time
	for i, s := range list {
		at, err := time.Parse(time.RFC3339Nano, s.CreatedOn)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && at.After(prev) {
			t.Fatalf("not newest first: %s", r.Body)
		}
		prev = at
	}
	if !listsSecret(list, created.SecretID) {
		t.Fatal("created secret not listed")
	}
}

// secretCreateInProgress checks that a create sent while another with the
// same key is in flight is refused as in progress.
func (c *conformance) secretCreateInProgress(t *testing.T) {
	need(t, c.tg.Hooks.GateSecretCreates != nil, "GateSecretCreates")
	entered, open := c.tg.Hooks.GateSecretCreates()
	t.Cleanup(open)
	k := "conf-gate-" + randomHex(6)
	first := make(chan reply, 1)
	go func() { first <- c.createSecretNoFatal(k) }()
	if got := <-entered; got != k {
		t.Fatalf("gate saw %q", got)
	}
	expectCode(t, c.createSecret(t, "v2026.10.00", k), "idempotency-request-in-progress")
	open()
	expect(t, <-first, http.StatusCreated)
}

// secretKeyRetention checks that key, which created the secret created,
// is refused until the retention window ends and then creates a new
// secret, the earlier one staying active.
func (c *conformance) secretKeyRetention(t *testing.T, key string, created wireSecret) {
	need(t, c.tg.Hooks.Advance != nil, "Advance")
	c.tg.Hooks.Advance(IdempotencyRetention - time.Second)
	expectCode(t, c.createSecret(t, "v2026.10.00", key), "idempotency-key-reused")
	c.tg.Hooks.Advance(time.Second)
	r := c.createSecret(t, "v2026.10.00", key)
	expect(t, r, http.StatusCreated)
	again, ok := value(decode[secretCreated](t, r).Nested)
	if !ok || again.SecretID == created.SecretID || again.Secret == created.Secret {
		t.Fatalf("a new key window returned the old secret: %s", r.Body)
	}
	list := secretsList(t, c.req(t, "GET", c.p("/signing-secrets?limit=100"), "", nil))
	if !listsSecret(list, created.SecretID) {
		t.Fatal("the earlier secret is no longer active")
	}
}

// createSecretNoFatal is createSecret for a goroutine (no t.Fatal there).
func (c *conformance) createSecretNoFatal(key string) reply {
	req, _ := http.NewRequest("POST", strings.TrimSuffix(c.tg.BaseURL, "/")+c.p("/signing-secrets"), nil)
	req.SetBasicAuth(c.tg.APIKeyID, c.tg.APIKeySecret)
	req.Header.Set("X-Service-Version", "v2026.10.00")
	req.Header.Set("X-Idempotency-Key", key)
	resp, err := c.tg.HTTPClient.Do(req)
	if err != nil {
		return reply{Body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}
