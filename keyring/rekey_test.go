package keyring_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
)

// row is a signing_secrets row as stored, for before/after comparisons.
type row struct {
	KEK        string
	Nonce      []byte
	Ciphertext []byte
	RetiredOn  *time.Time
}

func rowOf(t *testing.T, b *testBundle, secretID string) row {
	t.Helper()
	var r row
	err := b.pool.QueryRow(context.Background(), `SELECT kek_fingerprint, nonce, ciphertext, retired_on FROM signing_secrets WHERE secret_id = $1`,
		secretID).Scan(&r.KEK, &r.Nonce, &r.Ciphertext, &r.RetiredOn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// opensAnyRow reports whether kek, by itself (raw AES-256-GCM, whatever
// the rows' KEK fingerprints say), decrypts any ciphertext in the table.
func opensAnyRow(t *testing.T, b *testBundle, kek []byte) bool {
	t.Helper()
	block, _ := aes.NewCipher(kek)
	aead, _ := cipher.NewGCM(block)
	rows, err := b.pool.Query(context.Background(), `SELECT secret_id, nonce, ciphertext FROM signing_secrets WHERE ciphertext IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	opened := false
	for rows.Next() {
		var id string
		var nonce, ct []byte
		if err := rows.Scan(&id, &nonce, &ct); err != nil {
			t.Fatal(err)
		}
		if p, err := aead.Open(nil, nonce, ct, []byte(id)); err == nil {
			clear(p)
			opened = true
		}
	}
	return opened
}

func activeSecrets(t *testing.T, s *keyring.Vault) map[string][]byte {
	t.Helper()
	keys, err := s.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, k := range keys {
		out[k.ID] = k.Secret
	}
	return out
}

func TestKEKRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PreviousKEKDecryptsNewSecretsGoUnderTheCurrent", func(t *testing.T) { kekPreviousDecryptsNewUnderCurrent(t, ctx) })

	t.Run("OldReplicaSkipsASecretUnderTheNewKEKAndStaysFresh", func(t *testing.T) { kekOldReplicaSkipsANewSecret(t, ctx) })

	t.Run("RekeyMovesEveryActiveSecretOnceAndTheOldKEKOpensNothing", func(t *testing.T) { kekRekeyMovesEverySecretOnce(t, ctx) })

	t.Run("ConcurrentRekeysOnTwoReplicasMoveEachSecretOnce", func(t *testing.T) { kekConcurrentRekeysMoveEachSecretOnce(t, ctx) })

	t.Run("AWrongKEKNeverDestroysARow", func(t *testing.T) { kekWrongKEKNeverDestroysARow(t, ctx) })

	t.Run("AStaleCompareAndSwapChangesNothing", func(t *testing.T) { kekStaleCompareAndSwapChangesNothing(t, ctx) })

	t.Run("TheKEKAskedForIsChecked", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		info, _, _ := b.vault.Add(ctx, b.newSecret(t))
		newKEK := randomBytes(t, keyring.KEKSize)
		// Given the KEKs the wrong way round: current old, previous new.
		swapped := b.rotatingVault(t, b.pool, b.kek, newKEK)
		_, err := swapped.Rekey(ctx, keyring.KEKFingerprint(newKEK))
		var le *ledger.Error
		if !errors.Is(err, keyring.ErrKEKMismatch) || !errors.As(err, &le) || le.Code != ledger.CodeConflict ||
			!strings.Contains(le.Message, keyring.KEKFingerprint(b.kek)) {
			t.Fatalf("Rekey on a swapped replica = %v, want kek-mismatch naming its current KEK", err)
		}
		for _, fp := range []string{"XYZ", "0123456789ABCDEF", "0123456789abcde"} {
			if _, err := swapped.Rekey(ctx, fp); !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != "/kekFingerprint" {
				t.Fatalf("Rekey(%q) = %v, want invalid at /kekFingerprint", fp, err)
			}
		}
		if r := rowOf(t, b, info.SecretID); r.KEK != keyring.KEKFingerprint(b.kek) {
			t.Fatal("a refused rekey moved a row")
		}
	})

	t.Run("NewStoreChecksThePreviousKEK", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		db := store.Wrap(b.pool, nil)
		for name, prev := range map[string][]byte{"same as current": b.kek, "all zero": make([]byte, 32), "short": randomBytes(t, 16)} {
			_, err := keyring.NewVault(db, b.kek, keyring.VaultOptions{PreviousKEK: prev})
			if err == nil || !strings.Contains(err.Error(), "previous KEK") {
				t.Errorf("NewVault with a previous KEK %s = %v, want an error naming the previous KEK", name, err)
			}
		}
	})

	t.Run("BootstrapOnAnOldReplicaGoesOn", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		secret := b.newSecret(t)
		env := []string{base64.StdEncoding.EncodeToString(secret)}
		if _, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, EnvSecrets: env, Logger: b.log}); err != nil {
			t.Fatal(err)
		}
		newKEK := randomBytes(t, keyring.KEKSize)
		if _, err := b.rotatingVault(t, b.pool, newKEK, b.kek).Rekey(ctx, ""); err != nil {
			t.Fatal(err)
		}
		// An old replica restarting mid-rotation, with the secret in its
		// environment: it cannot compare it, and starts anyway.
		res, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, EnvSecrets: env, Logger: b.log})
		if err != nil || !slices.Equal(res.Unverified, []string{fingerprint(secret)}) || len(res.Imported) != 0 {
			t.Fatalf("Bootstrap on the old replica = %+v, %v; want the secret unverified, no error", res, err)
		}
		// A new replica (previous KEK given) verifies it as present.
		res, err = keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.rotatingVault(t, b.pool, newKEK, b.kek), EnvSecrets: env, Logger: b.log})
		if err != nil || len(res.Present) != 1 {
			t.Fatalf("Bootstrap on a new replica = %+v, %v", res, err)
		}
	})

	t.Run("Metrics", func(t *testing.T) { kekMetrics(t, ctx) })
}

// kekMetrics: during a rotation, each vault's metrics give its KEKs'
// fingerprints and roles and its undecryptable secrets by reason.
func kekMetrics(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	if _, _, err := b.vault.Add(ctx, b.newSecret(t)); err != nil {
		t.Fatal(err)
	}
	newKEK := randomBytes(t, keyring.KEKSize)
	rotated := b.rotatingVault(t, b.pool, newKEK, b.kek)
	if _, _, err := rotated.Add(ctx, b.newSecret(t)); err != nil {
		t.Fatal(err)
	}
	activeSecrets(t, b.vault)
	activeSecrets(t, rotated)
	oldFP, newFP := keyring.KEKFingerprint(b.kek), keyring.KEKFingerprint(newKEK)
	for _, c := range []struct {
		s    *keyring.Vault
		want map[string]float64
	}{
		{b.vault, map[string]float64{
			`ledgerd_keyring_kek_info{fingerprint="` + oldFP + `",role="current"}`: 1,
			`ledgerd_keyring_undecryptable_secrets{reason="damaged"}`:              0,
			`ledgerd_keyring_undecryptable_secrets{reason="other_kek"}`:            1,
			`ledgerd_keyring_undecryptable_secrets{reason="weak"}`:                 0,
		}},
		{rotated, map[string]float64{
			`ledgerd_keyring_kek_info{fingerprint="` + newFP + `",role="current"}`:  1,
			`ledgerd_keyring_kek_info{fingerprint="` + oldFP + `",role="previous"}`: 1,
			`ledgerd_keyring_undecryptable_secrets{reason="damaged"}`:               0,
			`ledgerd_keyring_undecryptable_secrets{reason="other_kek"}`:             0,
			`ledgerd_keyring_undecryptable_secrets{reason="weak"}`:                  0,
		}},
	} {
		reg := prometheus.NewPedanticRegistry()
		if err := c.s.RegisterMetrics(reg); err != nil {
			t.Fatal(err)
		}
		if got := gather(t, reg); !maps.Equal(got, c.want) {
			t.Fatalf("metrics = %v, want %v", got, c.want)
		}
	}
}

// kekStaleCompareAndSwapChangesNothing: a rekey's write to a row retired,
// or rewritten by someone else, since it was read changes nothing.
func kekStaleCompareAndSwapChangesNothing(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	info, _, _ := b.vault.Add(ctx, b.newSecret(t))
	read := rowOf(t, b, info.SecretID)
	if err := b.vault.Retire(ctx, info.SecretID); err != nil {
		t.Fatal(err)
	}
	// A rekey that read the row before it was retired must not write
	// material back into it.
	done, err := store.Wrap(b.pool, nil).RekeySecret(ctx, envelope.SecretRekey{SecretID: info.SecretID, FromKEKFingerprint: read.KEK,
		FromNonce: read.Nonce, KEKFingerprint: "0123456789abcdef", Nonce: make([]byte, 12), Ciphertext: make([]byte, 48)})
	if err != nil || done {
		t.Fatalf("RekeySecret on a retired row = %v, %v; want false, nil", done, err)
	}
	if r := rowOf(t, b, info.SecretID); r.Ciphertext != nil || r.RetiredOn == nil {
		t.Fatal("a retired secret got material back")
	}
	// Nor over material someone else rewrote meanwhile.
	other, _, _ := b.vault.Add(ctx, b.newSecret(t))
	read = rowOf(t, b, other.SecretID)
	done, err = store.Wrap(b.pool, nil).RekeySecret(ctx, envelope.SecretRekey{SecretID: other.SecretID, FromKEKFingerprint: read.KEK,
		FromNonce: make([]byte, 12), KEKFingerprint: "0123456789abcdef", Nonce: make([]byte, 12), Ciphertext: make([]byte, 48)})
	if err != nil || done {
		t.Fatalf("RekeySecret from a nonce the row does not hold = %v, %v; want false, nil", done, err)
	}
	if r := rowOf(t, b, other.SecretID); !bytes.Equal(r.Nonce, read.Nonce) || r.KEK != read.KEK {
		t.Fatal("the row was overwritten")
	}
}

// kekWrongKEKNeverDestroysARow: a rekey with KEKs that open nothing moves
// nothing; with the right previous KEK a damaged row stays as it was and is
// reported, and the intact one moves and stays readable.
func kekWrongKEKNeverDestroysARow(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	good, _, _ := b.vault.Add(ctx, b.newSecret(t))
	damaged, _, _ := b.vault.Add(ctx, b.newSecret(t))
	if _, err := b.pool.Exec(ctx, `UPDATE signing_secrets SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE secret_id = $1`,
		damaged.SecretID); err != nil {
		t.Fatal(err)
	}
	before := map[string]row{good.SecretID: rowOf(t, b, good.SecretID), damaged.SecretID: rowOf(t, b, damaged.SecretID)}
	// A replica given two KEKs, neither of them the one in use.
	wrong := b.rotatingVault(t, b.pool, randomBytes(t, keyring.KEKSize), randomBytes(t, keyring.KEKSize))
	res, err := wrong.Rekey(ctx, "")
	if err != nil || res.Rekeyed != 0 || len(res.Remaining) != 2 {
		t.Fatalf("Rekey with wrong KEKs = %+v, %v; want nothing moved, 2 remaining", res, err)
	}
	for _, r := range res.Remaining {
		if r.Reason != keyring.SkipOtherKEK || r.KEKFingerprint != keyring.KEKFingerprint(b.kek) {
			t.Fatalf("remaining %+v, want other_kek under %s", r, keyring.KEKFingerprint(b.kek))
		}
	}
	// The right KEK as previous: the intact row moves, the damaged one
	// stays as it was and is reported damaged.
	rotated := b.rotatingVault(t, b.pool, randomBytes(t, keyring.KEKSize), b.kek)
	res, err = rotated.Rekey(ctx, "")
	if err != nil || res.Rekeyed != 1 || len(res.Remaining) != 1 || res.Remaining[0].SecretID != damaged.SecretID ||
		res.Remaining[0].Reason != keyring.SkipDamaged {
		t.Fatalf("Rekey with a damaged row = %+v, %v", res, err)
	}
	if r := rowOf(t, b, damaged.SecretID); !bytes.Equal(r.Ciphertext, before[damaged.SecretID].Ciphertext) || r.KEK != before[damaged.SecretID].KEK {
		t.Fatal("the damaged row was rewritten")
	}
	// And the row the wrong replica met is readable: by the rotated one.
	if got := activeSecrets(t, rotated); len(got[good.SecretID]) != 32 {
		t.Fatal("the intact row was lost")
	}
}

// kekConcurrentRekeysMoveEachSecretOnce: two replicas rekeying at once,
// while an old one reloads, re-encrypt each of 12 secrets once between
// them, and every secret stays intact under the new KEK.
func kekConcurrentRekeysMoveEachSecretOnce(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	secrets := map[string][]byte{}
	for range 12 {
		s := b.newSecret(t)
		info, _, err := b.vault.Add(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		secrets[info.SecretID] = s
	}
	newKEK := randomBytes(t, keyring.KEKSize)
	// Two replicas, each with its own pool, and an old one reloading
	// all along.
	replicas := []*replica{b.rotatingReplica(t, newKEK, b.kek, 0), b.rotatingReplica(t, newKEK, b.kek, 0)}
	old := b.replica(t, b.kek, 0)
	var wg sync.WaitGroup
	results := make([][]keyring.RekeyResult, len(replicas))
	errs := make(chan error, 8)
	for i, r := range replicas {
		wg.Go(func() {
			for range 3 {
				res, err := r.vault.Rekey(ctx, "")
				if err != nil {
					errs <- err
					return
				}
				results[i] = append(results[i], res)
			}
		})
	}
	wg.Go(func() {
		for range 10 {
			if err := old.loader.Reload(ctx); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("during concurrent rekeys: %v", err)
	}
	total := 0
	for _, rs := range results {
		for _, r := range rs {
			total += r.Rekeyed
		}
		if last := rs[len(rs)-1]; len(last.Remaining) != 0 || last.Current != 12 {
			t.Fatalf("last Rekey of a replica = %+v, want 12 current, none remaining", last)
		}
	}
	if total != 12 {
		t.Fatalf("the replicas re-encrypted %d rows between them, want each of the 12 once", total)
	}
	got := activeSecrets(t, b.newVault(t, b.pool, newKEK))
	for id, s := range secrets {
		if !bytes.Equal(got[id], s) {
			t.Fatalf("secret %s is not intact under the new KEK", id)
		}
	}
}

// kekRekeyMovesEverySecretOnce: a rekey moves every active secret to the
// current KEK once (a second has nothing to do; a retired row is not
// touched); the new KEK alone then reads each byte for byte, and the old
// KEK opens nothing.
func kekRekeyMovesEverySecretOnce(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	secrets := map[string][]byte{}
	for range 3 {
		s := b.newSecret(t)
		info, _, err := b.vault.Add(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		secrets[info.SecretID] = s
	}
	retired, _, _ := b.vault.Add(ctx, b.newSecret(t))
	if err := b.vault.Retire(ctx, retired.SecretID); err != nil {
		t.Fatal(err)
	}
	retiredBefore := rowOf(t, b, retired.SecretID)
	newKEK := randomBytes(t, keyring.KEKSize)
	rotated := b.rotatingVault(t, b.pool, newKEK, b.kek)
	res, err := rotated.Rekey(ctx, keyring.KEKFingerprint(newKEK))
	if err != nil || res.Rekeyed != 3 || res.Current != 3 || len(res.Remaining) != 0 || res.KEKFingerprint != keyring.KEKFingerprint(newKEK) {
		t.Fatalf("Rekey = %+v, %v; want 3 rekeyed, none remaining", res, err)
	}
	again, err := rotated.Rekey(ctx, "")
	if err != nil || again.Rekeyed != 0 || again.Current != 3 || len(again.Remaining) != 0 {
		t.Fatalf("second Rekey = %+v, %v; want nothing to do", again, err)
	}
	if r := rowOf(t, b, retired.SecretID); r.KEK != retiredBefore.KEK || r.Nonce != nil || r.RetiredOn == nil {
		t.Fatalf("the retired row was touched: %+v", r)
	}
	// Step 3: a replica given only the new KEK reads every secret,
	// byte for byte; the old KEK alone opens nothing any more.
	after := b.newVault(t, b.pool, newKEK)
	got := activeSecrets(t, after)
	for id, s := range secrets {
		if !bytes.Equal(got[id], s) {
			t.Fatalf("secret %s does not decrypt to itself under the new KEK alone", id)
		}
	}
	if len(got) != 3 || after.Undecryptable() != 0 {
		t.Fatalf("the new KEK alone reads %d secrets, %d skipped", len(got), after.Undecryptable())
	}
	if opensAnyRow(t, b, b.kek) {
		t.Fatal("the old KEK still opens a stored ciphertext")
	}
	if keys := activeSecrets(t, b.vault); len(keys) != 0 || b.vault.UndecryptableBy(keyring.SkipOtherKEK) != 3 {
		t.Fatalf("the old KEK's vault still reads %d secrets", len(keys))
	}
}

// kekOldReplicaSkipsANewSecret: a replica that has only the old KEK skips
// a secret under the new one (counted as other_kek, logged once), opens the
// rest and its keyring does not go stale.
func kekOldReplicaSkipsANewSecret(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	old := b.newSecret(t)
	if _, _, err := b.vault.Add(ctx, old); err != nil {
		t.Fatal(err)
	}
	oldReplica := b.replica(t, b.kek, 0)
	oldReplica.reload(t)
	rotated := b.rotatingVault(t, b.pool, randomBytes(t, keyring.KEKSize), b.kek)
	fresh := b.newSecret(t)
	freshInfo, _, err := rotated.Add(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		oldReplica.reload(t) // never an error: a skipped row is not a failed load
	}
	if !oldReplica.opens(t, old) || oldReplica.opens(t, fresh) {
		t.Fatal("the old replica should open the old secret and not the new one")
	}
	s := oldReplica.vault
	if s.Undecryptable() != 1 || s.UndecryptableBy(keyring.SkipOtherKEK) != 1 || !s.MissingKEK() {
		t.Fatalf("skipped %d (other_kek %d), MissingKEK %v; want 1 other_kek", s.Undecryptable(), s.UndecryptableBy(keyring.SkipOtherKEK), s.MissingKEK())
	}
	if age := oldReplica.loader.Age(); age > time.Minute {
		t.Fatalf("the old replica's keyring went stale (age %s)", age)
	}
	logs := b.logs.String()
	if n := strings.Count(logs, "signing secret skipped"); n != 1 || !strings.Contains(logs, freshInfo.Fingerprint) ||
		!strings.Contains(logs, "LEDGER_KEK_PREVIOUS") {
		t.Fatalf("the skip is logged %d times (want once, with the fingerprint and what to do):\n%s", n, logs)
	}
}

// kekPreviousDecryptsNewUnderCurrent: a replica given the old KEK as its
// previous reads every secret; a secret added during the rotation is under
// the current KEK, and adding the old secret again finds it.
func kekPreviousDecryptsNewUnderCurrent(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	old := b.newSecret(t)
	oldInfo, _, err := b.vault.Add(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	newKEK := randomBytes(t, keyring.KEKSize)
	rotated := b.rotatingVault(t, b.pool, newKEK, b.kek)
	if got := activeSecrets(t, rotated); !bytes.Equal(got[oldInfo.SecretID], old) || rotated.Undecryptable() != 0 {
		t.Fatalf("a replica given the old KEK as previous reads %d secrets, %d skipped", len(got), rotated.Undecryptable())
	}
	// A secret added during the rotation is encrypted under the new KEK.
	fresh := b.newSecret(t)
	freshInfo, _, err := rotated.Add(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, b, freshInfo.SecretID); r.KEK != keyring.KEKFingerprint(newKEK) || freshInfo.KEKFingerprint != r.KEK {
		t.Fatalf("the new secret is under KEK %s (info %s), want the current %s", r.KEK, freshInfo.KEKFingerprint, keyring.KEKFingerprint(newKEK))
	}
	// Adding the old secret again through the rotated replica finds it.
	if again, created, err := rotated.Add(ctx, old); err != nil || created || again.SecretID != oldInfo.SecretID {
		t.Fatalf("Add of the old secret on the rotated replica = %+v, %v, %v", again, created, err)
	}
	cur, prev := rotated.KEKFingerprints()
	if cur != keyring.KEKFingerprint(newKEK) || prev != keyring.KEKFingerprint(b.kek) {
		t.Fatalf("KEKFingerprints = %s, %s", cur, prev)
	}
}

// gather returns every gauge of reg as name{label="value",…} → value.
func gather(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}
