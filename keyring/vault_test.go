package keyring_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
)

func TestVault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("AddListRetire", func(t *testing.T) { vaultAddListRetire(t, ctx) })

	t.Run("Generate", func(t *testing.T) { vaultGenerate(t, ctx) })

	t.Run("AddRefusesWrongLength", func(t *testing.T) { vaultAddRefusesWrongLength(t, ctx) })

	t.Run("ConcurrentAddsOfOneSecretStoreOneRow", func(t *testing.T) { vaultConcurrentAddsOfOneSecretStoreOneRow(t, ctx) })

	t.Run("EncryptedAtRest", func(t *testing.T) { vaultEncryptedAtRest(t, ctx) })

	t.Run("AnotherKEKCannotDecrypt", func(t *testing.T) { vaultAnotherKEKCannotDecrypt(t, ctx) })

	t.Run("CiphertextIsBoundToItsRow", func(t *testing.T) { vaultCiphertextIsBoundToItsRow(t, ctx) })

	t.Run("FingerprintIsCheckedAgainstThePlaintext", func(t *testing.T) { vaultFingerprintIsCheckedAgainstThePlaintext(t, ctx) })

	t.Run("RetiringErasesTheSecret", func(t *testing.T) { vaultRetiringErasesTheSecret(t, ctx) })

	t.Run("SchemaConstraints", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		valid := map[string]string{
			"secret_id": "'sec_aaaaaaaaaaaaaaaaaaaaaaaaaa'", "fingerprint": "'0123456789abcdef'",
			"kek_fingerprint": "'0123456789abcdef'", "nonce": "'\\x000000000000000000000000'::bytea",
			"ciphertext": "decode(repeat('00', 48), 'hex')", "source": "'api'", "added_on": "now()", "retired_on": "NULL",
		}
		for _, c := range []struct {
			column, value, constraint string
		}{
			{"secret_id", "'hold_x'", "signing_secrets_secret_id_check"},
			{"fingerprint", "'XYZ'", "signing_secrets_fingerprint_check"},
			{"source", "'manual'", "signing_secrets_source_check"},
			{"nonce", "'\\x00'::bytea", "signing_secrets_nonce_check"},
			{"ciphertext", "'\\x00'::bytea", "signing_secrets_ciphertext_check"},
			{"ciphertext", "NULL", "signing_secrets_material_check"},
			{"retired_on", "now()", "signing_secrets_material_check"},
		} {
			cols, vals := []string{}, []string{}
			for k, v := range valid {
				if k == c.column {
					v = c.value
				}
				cols, vals = append(cols, k), append(vals, v)
			}
			_, err := b.pool.Exec(ctx, `INSERT INTO signing_secrets (`+strings.Join(cols, ",")+`) VALUES (`+strings.Join(vals, ",")+`)`)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.ConstraintName != c.constraint {
				t.Errorf("%s = %s: %v, want %s", c.column, c.value, err, c.constraint)
			}
		}
		if _, err := b.pool.Exec(ctx, `INSERT INTO signing_secrets (secret_id, fingerprint, kek_fingerprint, nonce, ciphertext, source, added_on)
VALUES ('sec_aaaaaaaaaaaaaaaaaaaaaaaaaa', '0123456789abcdef', '0123456789abcdef', '\x000000000000000000000000'::bytea, decode(repeat('00', 48), 'hex'), 'api', now())`); err != nil {
			t.Fatalf("the valid row is refused: %v", err)
		}
	})

	t.Run("NewVaultRefusesBadKEKs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, kek := range [][]byte{nil, make([]byte, 16), make([]byte, 32), make([]byte, 33)} {
			if _, err := keyring.NewVault(store.Wrap(b.pool, nil), kek, keyring.VaultOptions{}); err == nil {
				t.Fatalf("NewVault accepted a KEK of %d bytes (all zero)", len(kek))
			}
		}
		if keyring.KEKFingerprint(b.kek) == keyring.KEKFingerprint(randomBytes(t, 32)) || len(keyring.KEKFingerprint(b.kek)) != 16 {
			t.Fatal("KEK fingerprints do not tell KEKs apart")
		}
	})
}

