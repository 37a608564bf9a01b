package admin_test

import (
	"crypto/rand"
	"net/http"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/keyring"
)

// rotated is the admin API of a second replica on b's database, given a new
// KEK and b's KEK as the previous one (step 1 of a KEK rotation), and the
// new KEK's fingerprint.
func (b *secretsBundle) rotated(t *testing.T, token string) (*admin.Handler, string) {
	t.Helper()
	kek := make([]byte, keyring.KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	s, err := keyring.NewVault(b.db, kek, keyring.VaultOptions{Logger: b.log, PreviousKEK: b.kek})
	if err != nil {
		t.Fatal(err)
	}
	return admin.New(admin.Config{Secrets: s, Token: token, Logger: b.log}), keyring.KEKFingerprint(kek)
}

// The TestRekeyAPI… tests: POST /v1/keyring/rekey re-encrypts the secrets under the
// answering replica's current KEK and says what remains under another one.
func TestRekeyAPIMovesSecretsUnderTheNewKEKOnce(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	secret, b64 := b.newSecret(t)
	added := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	if added.status != http.StatusCreated {
		t.Fatalf("add = %d %s", added.status, added.raw)
	}
	api, newFP := b.rotated(t, "")
	a := call(t, api, "POST", "/v1/keyring/rekey", `{"kekFingerprint":"`+newFP+`"}`)
	if a.status != http.StatusOK || a.body["kekFingerprint"] != newFP || a.body["previousKEKFingerprint"] != b.kekFP ||
		a.body["rekeyed"] != 1.0 || a.body["current"] != 1.0 || a.body["remaining"] != 0.0 {
		t.Fatalf("rekey = %d %s", a.status, a.raw)
	}
	if rs, ok := a.body["remainingSecrets"].([]any); !ok || len(rs) != 0 {
		t.Fatalf("remainingSecrets = %s, want []", a.raw)
	}
	a.mustNotContain(t, secret)
	entries := call(t, api, "GET", "/v1/signing-secrets", "")
	if list := entries.body["signingSecrets"].([]any); list[0].(map[string]any)["kekFingerprint"] != newFP {
		t.Fatalf("after rekey, list = %s; want kekFingerprint %s", entries.raw, newFP)
	}
	// Twice is harmless: nothing left to do.
	again := call(t, api, "POST", "/v1/keyring/rekey", `{}`)
	if again.status != http.StatusOK || again.body["rekeyed"] != 0.0 || again.body["current"] != 1.0 || again.body["remaining"] != 0.0 {
		t.Fatalf("second rekey = %d %s", again.status, again.raw)
	}
}

func TestRekeyAPIOldReplicaReportsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	secret, b64 := b.newSecret(t)
	added := b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	api, newFP := b.rotated(t, "")
	call(t, api, "POST", "/v1/keyring/rekey", `{}`)
	// b's replica has only the old KEK: it moves nothing and names the
	// secret it cannot read, with its KEK, never its value.
	a := b.do(t, "POST", "/v1/keyring/rekey", `{}`)
	rs, _ := a.body["remainingSecrets"].([]any)
	if a.status != http.StatusOK || a.body["rekeyed"] != 0.0 || a.body["remaining"] != 1.0 || a.body["previousKEKFingerprint"] != nil || len(rs) != 1 {
		t.Fatalf("rekey on the old replica = %d %s", a.status, a.raw)
	}
	r := rs[0].(map[string]any)
	if r["secretID"] != added.body["secretID"] || r["kekFingerprint"] != newFP || r["reason"] != "other_kek" {
		t.Fatalf("remaining = %v", r)
	}
	a.mustNotContain(t, secret)
}

func TestRekeyAPIWrongWayRoundIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	_, b64 := b.newSecret(t)
	b.do(t, "POST", "/v1/signing-secrets", `{"secret":"`+b64+`"}`)
	api, newFP := b.rotated(t, "")
	_, before := b.list(t)
	// The operator rotates to newFP, but asks b's replica (current: the
	// old KEK): 409, nothing moved.
	a := b.do(t, "POST", "/v1/keyring/rekey", `{"kekFingerprint":"`+newFP+`"}`)
	a.problem(t, http.StatusConflict, "kek-mismatch", "")
	if _, after := b.list(t); after.raw != before.raw {
		t.Fatalf("a refused rekey changed the secrets:\nbefore %s\nafter  %s", before.raw, after.raw)
	}
	call(t, api, "POST", "/v1/keyring/rekey", `{"kekFingerprint":"`+b.kekFP+`"}`).problem(t, http.StatusConflict, "kek-mismatch", "")
}

func TestRekeyAPIBadInput(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "")
	for _, c := range []struct{ name, body, pointer string }{
		{"NotHex", `{"kekFingerprint":"XYZ"}`, "/kekFingerprint"},
		{"TooShort", `{"kekFingerprint":"0123"}`, "/kekFingerprint"},
		{"Uppercase", `{"kekFingerprint":"0123456789ABCDEF"}`, "/kekFingerprint"},
		{"NotAString", `{"kekFingerprint":7}`, "/kekFingerprint"},
		{"UnknownMember", `{"kek":"0123456789abcdef"}`, "/kek"},
		{"EmptyBody", ``, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b.do(t, "POST", "/v1/keyring/rekey", c.body).problem(t, http.StatusBadRequest, "invalid-request", c.pointer)
		})
	}
	b.do(t, "GET", "/v1/keyring/rekey", "").problem(t, http.StatusMethodNotAllowed, "method-not-allowed", "")
}

func TestRekeyAPIRequiresTheToken(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t, "s3cret-token")
	b.do(t, "POST", "/v1/keyring/rekey", `{}`).problem(t, http.StatusUnauthorized, "unauthorized", "")
	if a := b.do(t, "POST", "/v1/keyring/rekey", `{}`, "Authorization", "Bearer s3cret-token"); a.status != http.StatusOK {
		t.Fatalf("authorized rekey = %d %s", a.status, a.raw)
	}
}
