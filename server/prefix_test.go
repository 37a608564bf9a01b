package server_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestCallbackPrefix: LEDGER_CALLBACK_PREFIX=/ serves the callbacks at the
// root (/capture), not under /ledger; a prefix that is not a clean path
// refuses the start, naming the variable.
func TestCallbackPrefix(t *testing.T) {
	t.Parallel()
	t.Run("Config", func(t *testing.T) {
		t.Parallel()
		for in, want := range map[string]string{"/": "/", "/ledger": "/ledger", "/bank/v1": "/bank/v1"} {
			c, err := server.LoadConfig(nil, func(k string) string {
				if k == "LEDGER_CALLBACK_PREFIX" {
					return in
				}
				return ""
			}, io.Discard)
			if err != nil || c.CallbackPrefix != want {
				t.Errorf("%q: CallbackPrefix = %q, %v; want %q", in, c.CallbackPrefix, err, want)
			}
		}
		for _, bad := range []string{"ledger", "/ledger/", "//", "/a//b", "/a/../b", "/:id", "/a b", "/a%2Fb"} {
			_, err := server.LoadConfig([]string{"--callback-prefix", bad}, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "LEDGER_CALLBACK_PREFIX (--callback-prefix)") {
				t.Errorf("%q: LoadConfig = %v, want an error naming LEDGER_CALLBACK_PREFIX", bad, err)
			}
		}
	})
	t.Run("RootServesAtTheRoot", func(t *testing.T) {
		t.Parallel()
		secret := randomKey(t)
		d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-root",
			"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret), "LEDGER_CALLBACK_PREFIX", "/"))
		c := &caller.Client{BaseURL: "http://" + d.callbacks, Key: envelope.Key{Secret: secret}}
		r, err := c.Send(context.Background(), claims.Capture, map[string]any{"providerID": "bank-root", "payoutID": "p",
			"holdReference": "hold_x", "idempotencyKey": "k"})
		if err != nil || r.Status != 200 || r.Outcome() != "approved" {
			t.Fatalf("POST /capture: %+v %v", r, err)
		}
		resp, err := http.Post("http://"+d.callbacks+"/ledger/capture", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("POST /ledger/capture = %d, want 404", resp.StatusCode)
		}
	})
}