// vaultAddRefusesWrongLength: a secret of any length but 32 bytes is
// refused as invalid, and nothing is stored.
func vaultAddRefusesWrongLength(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	for _, n := range []int{0, 16, 31, 33, 64} {
		_, _, err := b.vault.Add(ctx, make([]byte, n))
		var le *ledger.Error
		if !errors.As(err, &le) || le.Code != ledger.CodeInvalid {
			t.Fatalf("Add of %d bytes = %v, want invalid", n, err)
		}
	}
	if list, _ := b.vault.List(ctx); len(list) != 0 {
		t.Fatalf("rows stored: %+v", list)
	}
}

// vaultFingerprintIsCheckedAgainstThePlaintext: a row whose fingerprint is
// not its plaintext's is skipped, with the mismatch logged.
func vaultFingerprintIsCheckedAgainstThePlaintext(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	a, _, _ := b.vault.Add(ctx, b.newSecret(t))
	if _, err := b.pool.Exec(ctx, `UPDATE signing_secrets SET fingerprint = '0123456789abcdef' WHERE secret_id = $1`, a.SecretID); err != nil {
		t.Fatal(err)
	}
	keys, err := b.vault.Active(ctx)
	if err != nil || len(keys) != 0 || b.vault.Undecryptable() != 1 {
		t.Fatalf("Active = %d keys, %v, %d skipped", len(keys), err, b.vault.Undecryptable())
	}
	if !strings.Contains(b.logs.String(), "does not match the row's fingerprint") {
		t.Fatalf("no fingerprint mismatch logged:\n%s", b.logs.String())
	}
}

// vaultRetiringErasesTheSecret: a retired row holds no ciphertext, and the
// database refuses to un-retire it (K2).
func vaultRetiringErasesTheSecret(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	a, _, _ := b.vault.Add(ctx, b.newSecret(t))
	if err := b.vault.Retire(ctx, a.SecretID); err != nil {
		t.Fatal(err)
	}
	if n, c := material(t, b, a.SecretID); n != nil || c != nil {
		t.Fatal("a retired row still holds its ciphertext")
	}
	// Un-retiring by hand is refused by the database (K2).
	_, err := b.pool.Exec(ctx, `UPDATE signing_secrets SET retired_on = NULL WHERE secret_id = $1`, a.SecretID)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "signing_secrets_material_check" {
		t.Fatalf("un-retire = %v, want signing_secrets_material_check violation", err)
	}
}

