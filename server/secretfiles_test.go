package server

import (
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretFixture is a directory of its own and in it, mode 0600, a file of
// each secret setting: a KEK, an admin token (with a CRLF), signing secrets
// (with blank lines) and a service API key secret.
type secretFixture struct {
	t                                                          *testing.T
	dir, kek, secret, kekFile, tokenFile, secretsFile, apiFile string
}

func newSecretFixture(t *testing.T) *secretFixture {
	f := &secretFixture{t: t, dir: t.TempDir()}
	f.kek = base64.StdEncoding.EncodeToString([]byte("\x5d\x93\x0e\xb4\x27\xc1\x68\xfa\x11\x8e\x4b\xd6\x72\x39\xa5\x0c\xe8\x53\x9f\x26\xbd\x04\x71\xca\x3e\x97\x5b\xf2\x18\x6d\xa0\x4f"))
	f.secret = base64.StdEncoding.EncodeToString([]byte("\xc4\x2a\x97\x13\x6e\xfb\x08\x5d\xa1\x3c\xe6\x79\x92\x0f\xb8\x44\x1d\xd3\x6a\x85\xf7\x20\x4e\xbb\x59\x07\xcc\x31\x9a\x64\xe2\x7b"))
	f.kekFile = f.write("kek", f.kek+"\n")
	f.tokenFile = f.write("token", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\r\n")
	f.secretsFile = f.write("secrets", f.secret+"\n\n")
	f.apiFile = f.write("api", "api-secret-value")
	return f
}

// write writes content to the file name of the directory, mode 0600, and
// returns its path.
func (f *secretFixture) write(name, content string) string {
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// withMode is a copy of file with mode perm (chmod: the umask does not
// apply).
func (f *secretFixture) withMode(file string, perm os.FileMode) string {
	b, err := os.ReadFile(file)
	if err != nil {
		f.t.Fatal(err)
	}
	p := f.write(filepath.Base(file)+"-"+perm.String(), string(b))
	if err := os.Chmod(p, perm); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// TestSecretFiles: each secret setting X has X_FILE (and --x-file): the
// value is read from the file at start, trailing line breaks trimmed. A file
// that cannot be read, an empty one, or X and X_FILE both set refuse the
// start with one line naming the variable, and never the file's content.
func TestSecretFiles(t *testing.T) {
	t.Parallel()
	f := newSecretFixture(t)
	dir, kek, secret, kekFile, tokenFile, secretsFile, apiFile := f.dir, f.kek, f.secret, f.kekFile, f.tokenFile, f.secretsFile, f.apiFile
	write, withMode := f.write, f.withMode

	t.Run("FromEnv", func(t *testing.T) { secretFilesFromEnv(t, f) })
	t.Run("FromFlags", func(t *testing.T) { secretFilesFromFlags(t, f) })
	t.Run("TokenFileOpensAPublicAdminListener", func(t *testing.T) {
		t.Parallel()
		if _, err := LoadConfig(nil, env("LEDGER_ADMIN_LISTEN", "0.0.0.0:8081", "LEDGER_ADMIN_TOKEN_FILE", tokenFile), io.Discard); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("GroupReadableAccepted", func(t *testing.T) {
		t.Parallel()
		for _, perm := range []os.FileMode{0o400, 0o440, 0o640} {
			c, err := LoadConfig(nil, env("LEDGER_KEK_FILE", withMode(kekFile, perm)), io.Discard)
			if err != nil || base64.StdEncoding.EncodeToString(c.KEK) != kek || len(c.Warnings) != 0 {
				t.Fatalf("mode %04o: %v, warnings %q", perm, err, c.Warnings)
			}
		}
	})
	t.Run("WorldReadableWithTheSettingIsAWarning", func(t *testing.T) {
		t.Parallel()
		f := withMode(tokenFile, 0o644)
		c, err := LoadConfig([]string{"--secret-files-readable"}, env("LEDGER_ADMIN_TOKEN_FILE", f), io.Discard)
		if err != nil || c.AdminToken == "" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "LEDGER_ADMIN_TOKEN_FILE") ||
			!strings.Contains(c.Warnings[0], "0644") || strings.Contains(c.Warnings[0], c.AdminToken) {
			t.Fatalf("%v, warnings %q", err, c.Warnings)
		}
	})

	missing := filepath.Join(dir, "missing")
	empty := write("empty", "\n")
	badKEK := write("bad-kek", "not-a-key-but-secret-looking-text\n")
	for _, c := range []struct {
		name string
		args []string
		env  func(string) string
		want []string
	}{
		{"Missing", nil, env("LEDGER_KEK_FILE", missing), []string{"LEDGER_KEK_FILE", missing}},
		{"MissingFlag", []string{"--admin-token-file", missing}, env(), []string{"LEDGER_ADMIN_TOKEN_FILE (--admin-token-file)", missing}},
		{"Directory", nil, env("LEDGER_SIGNING_SECRETS_FILE", dir), []string{"LEDGER_SIGNING_SECRETS_FILE"}},
		{"Empty", nil, env("LEDGER_ADMIN_TOKEN_FILE", empty), []string{"LEDGER_ADMIN_TOKEN_FILE", "empty"}},
		{"BothEnv", nil, env("LEDGER_KEK", kek, "LEDGER_KEK_FILE", kekFile), []string{"LEDGER_KEK", "LEDGER_KEK_FILE", "both"}},
		{"EnvAndFlag", []string{"--service-api-key-secret-file", apiFile}, env("SERVICE_API_KEY_SECRET", "x"), []string{"SERVICE_API_KEY_SECRET", "--service-api-key-secret-file", "both"}},
		{"FlagAndEnvFile", []string{"--admin-token", "t"}, env("LEDGER_ADMIN_TOKEN_FILE", tokenFile), []string{"LEDGER_ADMIN_TOKEN", "LEDGER_ADMIN_TOKEN_FILE", "both"}},
		{"InvalidContent", nil, env("LEDGER_KEK_FILE", badKEK), []string{"LEDGER_KEK (LEDGER_KEK_FILE)"}},
		// As ssh does with a private key: others may not read it, and only
		// its owner may write it.
		{"WorldReadable", nil, env("LEDGER_KEK_FILE", withMode(kekFile, 0o644)), []string{"LEDGER_KEK_FILE", "readable by others", "0644", "LEDGER_SECRET_FILES_READABLE"}},
		{"WorldReadableOnly", []string{"--signing-secrets-file", withMode(secretsFile, 0o604)}, env(), []string{"LEDGER_SIGNING_SECRETS_FILE (--signing-secrets-file)", "readable by others"}},
		{"GroupWritable", nil, env("SERVICE_API_KEY_SECRET_FILE", withMode(apiFile, 0o660)), []string{"SERVICE_API_KEY_SECRET_FILE", "writable by its group or by others", "0660"}},
		{"WorldWritableEvenWhenReadableAccepted", nil, env("LEDGER_ADMIN_TOKEN_FILE", withMode(tokenFile, 0o666), "LEDGER_SECRET_FILES_READABLE", "true"), []string{"LEDGER_ADMIN_TOKEN_FILE", "writable"}},
		{"BadReadableSetting", nil, env("LEDGER_SECRET_FILES_READABLE", "sometimes", "LEDGER_KEK_FILE", kekFile), []string{"LEDGER_SECRET_FILES_READABLE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			secretFileRefused(t, c.args, c.env, c.want,
				[]string{kek, secret, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "api-secret-value", "secret-looking"})
		})
	}
}

// secretFilesFromFlags: each --x-file flag gives its setting the file's
// content, trailing line breaks trimmed.
func secretFilesFromFlags(t *testing.T, f *secretFixture) {
	t.Parallel()
	c, err := LoadConfig([]string{"--kek-file", f.kekFile, "--admin-token-file", f.tokenFile, "--signing-secrets-file", f.secretsFile,
		"--service-api-key-secret-file", f.apiFile}, env(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if base64.StdEncoding.EncodeToString(c.KEK) != f.kek || c.AdminToken != "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ||
		len(c.SigningSecrets) != 1 || c.ServiceAPIKeySecret != "api-secret-value" {
		t.Fatalf("config = %+v", c)
	}
}

// secretFilesFromEnv: each X_FILE variable gives its setting the file's
// content, trailing line breaks trimmed.
func secretFilesFromEnv(t *testing.T, f *secretFixture) {
	t.Parallel()
	c, err := LoadConfig(nil, env("LEDGER_KEK_FILE", f.kekFile, "LEDGER_ADMIN_TOKEN_FILE", f.tokenFile,
		"LEDGER_SIGNING_SECRETS_FILE", f.secretsFile, "SERVICE_API_KEY_SECRET_FILE", f.apiFile), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if base64.StdEncoding.EncodeToString(c.KEK) != f.kek || c.AdminToken != "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ||
		len(c.SigningSecrets) != 1 || c.SigningSecrets[0] != f.secret || c.ServiceAPIKeySecret != "api-secret-value" {
		t.Fatalf("config = %+v", c)
	}
}

// TestMetricsPublic: LEDGER_METRICS_PUBLIC (or --metrics-public, which
// needs no value) is a boolean, false by default.
func TestMetricsPublic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  func(string) string
		want bool
	}{
		{nil, env(), false},
		{nil, env("LEDGER_METRICS_PUBLIC", "true"), true},
		{nil, env("LEDGER_METRICS_PUBLIC", "false"), false},
		{[]string{"--metrics-public"}, env(), true},
		{[]string{"--metrics-public=false"}, env("LEDGER_METRICS_PUBLIC", "true"), false},
	} {
		cfg, err := LoadConfig(c.args, c.env, io.Discard)
		if err != nil || cfg.MetricsPublic != c.want {
			t.Errorf("%v: MetricsPublic = %v, %v; want %v", c.args, cfg.MetricsPublic, err, c.want)
		}
	}
	if _, err := LoadConfig(nil, env("LEDGER_METRICS_PUBLIC", "yes please"), io.Discard); err == nil || !strings.Contains(err.Error(), "LEDGER_METRICS_PUBLIC") {
		t.Errorf("LoadConfig = %v, want an error naming LEDGER_METRICS_PUBLIC", err)
	}
}

// secretFileRefused checks that LoadConfig refuses args and env with one
// line that names each of want and holds none of secrets.
func secretFileRefused(t *testing.T, args []string, env func(string) string, want, secrets []string) {
	t.Helper()
	_, err := LoadConfig(args, env, io.Discard)
	if err == nil {
		t.Fatal("LoadConfig accepted it")
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not name %q", msg, w)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line", msg)
	}
	for _, secretText := range secrets {
		if strings.Contains(msg, secretText) {
			t.Errorf("error %q holds a secret", msg)
		}
	}
}
