package drive

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/keyring"
)

// Config configures one run.
type Config struct {
	CallbacksURL string // e.g. http://127.0.0.1:8080/ledger
	AdminURL     string // e.g. http://127.0.0.1:8081
	AdminToken   string // bearer token of the admin API (LEDGER_ADMIN_TOKEN)
	ProviderID   string
	SecretFile   string // Base64 signing secret; "": DefaultSecretFile()
	Payouts      int
	Requests     int
	Seed         uint64 // 0: derived from the clock
}

// DefaultConfig is the configuration with no flags or env set.
func DefaultConfig() Config {
	return Config{CallbacksURL: "http://127.0.0.1:8080/ledger", AdminURL: "http://127.0.0.1:8081",
		ProviderID: "local", Payouts: 10, Requests: 5}
}

// DefaultSecretFile is the dev secret an embedded ledgerd writes: the file
// keyring.SecretFile (signing-secret) in its data directory, LEDGER_DATA_DIR or else var/ledgerd
// under the source tree's root.
func DefaultSecretFile() string {
	dir := os.Getenv("LEDGER_DATA_DIR")
	if dir == "" {
		dir = datadir.Default()
	}
	return filepath.Join(dir, keyring.SecretFile)
}

// Validate checks the configuration: a usage error (cli.UsageError) for
// each bad field, named by its flag.
func (cfg Config) Validate() error {
	if cfg.Payouts < 0 || cfg.Requests < 0 || cfg.Payouts > 10000 || cfg.Requests > 10000 {
		return cli.Usagef("--payouts and --requests must be between 0 and 10000")
	}
	for _, u := range []struct{ name, v string }{{"callbacks", cfg.CallbacksURL}, {"admin", cfg.AdminURL}} {
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return cli.Usagef("--%s %q is not an http(s) URL", u.name, u.v)
		}
	}
	if cfg.ProviderID == "" {
		return cli.Usagef("--provider-id must not be empty")
	}
	return nil
}

// SetupError marks an error before any lifecycle ran: the signing secret
// could not be read, or the admin API could not seed the accounts. The
// command exits 2 for it, 1 for any other error of Run.
type SetupError struct{ Err error }

// Error is the wrapped error's message.
func (e SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e SetupError) Unwrap() error { return e.Err }

func setupErr(format string, a ...any) error { return SetupError{fmt.Errorf(format, a...)} }
