package keyring_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/keyring"
)

func TestBootstrap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ImportsEnvSecretsIdempotently", func(t *testing.T) { bootstrapImportsEnvSecretsIdempotently(t, ctx) })

	t.Run("DoesNotResurrectARetiredEnvSecret", func(t *testing.T) { bootstrapDoesNotResurrectARetiredEnvSecret(t, ctx) })

	t.Run("RefusesAMalformedEnvSecretAndStoresNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		good := base64.StdEncoding.EncodeToString(b.newSecret(t))
		short := base64.StdEncoding.EncodeToString(b.newSecret(t)[:31])
		for _, bad := range []string{"not base64 at all!", short} {
			_, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, EnvSecrets: []string{good, bad}, Logger: b.log})
			if err == nil || !strings.Contains(err.Error(), "secret 2 of 2") {
				t.Fatalf("Bootstrap with %q = %v, want an error naming secret 2", bad, err)
			}
			if strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), good) {
				t.Fatalf("the error holds a secret: %v", err)
			}
		}
		if list, _ := b.vault.List(ctx); len(list) != 0 {
			t.Fatalf("%d rows stored, want none", len(list))
		}
	})

	t.Run("EmbeddedGeneratesADevSecret", func(t *testing.T) { bootstrapEmbeddedGeneratesADevSecret(t, ctx) })

	t.Run("EmbeddedWithSecretsAndNoFileDoesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, _, err := b.vault.Add(ctx, b.newSecret(t)); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		res, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, Embedded: true, DataDir: dir, Logger: b.log})
		if err != nil || res.Generated != "" {
			t.Fatalf("Bootstrap = %+v, %v; want nothing generated", res, err)
		}
		if _, err := os.Stat(filepath.Join(dir, keyring.SecretFile)); !os.IsNotExist(err) {
			t.Fatalf("a secret file was written: %v", err)
		}
		if list, _ := b.vault.List(ctx); len(list) != 1 {
			t.Fatalf("%d rows, want 1", len(list))
		}
	})

	t.Run("EmbeddedWithEnvSecretGeneratesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		secret := b.newSecret(t)
		dir := t.TempDir()
		res, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, Embedded: true, DataDir: dir, Logger: b.log,
			EnvSecrets: []string{base64.StdEncoding.EncodeToString(secret)}})
		if err != nil || res.Generated != "" || len(res.Imported) != 1 {
			t.Fatalf("Bootstrap = %+v, %v; want the env secret imported and nothing generated", res, err)
		}
	})

	t.Run("NotEmbeddedEmptyKeyringWarns", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res, err := keyring.Bootstrap(ctx, keyring.BootstrapConfig{Vault: b.vault, DataDir: t.TempDir(), Logger: b.log})
		if err != nil || res.Generated != "" {
			t.Fatalf("Bootstrap = %+v, %v", res, err)
		}
		if n, _ := b.vault.CountActive(ctx); n != 0 {
			t.Fatal("a secret was generated outside embedded mode")
		}
		if !strings.Contains(b.logs.String(), "no active signing secret") {
			t.Fatalf("no warning:\n%s", b.logs.String())
		}
	})
}

// bootstrapDoesNotResurrectARetiredEnvSecret: a secret of the environment
// retired through the API is refused at the next start, with a warning
// naming its fingerprint, and stays retired.
func bootstrapDoesNotResurrectARetiredEnvSecret(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	secret := b.newSecret(t)
	cfg := keyring.BootstrapConfig{Vault: b.vault, EnvSecrets: []string{base64.StdEncoding.EncodeToString(secret)}, Logger: b.log}
	if _, err := keyring.Bootstrap(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	list, _ := b.vault.List(ctx)
	if err := b.vault.Retire(ctx, list[0].SecretID); err != nil {
		t.Fatal(err)
	}
	res, err := keyring.Bootstrap(ctx, cfg)
	if err != nil || !slices.Equal(res.Refused, []string{fingerprint(secret)}) || len(res.Imported)+len(res.Present) != 0 {
		t.Fatalf("Bootstrap = %+v, %v; want the secret refused", res, err)
	}
	if n, _ := b.vault.CountActive(ctx); n != 0 {
		t.Fatalf("%d active secrets, want 0", n)
	}
	logs := b.logs.String()
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "was retired") || !strings.Contains(logs, fingerprint(secret)) {
		t.Fatalf("no warning naming the fingerprint:\n%s", logs)
	}
}

