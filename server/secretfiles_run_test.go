package server_test

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestRunFromSecretFiles: ledgerd runs with its secrets in files (nothing
// secret in the environment or on the command line), and on a non-loopback
// admin listener /metrics needs the token unless LEDGER_METRICS_PUBLIC is
// set; /healthz and /readyz stay open.
func TestRunFromSecretFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := randomKey(t)
	files := []string{
		"LEDGER_KEK_FILE", write("kek", []byte(base64.StdEncoding.EncodeToString(randomKey(t))+"\n")),
		"LEDGER_SIGNING_SECRETS_FILE", write("secrets", []byte(base64.StdEncoding.EncodeToString(secret)+"\n")),
		"LEDGER_ADMIN_TOKEN_FILE", write("token", []byte("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n")),
	}
	url := storetest.URL(t)
	for _, c := range []struct {
		name          string
		public        string
		metricsNoAuth int
	}{
		{"MetricsNeedTheToken", "", 401},
		{"MetricsPublic", "true", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			kv := append([]string{"DATABASE_URL", url, "LEDGER_PROVIDER_ID", "bank-files", "LEDGER_ADMIN_LISTEN", "0.0.0.0:0",
				"LEDGER_METRICS_PUBLIC", c.public}, files...)
			d := start(t, config(t, kv...))
			_, port, _ := net.SplitHostPort(d.admin)
			admin := "http://127.0.0.1:" + port
			status := func(path, token string) int {
				req, _ := http.NewRequest("GET", admin+path, nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := status("/metrics", ""); got != c.metricsNoAuth {
				t.Errorf("/metrics without the token = %d, want %d", got, c.metricsNoAuth)
			}
			if got := status("/metrics", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"); got != 200 {
				t.Errorf("/metrics with the token = %d", got)
			}
			if got := status("/healthz", ""); got != 200 {
				t.Errorf("/healthz = %d", got)
			}
			if got := status("/readyz", ""); got != 200 {
				t.Errorf("/readyz = %d", got)
			}
			if got := status("/v1/holds", ""); got != 401 {
				t.Errorf("/v1/holds without the token = %d", got)
			}
			if got := status("/v1/holds", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"); got != 200 {
				t.Errorf("/v1/holds with the token from the file = %d", got)
			}
			cb := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
			r, err := cb.Send(context.Background(), claims.Capture, map[string]any{"providerID": "bank-files", "payoutID": "p",
				"holdReference": "hold_x", "idempotencyKey": "k-" + c.name})
			if err != nil || r.Status != 200 {
				t.Fatalf("callback with the secret from the file: %+v %v", r, err)
			}
			if err := d.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunWarnsOfReadableSecretFiles: a secret file others may read, taken
// because LEDGER_SECRET_FILES_READABLE is set, is named in a warning when
// ledgerd starts (its path and mode, never its content).
func TestRunWarnsOfReadableSecretFiles(t *testing.T) {
	t.Parallel()
	kek := base64.StdEncoding.EncodeToString(randomKey(t))
	file := filepath.Join(t.TempDir(), "kek")
	if err := os.WriteFile(file, []byte(kek+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncWriter{}
	addrs, failed := launch(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-readable",
		"LEDGER_KEK_FILE", file, "LEDGER_SECRET_FILES_READABLE", "true", "LEDGER_RECONCILE_EVERY", "0"), log)
	select {
	case <-addrs:
	case err := <-failed:
		t.Fatalf("ledgerd did not start: %v", err)
	}
	if got := log.String(); !strings.Contains(got, `"level":"WARN","msg":"LEDGER_KEK_FILE: `+file+` is readable by others (mode 0644)`) ||
		strings.Contains(got, kek) {
		t.Fatalf("no warning naming the file, or the key in the log:\n%s", got)
	}
}
