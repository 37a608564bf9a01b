package server

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/datadir"
	"github.com/provider-ledger/adapter/store"
)

// Config is ledgerd's configuration (contract §1). Every field comes
// from an env var and a flag of the same meaning; the flag wins.
type Config struct {
	DatabaseURL     string
	DataDir         string
	Listen          string
	AdminListen     string
	AdminToken      string
	ProviderID      string
	SigningSecrets  []string // Base64, as given
	KEK             []byte   // 32 bytes; nil only in embedded mode (generated)
	KEKPrevious     []byte   // 32 bytes during a KEK rotation, else nil
	TLSCert, TLSKey string
	CallbackPrefix  string
	MaxInflight     int // 0: sized to the pool
	RequestTimeout  time.Duration
	BodyTimeout     time.Duration // 0: 1s, or a third of RequestTimeout when less
	MaxConnections  int           // per listener; 0: sized to the open files limit
	ClockLeeway     time.Duration
	// MaxTokenLifetime bounds a callback request's exp - iat.
	MaxTokenLifetime     time.Duration
	FraudDeny            float64
	FraudStepUp          float64
	CreditMax            *decimal.Decimal
	HoldMaxAge           time.Duration
	IdempotencyRetention time.Duration
	ReconcileEvery       time.Duration
	// ReconcileProviderConcurrency is how many payments lists a
	// reconciliation run reads at once (0: the package's default, 4).
	ReconcileProviderConcurrency int
	ServiceBaseURL               string
	ServiceAPIKeyID              string
	ServiceAPIKeySecret          string
	ServiceVersion               string
	Migrate                      string     // auto or off
	MigrationDatabaseURL         string     // "": DatabaseURL
	LogLevel                     slog.Level // debug, info, warn, error
	DBExecMode                   string     // auto or one of store.ExecModes
	// MetricsPublic serves /metrics without the admin token on a
	// non-loopback admin listener (on a loopback one it is always open).
	MetricsPublic bool
	// ApprovalOver is dual control's threshold (nil: off): an adjustment
	// whose absolute amount is over it waits for a second actor.
	ApprovalOver *decimal.Decimal
	// ApprovalTTL is how long such an adjustment waits before it expires.
	ApprovalTTL time.Duration
	// SecretFilesReadable accepts *_FILE secrets that others may read
	// (LEDGER_SECRET_FILES_READABLE), each named in Warnings.
	SecretFilesReadable bool
	// Warnings are what LoadConfig accepted but Run logs as warnings.
	Warnings []string
}

// Embedded reports whether ledgerd runs its own Postgres.
func (c Config) Embedded() bool { return c.DatabaseURL == "" }

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

// weakKey applies the adapter's one key-strength check (the one the keyring
// and the admin API apply) and words its refusal for a start-up message:
// "weak (every byte is the same): use 32 bytes from a random source".
func weakKey(b []byte) error {
	var weak *envelope.WeakSecretError
	if errors.As(envelope.CheckStrength(b), &weak) {
		return fmt.Errorf("weak (%s): use 32 bytes from a random source", weak.Reason)
	}
	return nil
}

// ErrVersion is returned by LoadConfig for --version: print the version
// and exit 0.
var ErrVersion = errors.New("version requested")

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not Base64")
}

// LoadConfig reads the configuration from getenv and args (flag wins over
// env). An invalid value is an error naming the variable and its flag; -h
// writes the usage to help and returns flag.ErrHelp.
func LoadConfig(args []string, getenv func(string) string, help io.Writer) (Config, error) {
	var c Config
	src, err := parseArgs(args, getenv, help)
	if err != nil {
		return c, err
	}
	if err := src.readReadable(); err != nil {
		return c, err
	}
	if err := src.apply(&c); err != nil {
		return c, err
	}
	c.Warnings = src.warnings
	if err := src.fillDefaults(&c); err != nil {
		return c, err
	}
	return c, c.check()
}

// configSource looks settings up in the parsed command line and the
// environment.
type configSource struct {
	getenv func(string) string
	flags  map[string]*stringValue
	given  map[string]bool // the flags set on the command line
	// readable is LEDGER_SECRET_FILES_READABLE, read before the secret
	// files; warnings are what reading them had to say.
	readable bool
	warnings []string
}

