package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store/storetest"
)

func randomKEK(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, keyring.KEKSize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// kekReplicas are two admin APIs on one database: old, given only the old
// KEK, and rotated, given the new KEK and the old one as previous (step 1
// of a KEK rotation). The old replica stored two secrets.
type kekReplicas struct {
	old, rotated   adminCLI
	pool           *pgxpool.Pool
	oldKEK, newKEK []byte
	secretIDs      []string
}

func newKEKReplicas(t *testing.T) kekReplicas {
	t.Helper()
	db, pool := storetest.DB(t)
	r := kekReplicas{oldKEK: randomKEK(t), newKEK: randomKEK(t), pool: pool}
	serve := func(kek, previous []byte) (adminCLI, *keyring.Vault) {
		s, err := keyring.NewVault(db, kek, keyring.VaultOptions{PreviousKEK: previous})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(admintest.Handler(t, admin.New(admin.Config{DB: db, Secrets: s})))
		t.Cleanup(srv.Close)
		return adminCLI{url: srv.URL, db: db}, s
	}
	var oldStore *keyring.Vault
	r.old, oldStore = serve(r.oldKEK, nil)
	r.rotated, _ = serve(r.newKEK, r.oldKEK)
	for range 2 {
		info, secret, err := oldStore.Generate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		clear(secret)
		r.secretIDs = append(r.secretIDs, info.SecretID)
	}
	return r
}

func TestSecretsRekey(t *testing.T) {
	t.Parallel()

	t.Run("RotatesAndExitsZeroWhenNothingRemains", func(t *testing.T) {
		t.Parallel()
		r := newKEKReplicas(t)
		newFP := keyring.KEKFingerprint(r.newKEK)
		code, out, errs := r.rotated.run(t, "secrets", "rekey", "--kek-fingerprint", newFP)
		if code != 0 || !strings.Contains(out, "re-encrypted 2 secrets under KEK "+newFP) ||
			!strings.Contains(out, "previous KEK "+keyring.KEKFingerprint(r.oldKEK)) || !strings.Contains(out, "0 under another KEK") {
			t.Fatalf("rekey: exit %d, %q, %q", code, out, errs)
		}
		m := r.rotated.json(t, "secrets", "rekey")
		if m["rekeyed"] != 0.0 || m["current"] != 2.0 || m["remaining"] != 0.0 {
			t.Fatalf("rekey again: %v", m)
		}
		code, out, _ = r.rotated.run(t, "secrets", "list")
		if code != 0 || !strings.Contains(out, "KEK") || strings.Count(out, newFP) != 2 {
			t.Fatalf("list after the rekey does not show both secrets under the new KEK: %q", out)
		}
	})

	t.Run("ExitsOneWhileSecretsRemainUnderAnotherKEK", func(t *testing.T) {
		t.Parallel()
		r := newKEKReplicas(t)
		if code, _, errs := r.rotated.run(t, "secrets", "rekey"); code != 0 {
			t.Fatalf("rekey: %d %s", code, errs)
		}
		// The old replica can read neither secret now: it moves nothing,
		// lists both, and exits 1 (do not drop the previous KEK).
		code, out, errs := r.old.run(t, "secrets", "rekey")
		if code != 1 || errs != "" || !strings.Contains(out, "2 under another KEK") {
			t.Fatalf("rekey on the old replica: exit %d, %q, %q", code, out, errs)
		}
		for _, id := range r.secretIDs {
			if !tableRow(out, id, keyring.KEKFingerprint(r.newKEK), "other_kek") {
				t.Fatalf("the table does not list %s under the new KEK as other_kek:\n%s", id, out)
			}
		}
	})

	t.Run("RefusesOnAReplicaWhoseCurrentKEKIsAnother", func(t *testing.T) {
		t.Parallel()
		r := newKEKReplicas(t)
		code, out, errs := r.old.run(t, "secrets", "rekey", "--kek-fingerprint", keyring.KEKFingerprint(r.newKEK))
		if code != 3 || out != "" || !strings.Contains(errs, "kek") || !strings.Contains(errs, keyring.KEKFingerprint(r.oldKEK)) {
			t.Fatalf("rekey on the wrong replica: exit %d, %q, %q", code, out, errs)
		}
		var n int
		if err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM signing_secrets WHERE kek_fingerprint = $1`,
			keyring.KEKFingerprint(r.oldKEK)).Scan(&n); err != nil || n != 2 {
			t.Fatalf("a refused rekey moved secrets: %d left under the old KEK, %v", n, err)
		}
		if code, _, errs := r.old.run(t, "secrets", "rekey", "--kek-fingerprint", "nothex"); code != 3 || !strings.Contains(errs, "kekFingerprint") {
			t.Fatalf("a malformed fingerprint: exit %d, %q", code, errs)
		}
	})
}

func TestSecretsKEKFingerprint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kek := randomKEK(t)
	file := filepath.Join(dir, "kek")
	if err := os.WriteFile(file, []byte(base64.StdEncoding.EncodeToString(kek)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"secrets", "kek-fingerprint", "--from-file", file}, &out, &errb); code != 0 ||
		out.String() != keyring.KEKFingerprint(kek)+"\n" {
		t.Fatalf("kek-fingerprint: exit %d, %q, %q", code, out.String(), errb.String())
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"secrets", "kek-fingerprint", "--from-file", bad}, &out, &errb); code != 1 ||
		out.Len() != 0 || !strings.Contains(errb.String(), "32 bytes") || strings.Contains(errb.String(), "c2hvcnQ") {
		t.Fatalf("kek-fingerprint of a short key: exit %d, %q, %q", code, out.String(), errb.String())
	}
}

// TestSecretsRekeyHelp: the help of the rotation commands says what to
// give and what the exit status means for step 3 (TestHelp walks them with
// every other command).
func TestSecretsRekeyHelp(t *testing.T) {
	t.Parallel()
	for args, want := range map[string][]string{
		"secrets rekey -h":               {"--kek-fingerprint", "LEDGER_KEK_PREVIOUS=<old KEK>", "Exit status:\n  0  every active secret is under the current KEK\n  1  secrets remain"},
		"secrets kek-fingerprint --help": {"--from-file", "never from the command line", "Exit status:\n  0  printed"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), strings.Fields(args), &out, &errb); code != 0 || errb.Len() != 0 {
			t.Fatalf("ledgerctl %s: exit %d, %q", args, code, errb.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("ledgerctl %s does not say %q:\n%s", args, w, out.String())
			}
		}
	}
}
