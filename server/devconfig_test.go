package server

import (
	"errors"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevDefaults: in embedded mode (a development setup) the callback
// listener stays on loopback unless told otherwise, and the data dir is
// the source tree's var/ledgerd whatever the working directory.
func TestDevDefaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"EmbeddedLoopback", nil, env(), "127.0.0.1:8080"},
		{"WithADatabaseAllInterfaces", nil, env("DATABASE_URL", "postgres://db/ledger", "LEDGER_PROVIDER_ID", "p", "LEDGER_KEK", testKEKb64), ":8080"},
		{"EmbeddedToldByEnv", nil, env("LEDGER_LISTEN", ":8080"), ":8080"},
		{"EmbeddedToldByFlag", []string{"--listen", "0.0.0.0:9090"}, env(), "0.0.0.0:9090"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(c.args, c.env, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Listen != c.want {
				t.Fatalf("callback listener %s, want %s", cfg.Listen, c.want)
			}
		})
	}
	t.Run("DataDirOfTheSourceTree", func(t *testing.T) {
		t.Parallel()
		cfg, err := LoadConfig(nil, env(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.Abs("../var/ledgerd") // the tests run in server/
		if cfg.DataDir != want {
			t.Fatalf("data dir %s, want %s", cfg.DataDir, want)
		}
		if cfg, _ := LoadConfig([]string{"--data-dir", "rel/dir"}, env(), io.Discard); cfg.DataDir != "rel/dir" {
			t.Fatalf("an explicit data dir was changed: %s", cfg.DataDir)
		}
	})
}

// TestConfigErrors: a bad setting is one line naming it once; -h is the
// usage, on the writer given (ledgerd's stdout).
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	var help strings.Builder
	_, err := LoadConfig([]string{"--bogus"}, env(), &help)
	if err == nil || err.Error() != "flag provided but not defined: -bogus (ledgerd -h lists the settings)" || help.Len() != 0 {
		t.Fatalf("%v; usage printed: %q", err, help.String())
	}
	_, err = LoadConfig(nil, env("LEDGER_REQUEST_TIMEOUT", "soon"), &help)
	if err == nil || err.Error() != `invalid LEDGER_REQUEST_TIMEOUT: "soon" is not a positive duration such as 3s or 15m` {
		t.Fatalf("%v", err)
	}
	_, err = LoadConfig([]string{"-h"}, env(), &help)
	if !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(help.String(), "Usage of ledgerd") || !strings.Contains(help.String(), "LEDGER_ADMIN_LISTEN") {
		t.Fatalf("%v: %q", err, help.String())
	}
}
