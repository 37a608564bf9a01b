package server

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/internal/datadir"
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
	GroupCommit     int // transactions of callbacks in flight at once under group commit (default 1); 0: off
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
	ReconcileFullEvery   time.Duration
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
