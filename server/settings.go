package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/store"
)

type setting struct {
	env, flag, def, usage string
	set                   func(c *Config, v string) error
}

// boolFlags may be given without a value: --metrics-public is
// --metrics-public=true.
var boolFlags = map[string]bool{"metrics-public": true, "secret-files-readable": true}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func duration(dst func(*Config) *time.Duration, allowZero bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d == 0 && !allowZero) {
			return fmt.Errorf("%q is not a positive duration such as 3s or 15m", v)
		}
		*dst(c) = d
		return nil
	}
}

func nonNegative(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", v)
		}
		*dst(c) = n
		return nil
	}
}

func fraction(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return fmt.Errorf("%q is not a number from 0 to 1", v)
		}
		*dst(c) = f
		return nil
	}
}

func listenAddr(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return fmt.Errorf("%q is not host:port", v)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%q has no valid port", v)
		}
		*dst(c) = v
		return nil
	}
}

var settings = []setting{
	{"DATABASE_URL", "database-url", "", "Postgres URL; unset runs an embedded Postgres under the data dir", func(c *Config, v string) error {
		if v != "" {
			if _, err := store.Config(v, store.Options{}); err != nil {
				return errors.New("is not a valid Postgres URL or connection string")
			}
		}
		c.DatabaseURL = v
		return nil
	}},
	{"LEDGER_DATA_DIR", "data-dir", "", "embedded cluster and generated dev material (default var/ledgerd under the source tree's root, else under the working directory)", str(func(c *Config) *string { return &c.DataDir })},
	{"LEDGER_LISTEN", "listen", ":8080", "callback listener (default 127.0.0.1:8080 in embedded mode)", listenAddr(func(c *Config) *string { return &c.Listen })},
	{"LEDGER_ADMIN_LISTEN", "admin-listen", "127.0.0.1:8081", "admin API, metrics and health listener", listenAddr(func(c *Config) *string { return &c.AdminListen })},
	{"LEDGER_ADMIN_TOKEN", "admin-token", "", "bearer token the admin API requires", str(func(c *Config) *string { return &c.AdminToken })},
	{"LEDGER_PROVIDER_ID", "provider-id", "", "this provider's account ID (default local when embedded)", str(func(c *Config) *string { return &c.ProviderID })},
	{"LEDGER_SIGNING_SECRETS", "signing-secrets", "", "comma-separated Base64 signing secrets added at start", func(c *Config, v string) error {
		c.SigningSecrets = nil
		parts := strings.Split(v, ",")
		for i, s := range parts {
			if s = strings.TrimSpace(s); s != "" {
				b, err := decodeKey(s)
				if err != nil || len(b) != 32 {
					return errors.New("each secret must be the Base64 of 32 bytes")
				}
				if err := weakKey(b); err != nil {
					return fmt.Errorf("secret %d of %d is %v", i+1, len(parts), err)
				}
				c.SigningSecrets = append(c.SigningSecrets, s)
			}
		}
		return nil
	}},
	{"LEDGER_KEK", "kek", "", "Base64 32-byte key encrypting stored signing secrets", func(c *Config, v string) error {
		if v == "" {
			c.KEK = nil
			return nil
		}
		b, err := decodeKey(v)
		if err != nil || len(b) != 32 {
			return errors.New("must be the Base64 of 32 bytes")
		}
		if err := weakKey(b); err != nil {
			return fmt.Errorf("is %v", err)
		}
		c.KEK = b
		return nil
	}},
	// After LEDGER_KEK, which it is checked against.
	{"LEDGER_KEK_PREVIOUS", "kek-previous", "", "during a KEK rotation only: the Base64 32-byte KEK being replaced, read but never written", func(c *Config, v string) error {
		c.KEKPrevious = nil
		if v == "" {
			return nil
		}
		b, err := decodeKey(v)
		switch {
		case err != nil || len(b) != 32:
			return errors.New("must be the Base64 of 32 bytes")
		case c.KEK == nil:
			return errors.New("is set but LEDGER_KEK is not: give the new KEK as LEDGER_KEK and the old one as LEDGER_KEK_PREVIOUS")
		case string(b) == string(c.KEK):
			return errors.New("is LEDGER_KEK: give the previous KEK only during a rotation, and the old one")
		}
		if err := weakKey(b); err != nil {
			return fmt.Errorf("is %v", err)
		}
		c.KEKPrevious = b
		return nil
	}},
	{"LEDGER_TLS_CERT", "tls-cert", "", "TLS certificate file for the callback listener", str(func(c *Config) *string { return &c.TLSCert })},
	{"LEDGER_TLS_KEY", "tls-key", "", "TLS key file for the callback listener", str(func(c *Config) *string { return &c.TLSKey })},
	{"LEDGER_CALLBACK_PREFIX", "callback-prefix", "/ledger", "route prefix of the callbacks (/ for the root)", func(c *Config, v string) error {
		// "/" is the root (/authorize, …), kept as "/": an empty prefix
		// would mean the default, /ledger.
		if err := callbacks.CheckPrefix(v); err != nil {
			return fmt.Errorf("is not a path such as /ledger or /: %v", err)
		}
		c.CallbackPrefix = v
		return nil
	}},
	{"LEDGER_MAX_INFLIGHT", "max-inflight", "0", "callbacks in flight before 429 (0: sized to the pool)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", v)
		}
		c.MaxInflight = n
		return nil
	}},
	{"LEDGER_GROUP_COMMIT", "group-commit", "1", "group commit: up to this many transactions of callbacks in flight, the callbacks that arrive while all are busy committed together (0: off, each callback commits alone)", nonNegative(func(c *Config) *int { return &c.GroupCommit })},
	{"LEDGER_REQUEST_TIMEOUT", "request-timeout", "3s", "a callback not committed by then is rolled back and answered 408", duration(func(c *Config) *time.Duration { return &c.RequestTimeout }, false)},
	{"LEDGER_BODY_TIMEOUT", "body-timeout", "0", "a callback body not in by then (from arrival) is answered 408 body-timeout (0: 1s, at most a third of the request timeout)", duration(func(c *Config) *time.Duration { return &c.BodyTimeout }, true)},
	{"LEDGER_MAX_CONNECTIONS", "max-connections", "0", "open connections per listener; idle ones are closed first (0: 1024, less under a low open files limit)", nonNegative(func(c *Config) *int { return &c.MaxConnections })},
	{"LEDGER_CLOCK_LEEWAY", "clock-leeway", "60s", "tolerance on exp and iat", duration(func(c *Config) *time.Duration { return &c.ClockLeeway }, true)},
	{"LEDGER_MAX_TOKEN_LIFETIME", "max-token-lifetime", "10m", "a callback request valid longer (exp - iat) is refused 400 invalid-claims; LEDGER_IDEMPOTENCY_RETENTION must be at least this", duration(func(c *Config) *time.Duration { return &c.MaxTokenLifetime }, false)},
	{"LEDGER_FRAUD_DENY", "fraud-deny", "0.90", "fraudScore at or above which authorize is denied", fraction(func(c *Config) *float64 { return &c.FraudDeny })},
	{"LEDGER_FRAUD_STEPUP", "fraud-stepup", "0.75", "fraudScore at or above which step-up is required", fraction(func(c *Config) *float64 { return &c.FraudStepUp })},
	{"LEDGER_CREDIT_MAX", "credit-max", "", "largest single credit-account amount", func(c *Config, v string) error {
		if v == "" {
			c.CreditMax = nil
			return nil
		}
		d, err := decimal.NewFromString(v)
		if err != nil || !d.IsPositive() || strings.ContainsAny(v, "eE") {
			return fmt.Errorf("%q is not a positive decimal", v)
		}
		c.CreditMax = &d
		return nil
	}},
	{"LEDGER_HOLD_MAX_AGE", "hold-max-age", "264h", "a hold held longer is a stale-hold finding", duration(func(c *Config) *time.Duration { return &c.HoldMaxAge }, false)},
	{"LEDGER_IDEMPOTENCY_RETENTION", "idempotency-retention", "840h", "stored callback responses kept at least this long", duration(func(c *Config) *time.Duration { return &c.IdempotencyRetention }, false)},
	{"LEDGER_RECONCILE_EVERY", "reconcile-every", "15m", "scheduled reconciliation (0 = off)", duration(func(c *Config) *time.Duration { return &c.ReconcileEvery }, true)},
	{"LEDGER_RECONCILE_FULL_EVERY", "reconcile-full-every", "24h", "a run not asked to be full is full when the last full run is older", duration(func(c *Config) *time.Duration { return &c.ReconcileFullEvery }, false)},
	{"LEDGER_RECONCILE_PROVIDER_CONCURRENCY", "reconcile-provider-concurrency", "0", "payments lists a reconciliation run reads from the service at once (0: 4)", nonNegative(func(c *Config) *int { return &c.ReconcileProviderConcurrency })},
	{"SERVICE_BASE_URL", "service-base-url", "", "the service's provider API", str(func(c *Config) *string { return &c.ServiceBaseURL })},
	{"SERVICE_API_KEY_ID", "service-api-key-id", "", "provider API key id", str(func(c *Config) *string { return &c.ServiceAPIKeyID })},
	{"SERVICE_API_KEY_SECRET", "service-api-key-secret", "", "provider API key secret", str(func(c *Config) *string { return &c.ServiceAPIKeySecret })},
	{"SERVICE_VERSION", "service-version", "", "X-Service-Version for the provider API", str(func(c *Config) *string { return &c.ServiceVersion })},
	{"LEDGER_MIGRATE", "migrate", "auto", "auto: migrate at start; off: refuse to start on an old schema (run ledgerctl migrate)", func(c *Config, v string) error {
		if v != "auto" && v != "off" {
			return fmt.Errorf("%q is not auto or off", v)
		}
		c.Migrate = v
		return nil
	}},
	{"LEDGER_MIGRATION_DATABASE_URL", "migration-database-url", "", "direct or session-pooled Postgres URL for migrations and their session-level lock (default DATABASE_URL)", func(c *Config, v string) error {
		if v != "" {
			if _, err := store.Config(v, store.Options{}); err != nil {
				return errors.New("is not a valid Postgres URL or connection string")
			}
		}
		c.MigrationDatabaseURL = v
		return nil
	}},
	{"LEDGER_LOG_LEVEL", "log-level", "info", "debug, info, warn or error (one info line per callback)", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "debug", "info", "warn", "error":
			return c.LogLevel.UnmarshalText([]byte(v))
		}
		return fmt.Errorf("%q is not debug, info, warn or error", v)
	}},
	{"LEDGER_DB_EXEC_MODE", "db-exec-mode", "auto", "how statements are sent: auto (cache_describe behind a pooler, else cache_statement), " + strings.Join(store.ExecModes, ", "), func(c *Config, v string) error {
		if v != "auto" && !slices.Contains(store.ExecModes, v) {
			return fmt.Errorf("%q is not auto, %s", v, strings.Join(store.ExecModes, ", "))
		}
		c.DBExecMode = v
		return nil
	}},
	{"LEDGER_ADJUSTMENT_APPROVAL_OVER", "adjustment-approval-over", "", "dual control: an adjustment whose absolute amount is over this (in the account's currency) waits for another actor's approval (unset: off)", func(c *Config, v string) error {
		if v == "" {
			c.ApprovalOver = nil
			return nil
		}
		d, err := decimal.NewFromString(v)
		if err != nil || d.IsNegative() || strings.ContainsAny(v, "eE") {
			return fmt.Errorf("%q is not a decimal of zero or more", v)
		}
		c.ApprovalOver = &d
		return nil
	}},
	{"LEDGER_ADJUSTMENT_APPROVAL_TTL", "adjustment-approval-ttl", "24h", "how long an adjustment awaits approval before it expires", duration(func(c *Config) *time.Duration { return &c.ApprovalTTL }, false)},
	{readableSetting, "secret-files-readable", "false", "accept *_FILE secrets readable by others (Docker Compose file secrets keep the host file's mode), each logged as a warning; writable by group or others is always refused", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		c.SecretFilesReadable = b
		return nil
	}},
	{"LEDGER_METRICS_PUBLIC", "metrics-public", "false", "serve /metrics without the admin token on a non-loopback admin listener", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		c.MetricsPublic = b
		return nil
	}},
}

// Setting names one of ledgerd's settings as its documentation gives it:
// the env var, the flag (without dashes) and the default LoadConfig
// applies when neither is given ("" when there is none, or when it depends
// on the mode, such as LEDGER_LISTEN's in embedded mode); Usage is its
// help, and Bool says that its flag may be given without a value.
type Setting struct {
	Env, Flag, Default, Usage string
	Bool                      bool
}

// Settings lists every setting LoadConfig reads, the *_FILE settings of
// secrets included, in the order ledgerd -h prints them.
func Settings() []Setting {
	out := make([]Setting, 0, len(settings)+len(secretFiles))
	for _, s := range settings {
		out = append(out, Setting{Env: s.env, Flag: s.flag, Default: s.def, Usage: s.usage, Bool: boolFlags[s.flag]})
	}
	for _, f := range secretFiles {
		out = append(out, Setting{Env: f.env, Flag: f.flag,
			Usage: fmt.Sprintf("read %s from this file, trailing line breaks trimmed; preferred to %s, which ps shows", f.of, f.of)})
	}
	return out
}