// bootstrapEmbeddedGeneratesADevSecret: an embedded database with no secret
// gets a generated one, in a 0600 file of a 0700 directory, that opens
// requests, with its path and fingerprint logged; a second start generates
// nothing and leaves the file as it was.
func bootstrapEmbeddedGeneratesADevSecret(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	dir := filepath.Join(t.TempDir(), "var", "ledgerd")
	cfg := keyring.BootstrapConfig{Vault: b.vault, Embedded: true, DataDir: dir, Logger: b.log}
	res, err := keyring.Bootstrap(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, keyring.SecretFile)
	if res.SecretFile != path || res.Generated == "" {
		t.Fatalf("Bootstrap = %+v; want a secret generated into %s", res, path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("data dir: %v, mode %v; want 0700", err, di.Mode())
	}
	content, _ := os.ReadFile(path)
	secret, err := envelope.ParseSecret(string(content))
	if err != nil {
		t.Fatalf("the file does not hold Base64 of 32 bytes: %v", err)
	}
	b.remember(secret)
	if fingerprint(secret) != res.Generated {
		t.Fatalf("file fingerprint %s, generated %s", fingerprint(secret), res.Generated)
	}
	r := b.replica(t, b.kek, 0)
	r.reload(t)
	if !r.opens(t, secret) || r.keyring.Len() != 1 {
		t.Fatal("the key in the file does not open requests")
	}
	list, _ := b.vault.List(ctx)
	if len(list) != 1 || sourceOf(t, b, list[0].SecretID) != "dev" {
		t.Fatalf("rows %+v; want one dev secret", list)
	}
	logs := b.logs.String()
	if !strings.Contains(logs, path) || !strings.Contains(logs, res.Generated) {
		t.Fatalf("the path and fingerprint are not logged:\n%s", logs)
	}

	// A second start finds the key: nothing generated, file untouched.
	res, err = keyring.Bootstrap(ctx, cfg)
	if err != nil || res.Generated != "" || res.SecretFile != "" {
		t.Fatalf("second Bootstrap = %+v, %v; want nothing generated", res, err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, content) {
		t.Fatal("the secret file changed")
	}
	if list, _ := b.vault.List(ctx); len(list) != 1 {
		t.Fatalf("%d rows, want 1", len(list))
	}
}

// bootstrapImportsEnvSecretsIdempotently: the environment's secrets are
// imported once, marked as from env, and open requests; a second start
// finds them present and adds no row.
func bootstrapImportsEnvSecretsIdempotently(t *testing.T, ctx context.Context) {
	t.Parallel()
	b := setup(t)
	s1, s2 := b.newSecret(t), b.newSecret(t)
	// As operators write them: padded standard, unpadded URL-safe, spaces.
	env := []string{base64.StdEncoding.EncodeToString(s1), " " + base64.RawURLEncoding.EncodeToString(s2) + " "}
	cfg := keyring.BootstrapConfig{Vault: b.vault, EnvSecrets: env, Logger: b.log}

	res, err := keyring.Bootstrap(ctx, cfg)
	want := []string{fingerprint(s1), fingerprint(s2)}
	if err != nil || !slices.Equal(res.Imported, want) || len(res.Present) != 0 || res.Generated != "" {
		t.Fatalf("first Bootstrap = %+v, %v; want %v imported", res, err, want)
	}
	res, err = keyring.Bootstrap(ctx, cfg)
	if err != nil || len(res.Imported) != 0 || !slices.Equal(res.Present, want) {
		t.Fatalf("second Bootstrap = %+v, %v; want %v present", res, err, want)
	}
	list, _ := b.vault.List(ctx)
	if len(list) != 2 {
		t.Fatalf("%d rows, want 2", len(list))
	}
	for _, in := range list {
		if src := sourceOf(t, b, in.SecretID); src != "env" {
			t.Fatalf("source = %q, want env", src)
		}
	}
	r := b.replica(t, b.kek, 0)
	r.reload(t)
	if !r.opens(t, s1) || !r.opens(t, s2) {
		t.Fatal("imported secrets do not open requests")
	}
}

func TestLoadOrCreateKEKCreatesThenReads(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, keyring.KEKFile)
	kek, err := keyring.LoadOrCreateKEK(path)
	if err != nil || len(kek) != keyring.KEKSize {
		t.Fatalf("LoadOrCreateKEK = %d bytes, %v", len(kek), err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("KEK file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Fatalf("KEK dir mode %v, want 0700", di.Mode())
	}
	again, err := keyring.LoadOrCreateKEK(path)
	if err != nil || !bytes.Equal(again, kek) {
		t.Fatalf("second call = %v; want the same KEK", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want only the KEK (no temporary left)", len(entries))
	}
}

func TestLoadOrCreateKEKReadsAGivenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kek")
	want := randomBytes(t, keyring.KEKSize)
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(want)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := keyring.LoadOrCreateKEK(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("LoadOrCreateKEK = %v; want the file's key", err)
	}
}

func TestLoadOrCreateKEKRefusesLoosePermissions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kek")
	content := base64.StdEncoding.EncodeToString(randomBytes(t, keyring.KEKSize))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // umask-proof
		t.Fatal(err)
	}
	if _, err := keyring.LoadOrCreateKEK(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("LoadOrCreateKEK on a 0644 file = %v, want a refusal", err)
	}
}

func TestLoadOrCreateKEKRefusesMalformedContentWithoutEchoingIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kek")
	content := base64.StdEncoding.EncodeToString(randomBytes(t, 24))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := keyring.LoadOrCreateKEK(path)
	if err == nil || strings.Contains(err.Error(), content) {
		t.Fatalf("LoadOrCreateKEK = %v; want an error without the content", err)
	}
}

func TestLoadOrCreateKEKConcurrentCreatorsAgree(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kek")
	const n = 8
	keks := make([][]byte, n)
	errs := make([]error, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			keks[i], errs[i] = keyring.LoadOrCreateKEK(path)
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil || !bytes.Equal(keks[i], keks[0]) {
			t.Fatalf("creator %d: %v (same key: %v)", i, errs[i], bytes.Equal(keks[i], keks[0]))
		}
	}
}