// newFlagSet defines a flag per setting and per secret file, and
// --version.
func newFlagSet() (fs *flag.FlagSet, flags map[string]*stringValue, version *bool) {
	fs = flag.NewFlagSet("ledgerd", flag.ContinueOnError)
	flags = make(map[string]*stringValue, len(settings)+len(secretFiles))
	for i, s := range Settings() {
		flags[s.Flag] = &stringValue{isBool: s.Bool}
		usage := fmt.Sprintf("%s (env %s, default %q)", s.Usage, s.Env, s.Default)
		if i >= len(settings) { // a secret file: no default
			usage = fmt.Sprintf("%s (env %s)", s.Usage, s.Env)
		}
		fs.Var(flags[s.Flag], s.Flag, usage)
	}
	version = fs.Bool("version", false, "print the version and exit")
	return fs, flags, version
}

// parseArgs parses the command line: -h writes the usage to help and
// returns flag.ErrHelp, --version returns ErrVersion.
func parseArgs(args []string, getenv func(string) string, help io.Writer) (*configSource, error) {
	fs, flags, version := newFlagSet()
	// The flag package would print a bad flag's error before and after the
	// whole usage: a bad flag is one line, -h the usage.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(help)
		fmt.Fprintln(help, "Usage of ledgerd: every setting is an env var or a flag; the flag wins.")
		fs.PrintDefaults()
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("%v (ledgerd -h lists the settings)", err)
	}
	if *version {
		return nil, ErrVersion
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return &configSource{getenv: getenv, flags: flags, given: given}, nil
}

// value returns the value of an env var and flag pair and where it came
// from ("" when neither is set); the flag wins.
func (src *configSource) value(env, flagName string) (v, from string) {
	if e, ok := lookup(src.getenv, env); ok {
		v, from = e, env
	}
	if src.given[flagName] {
		v, from = src.flags[flagName].v, "--"+flagName
	}
	return v, from
}

// settingValue returns the value of setting s and where it came from: its
// env var or flag, or else the file its secret file setting names ("" when
// none is set).
func (src *configSource) settingValue(s setting) (v, from string, err error) {
	v, from = src.value(s.env, s.flag)
	i := slices.IndexFunc(secretFiles, func(f secretFile) bool { return f.of == s.env })
	if i < 0 {
		return v, from, nil
	}
	f := secretFiles[i]
	path, pathFrom := src.value(f.env, f.flag)
	switch {
	case pathFrom != "" && from != "":
		return "", "", fmt.Errorf("%s and %s are both set: give one (prefer %s)", where(s.env, from), where(f.env, pathFrom), f.env)
	case pathFrom != "":
		content, warning, err := readSecretFile(where(f.env, pathFrom), path, src.readable)
		if err != nil {
			return "", "", err
		}
		if warning != "" {
			src.warnings = append(src.warnings, warning)
		}
		return content, f.env, nil
	}
	return v, from, nil
}

// apply sets every setting of c, in order, to its value or else its
// default.
func (src *configSource) apply(c *Config) error {
	for _, s := range settings {
		v, from, err := src.settingValue(s)
		if err != nil {
			return err
		}
		if from == "" {
			v = s.def
		}
		if err := s.set(c, v); err != nil {
			if from == "" {
				from = s.env
			}
			return fmt.Errorf("invalid %s: %v", where(s.env, from), err)
		}
	}
	return nil
}

// readReadable reads LEDGER_SECRET_FILES_READABLE, which the reading of
// every secret file depends on.
func (src *configSource) readReadable() error {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.env == readableSetting })
	v, from := src.value(settings[i].env, settings[i].flag)
	if from == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("invalid %s: %q is not true or false", where(readableSetting, from), v)
	}
	src.readable = b
	return nil
}

