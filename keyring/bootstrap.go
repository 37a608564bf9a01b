package keyring

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/provider-ledger/adapter/envelope"
)

// BootstrapConfig is the start-up input of Bootstrap.
type BootstrapConfig struct {
	// Vault is the keyring to fill. Required.
	Vault *Vault
	// EnvSecrets are the Base64 secrets of LEDGER_SIGNING_SECRETS.
	EnvSecrets []string
	// Embedded is true when ledgerd runs its own Postgres (no DATABASE_URL):
	// a development setup, where an empty keyring gets a generated secret.
	Embedded bool
	// DataDir is LEDGER_DATA_DIR; required when Embedded.
	DataDir string
	// Logger receives what Bootstrap did, with fingerprints only. Nil
	// discards.
	Logger *slog.Logger
}

// BootstrapResult says what Bootstrap did, by fingerprint.
type BootstrapResult struct {
	// Imported: env secrets stored by this call.
	Imported []string
	// Present: env secrets that were already stored and active.
	Present []string
	// Refused: env secrets that were retired, left retired.
	Refused []string
	// Unverified: env secrets stored under a KEK this replica was not given
	// (a KEK rotation under way): left as they are, unverified.
	Unverified []string
	// Generated is the fingerprint of the development secret generated in
	// embedded mode, or "".
	Generated string
	// SecretFile is the file the generated secret was written to, or "".
	SecretFile string
}

// Bootstrap prepares the keyring at start-up:
//
//  1. Each env secret is added (source env), idempotently: one already
//     stored is left as it is. One that was retired is not brought back: it
//     is logged as a warning with its fingerprint and start-up goes on.
//     One stored under a KEK this replica was not given (an old replica
//     restarted while a KEK rotation re-encrypted it) cannot be compared
//     with the stored one: it is logged as a warning and left as it is, so
//     that a replica does not fail to start in the middle of a rotation.
//  2. In embedded mode, when no secret is active, a secret is generated
//     (source dev) and its Base64 written to <DataDir>/signing-secret
//     (0600), so that servicesim and loadtest on the same machine can use
//     it; the path and fingerprint are logged, never the key. When secrets
//     are active nothing is generated, even if that file is missing.
//  3. Outside embedded mode an empty keyring is logged as a warning.
//
// A malformed or weak (envelope.CheckStrength) env secret is an error
// naming its position, not its value.
func Bootstrap(ctx context.Context, cfg BootstrapConfig) (BootstrapResult, error) {
	var res BootstrapResult
	if cfg.Vault == nil {
		return res, errors.New("keyring: Bootstrap needs a Vault")
	}
	if cfg.Embedded && cfg.DataDir == "" {
		return res, errors.New("keyring: Bootstrap in embedded mode needs a DataDir")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Parse all before storing any, so a typo stores nothing.
	secrets := make([][]byte, 0, len(cfg.EnvSecrets))
	defer func() {
		for _, s := range secrets {
			clear(s)
		}
	}()
	for i, b64 := range cfg.EnvSecrets {
		secret, err := envelope.ParseSecret(b64)
		if err != nil {
			return res, fmt.Errorf("keyring: LEDGER_SIGNING_SECRETS: secret %d of %d is not the Base64 of 32 bytes", i+1, len(cfg.EnvSecrets))
		}
		secrets = append(secrets, secret)
		var weak *envelope.WeakSecretError
		if errors.As(envelope.CheckStrength(secret), &weak) {
			return res, fmt.Errorf("keyring: LEDGER_SIGNING_SECRETS: secret %d of %d is weak (%s): use 32 bytes from a random source",
				i+1, len(cfg.EnvSecrets), weak.Reason)
		}
	}
	for _, secret := range secrets {
		fp := envelope.Key{Secret: secret}.Fingerprint()
		info, created, err := cfg.Vault.add(ctx, secret, sourceEnv)
		switch {
		case errors.Is(err, errOtherKEK):
			log.Warn("a signing secret of LEDGER_SIGNING_SECRETS is stored under a KEK this replica was not given; left as it is (see ledgerd_keyring_undecryptable_secrets)",
				"fingerprint", fp)
			res.Unverified = append(res.Unverified, fp)
		case errors.Is(err, ErrSecretRetired):
			log.Warn("a signing secret of LEDGER_SIGNING_SECRETS was retired; it stays retired and does not open callbacks: remove it from the environment",
				"fingerprint", fp)
			res.Refused = append(res.Refused, fp)
		case err != nil:
			return res, fmt.Errorf("keyring: import the secret with fingerprint %s: %w", fp, err)
		case created:
			log.Info("signing secret imported from LEDGER_SIGNING_SECRETS", "secretID", info.SecretID, "fingerprint", fp)
			res.Imported = append(res.Imported, fp)
		default:
			res.Present = append(res.Present, fp)
		}
	}

	if !cfg.Embedded {
		n, err := cfg.Vault.CountActive(ctx)
		if err != nil {
			return res, err
		}
		if n == 0 {
			log.Warn("no active signing secret: callbacks will be refused until one is added (LEDGER_SIGNING_SECRETS or POST /v1/signing-secrets)")
		}
		return res, nil
	}
	info, path, err := cfg.Vault.generateDev(ctx, cfg.DataDir)
	if err != nil {
		return res, err
	}
	if path != "" {
		log.Info("generated a development signing secret (embedded mode, empty keyring); its Base64 is in the file",
			"path", path, "secretID", info.SecretID, "fingerprint", info.Fingerprint)
		res.Generated, res.SecretFile = info.Fingerprint, path
	}
	return res, nil
}

// generateDev generates a dev secret when no secret is active, in one
// transaction under an advisory lock (so two processes cannot both
// generate), writing <dataDir>/signing-secret before the commit: a failed
// write stores nothing, and a failed commit leaves a file that the next
// start replaces. It returns the path "" when secrets were active.
func (v *Vault) generateDev(ctx context.Context, dataDir string) (info SecretInfo, path string, err error) {
	secret := make([]byte, envelope.SecretSize)
	defer clear(secret)
	if _, err := rand.Read(secret); err != nil {
		return info, "", fmt.Errorf("keyring: random secret: %w", err)
	}
	path = filepath.Join(dataDir, SecretFile)
	content := []byte(base64.StdEncoding.EncodeToString(secret) + "\n")
	defer clear(content)
	row, err := v.newRow(secret, sourceDev)
	if err != nil {
		return info, "", err
	}
	generated, err := v.db.AddSecretIfNone(ctx, row, func() error {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fmt.Errorf("keyring: data dir: %w", err)
		}
		if err := replaceFile(path, content); err != nil {
			return fmt.Errorf("keyring: write %s: %w", path, err)
		}
		return nil
	})
	info = infoOf(row)
	if err != nil {
		return info, "", fmt.Errorf("keyring: generate the development secret: %w", err)
	}
	if !generated {
		return info, "", nil
	}
	// Bootstrap logs it, once, with the file.
	return info, path, nil
}