// vaultCiphertextIsBoundToItsRow: nonce and ciphertext swapped between two
// rows open neither (both skipped) and the authentication failure is logged.
func vaultCiphertextIsBoundToItsRow(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	a, _, _ := b.vault.Add(ctx, b.newSecret(t))
	c, _, _ := b.vault.Add(ctx, b.newSecret(t))
	// Swap nonce and ciphertext between the rows, as someone with write
	// access to the table could.
	_, err := b.pool.Exec(ctx, `
UPDATE signing_secrets s SET nonce = o.nonce, ciphertext = o.ciphertext
FROM signing_secrets o
WHERE (s.secret_id, o.secret_id) IN (($1, $2), ($2, $1))`, a.SecretID, c.SecretID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := b.vault.Active(ctx)
	if err != nil || len(keys) != 0 || b.vault.Undecryptable() != 2 {
		t.Fatalf("Active after the swap = %d keys, %v, %d skipped; want 0 keys, 2 skipped", len(keys), err, b.vault.Undecryptable())
	}
	if !strings.Contains(b.logs.String(), "does not authenticate") {
		t.Fatalf("no authentication failure logged:\n%s", b.logs.String())
	}
}

// vaultAnotherKEKCannotDecrypt: a vault with another KEK opens no key,
// counts and reports the skip once per episode, refuses to add a secret it
// cannot compare, never echoes it in the error; the right KEK still opens it.
func vaultAnotherKEKCannotDecrypt(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	secret := b.newSecret(t)
	info, _, err := b.vault.Add(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	wrong := b.newVault(t, b.pool, randomBytes(t, keyring.KEKSize))
	keys, err := wrong.Active(ctx)
	if err != nil || len(keys) != 0 {
		t.Fatalf("Active with another KEK = %v, %v; want no keys and no error", keys, err)
	}
	if n := wrong.Undecryptable(); n != 1 {
		t.Fatalf("Undecryptable = %d, want 1", n)
	}
	logs := b.logs.String()
	if !strings.Contains(logs, "encrypted under another KEK") || !strings.Contains(logs, info.Fingerprint) || !strings.Contains(logs, info.SecretID) {
		t.Fatalf("the skip is not reported with its ID, fingerprint and reason:\n%s", logs)
	}
	// Reported once per episode, not on every load.
	if _, err := wrong.Active(ctx); err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(b.logs.String(), "signing secret skipped"); c != 1 {
		t.Fatalf("the skip was logged %d times, want 1", c)
	}
	// It cannot tell whether a secret it cannot decrypt is the same: it
	// refuses rather than guess.
	_, _, err = wrong.Add(ctx, secret)
	if !errors.Is(err, keyring.ErrUndecryptable) {
		t.Fatalf("Add through the wrong KEK = %v, want ErrUndecryptable", err)
	}
	if strings.Contains(err.Error(), string(secret)) {
		t.Fatal("the error holds the secret")
	}
	// The right KEK still decrypts it.
	if keys, _ := b.vault.Active(ctx); len(keys) != 1 || b.vault.Undecryptable() != 0 {
		t.Fatalf("Active with the right KEK = %d keys, %d skipped", len(keys), b.vault.Undecryptable())
	}
}

// vaultEncryptedAtRest: a row holds a fresh nonce and a ciphertext without
// the secret, and no column of any row, in any text form, holds a secret.
func vaultEncryptedAtRest(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	s1, s2 := b.newSecret(t), b.newSecret(t)
	i1, _, _ := b.vault.Add(ctx, s1)
	i2, _, _ := b.vault.Add(ctx, s2)
	n1, c1 := material(t, b, i1.SecretID)
	n2, c2 := material(t, b, i2.SecretID)
	if len(n1) != 12 || len(c1) != 48 || bytes.Equal(n1, n2) {
		t.Fatalf("nonce %d bytes, ciphertext %d bytes, nonces equal %v", len(n1), len(c1), bytes.Equal(n1, n2))
	}
	if bytes.Contains(c1, s1) || bytes.Contains(c2, s2) || bytes.Contains(c1, s1[:16]) {
		t.Fatal("the ciphertext contains the secret")
	}
	// No column of any row, in any text form Postgres gives it, holds
	// a secret.
	var dump string
	if err := b.pool.QueryRow(ctx, `SELECT json_agg(s)::text FROM signing_secrets s`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]byte{s1, s2} {
		for _, enc := range encodings(s) {
			if strings.Contains(dump, enc) {
				t.Fatalf("the table dump contains a secret: %s", dump)
			}
		}
	}
}

// vaultConcurrentAddsOfOneSecretStoreOneRow: concurrent Adds of one secret
// all answer its ID, one of them created it, and one row is stored.
func vaultConcurrentAddsOfOneSecretStoreOneRow(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	secret := b.newSecret(t)
	const n = 8
	var wg sync.WaitGroup
	infos := make([]keyring.SecretInfo, n)
	created := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { infos[i], created[i], errs[i] = b.vault.Add(ctx, secret) })
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil || infos[i].SecretID != infos[0].SecretID {
			t.Fatalf("Add %d = %+v, %v; want %s", i, infos[i], errs[i], infos[0].SecretID)
		}
		if created[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d Adds reported created, want 1", winners)
	}
	if list, _ := b.vault.List(ctx); len(list) != 1 {
		t.Fatalf("%d rows, want 1", len(list))
	}
}

// vaultGenerate: a generated secret is stored once (a second Generate gives
// another), from the generated source; adding it again finds it.
func vaultGenerate(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	info, secret, err := b.vault.Generate(ctx)
	if err != nil || len(secret) != envelope.SecretSize || info.Fingerprint != fingerprint(secret) || info.RetiredOn != nil {
		t.Fatalf("Generate = %+v, %d bytes, %v", info, len(secret), err)
	}
	b.remember(secret)
	_, other, err := b.vault.Generate(ctx)
	if err != nil || bytes.Equal(other, secret) {
		t.Fatalf("second Generate = %v (same secret: %v)", err, bytes.Equal(other, secret))
	}
	b.remember(other)
	if got := sourceOf(t, b, info.SecretID); got != "generated" {
		t.Fatalf("source = %q, want generated", got)
	}
	// Adding the generated secret again finds it.
	again, created, err := b.vault.Add(ctx, secret)
	if err != nil || created || again.SecretID != info.SecretID {
		t.Fatalf("Add of the generated secret = %+v, %v, %v", again, created, err)
	}
	keys, _ := b.vault.Active(ctx)
	if len(keys) != 2 {
		t.Fatalf("Active has %d keys, want 2", len(keys))
	}
}

// vaultAddListRetire: a secret is added once (again finds it), listed
// newest first, retired once (again keeps the first retirement, the other
// secret untouched); a retired secret cannot be added back, an unknown one
// is not found, and only the active secret opens, from the api source.
func vaultAddListRetire(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	first, second := b.newSecret(t), b.newSecret(t)

	a, created, err := b.vault.Add(ctx, first)
	if err != nil || !created {
		t.Fatalf("Add = %v, %v", created, err)
	}
	if !strings.HasPrefix(a.SecretID, "sec_") || len(a.SecretID) != 30 || a.Fingerprint != fingerprint(first) ||
		!a.AddedOn.Equal(b.clock.Now().Truncate(time.Microsecond)) || a.RetiredOn != nil {
		t.Fatalf("Add info = %+v", a)
	}
	again, created, err := b.vault.Add(ctx, first)
	if err != nil || created || again != a {
		t.Fatalf("Add again = %+v, %v, %v; want %+v, false", again, created, err, a)
	}
	b.clock.Advance(time.Minute)
	c, _, err := b.vault.Add(ctx, second)
	if err != nil {
		t.Fatal(err)
	}

	list, err := b.vault.List(ctx)
	if err != nil || len(list) != 2 || list[0].SecretID != c.SecretID || list[1] != a {
		t.Fatalf("List = %+v, %v; want newest first", list, err)
	}

	b.clock.Advance(time.Minute)
	retiredAt := b.clock.Now().Truncate(time.Microsecond)
	if err := b.vault.Retire(ctx, a.SecretID); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	if err := b.vault.Retire(ctx, a.SecretID); err != nil {
		t.Fatalf("retiring a retired secret: %v, want nil", err)
	}
	list, _ = b.vault.List(ctx)
	if r := list[1]; r.SecretID != a.SecretID || r.RetiredOn == nil || !r.RetiredOn.Equal(retiredAt) {
		t.Fatalf("retired entry = %+v, want retiredOn %s (the first retirement)", r, retiredAt)
	}
	if list[0].RetiredOn != nil {
		t.Fatalf("the other secret was retired: %+v", list[0])
	}

	_, _, err = b.vault.Add(ctx, first)
	var le *ledger.Error
	if !errors.As(err, &le) || le.Code != ledger.CodeConflict || le.Slug != "secret-retired" || !errors.Is(err, keyring.ErrSecretRetired) {
		t.Fatalf("Add of a retired secret = %v, want conflict secret-retired", err)
	}
	err = b.vault.Retire(ctx, "sec_aaaaaaaaaaaaaaaaaaaaaaaaaa")
	if !errors.As(err, &le) || le.Code != ledger.CodeNotFound || le.Slug != "secret-not-found" {
		t.Fatalf("Retire of an unknown secret = %v, want not found secret-not-found", err)
	}

	keys, err := b.vault.Active(ctx)
	if err != nil || len(keys) != 1 || keys[0].ID != c.SecretID || !bytes.Equal(keys[0].Secret, second) {
		t.Fatalf("Active = %v, %v; want only the second secret", keys, err)
	}
	if n := b.vault.Undecryptable(); n != 0 {
		t.Fatalf("Undecryptable = %d, want 0", n)
	}
	if n, err := b.vault.CountActive(ctx); err != nil || n != 1 {
		t.Fatalf("CountActive = %d, %v", n, err)
	}
	if got := sourceOf(t, b, c.SecretID); got != "api" {
		t.Fatalf("source = %q, want api", got)
	}
}

func sourceOf(t *testing.T, b *testBundle, secretID string) string {
	t.Helper()
	var src string
	if err := b.pool.QueryRow(context.Background(), `SELECT source FROM signing_secrets WHERE secret_id = $1`, secretID).Scan(&src); err != nil {
		t.Fatal(err)
	}
	return src
}

func material(t *testing.T, b *testBundle, secretID string) (nonce, ciphertext []byte) {
	t.Helper()
	if err := b.pool.QueryRow(context.Background(), `SELECT nonce, ciphertext FROM signing_secrets WHERE secret_id = $1`, secretID).Scan(&nonce, &ciphertext); err != nil {
		t.Fatal(err)
	}
	return nonce, ciphertext
}