// fillDefaults sets the defaults that depend on the mode (embedded or not)
// and requires a provider ID with an external database.
func (src *configSource) fillDefaults(c *Config) error {
	if _, from := src.value("LEDGER_LISTEN", "listen"); from == "" && c.Embedded() {
		// A development setup: its callbacks stay on this machine unless told.
		c.Listen = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = datadir.Default()
	}
	if c.ProviderID == "" {
		if !c.Embedded() {
			return errors.New("LEDGER_PROVIDER_ID (--provider-id) is required when DATABASE_URL is set")
		}
		c.ProviderID = "local"
	}
	return nil
}

// ServiceRetryWindow is the longest the service may go on sending a
// callback's idempotency key: a request for payment stays unpaid, and its
// credit-account retried, for up to 30 days (docs/interface.md; an
// unclaimed payment, 10 days). LEDGER_IDEMPOTENCY_RETENTION may not be less.
const ServiceRetryWindow = 30 * 24 * time.Hour

// RetentionFloor is the least LEDGER_IDEMPOTENCY_RETENTION accepted: no
// stored answer is purged while the service may still send its key, nor
// while a request that carries it is still valid.
func (c Config) RetentionFloor() time.Duration { return max(ServiceRetryWindow, c.MaxTokenLifetime) }

// check refuses settings that contradict one another.
func (c Config) check() error {
	if c.KEK == nil && !c.Embedded() {
		// A KEK generated into the data dir would live in a container's
		// writable layer, and each replica would make its own: the stored
		// signing secrets would become unreadable.
		return errors.New("LEDGER_KEK or LEDGER_KEK_FILE is required when DATABASE_URL is set: give every replica the same Base64 of 32 random bytes (openssl rand -base64 32); only the embedded mode generates one")
	}
	if c.MigrationDatabaseURL != "" && c.Embedded() {
		return errors.New("LEDGER_MIGRATION_DATABASE_URL is set but DATABASE_URL is not: the embedded database migrates itself")
	}
	if c.Migrate == "off" && c.Embedded() {
		// Nothing else can reach it while ledgerd is stopped.
		return errors.New("LEDGER_MIGRATE=off needs DATABASE_URL: the embedded database is migrated by ledgerd itself")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("LEDGER_TLS_CERT and LEDGER_TLS_KEY must be set together")
	}
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return fmt.Errorf("invalid LEDGER_TLS_CERT / LEDGER_TLS_KEY: %v", err)
		}
	}
	if floor := c.RetentionFloor(); c.IdempotencyRetention < floor {
		return fmt.Errorf("LEDGER_IDEMPOTENCY_RETENTION %s is below %s, the longer of the service's retry window (%s) and LEDGER_MAX_TOKEN_LIFETIME (%s): a stored answer would be purged while the service can still send its key",
			c.IdempotencyRetention, floor, ServiceRetryWindow, c.MaxTokenLifetime)
	}
	if c.BodyTimeout >= c.RequestTimeout {
		return errors.New("LEDGER_BODY_TIMEOUT must be below LEDGER_REQUEST_TIMEOUT (the body is read within the request's deadline)")
	}
	if c.FraudStepUp > c.FraudDeny {
		return errors.New("LEDGER_FRAUD_STEPUP must not be above LEDGER_FRAUD_DENY")
	}
	if c.AdminToken == "" && !loopback(c.AdminListen) {
		return fmt.Errorf("LEDGER_ADMIN_LISTEN %s is not a loopback address: set LEDGER_ADMIN_TOKEN to expose the admin API", c.AdminListen)
	}
	if !loopback(c.AdminListen) {
		if err := admin.CheckTokenStrength(c.AdminToken); err != nil {
			return fmt.Errorf("LEDGER_ADMIN_TOKEN %s: on a non-loopback admin listener (%s) it must be random, such as openssl rand -hex 32", err, c.AdminListen)
		}
	}
	return nil
}

// where names a setting and, when it came from its flag, the flag:
// "LEDGER_KEK" or "LEDGER_KEK (--kek)".
func where(env, from string) string {
	if from == "" || from == env {
		return env
	}
	return env + " (" + from + ")"
}

func lookup(getenv func(string) string, key string) (string, bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	v := getenv(key)
	return v, v != ""
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
