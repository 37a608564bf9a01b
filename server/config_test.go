package server

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/internal/datadir"
)

// testKEKb64 is a KEK for configurations with DATABASE_URL, which require
// one (32 random bytes: a built key is refused as weak).
const testKEKb64 = "FgDcPDOq34XU1/hUOC9Fwczg1FypwmBeNY63sGlp+yA="

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// badConfig is a configuration LoadConfig refuses, with what its error
// must name.
type badConfig struct {
	name string
	args []string
	env  func(string) string
	want string
}

// badConfigs are the configurations LoadConfig refuses, each naming the
// variable (and flag) at fault.
func badConfigs() []badConfig {
	return []badConfig{
		{"BadTimeout", nil, env("LEDGER_REQUEST_TIMEOUT", "soon"), "LEDGER_REQUEST_TIMEOUT"},
		{"NaNFraudDeny", nil, env("LEDGER_FRAUD_DENY", "NaN"), "LEDGER_FRAUD_DENY"},
		{"NaNFraudStepUp", nil, env("LEDGER_FRAUD_STEPUP", "nan"), "LEDGER_FRAUD_STEPUP"},
		{"InfFraudDeny", nil, env("LEDGER_FRAUD_DENY", "+Inf"), "LEDGER_FRAUD_DENY"},
		{"BadDatabaseURL", nil, env("DATABASE_URL", "postgres://x:@:bad:port/db", "LEDGER_PROVIDER_ID", "p"), "DATABASE_URL"},
		{"BadListenPort", []string{"--listen", "127.0.0.1:1x"}, env(), "LEDGER_LISTEN (--listen)"},
		{"MissingTLSFiles", nil, env("LEDGER_TLS_CERT", "/nonexistent.crt", "LEDGER_TLS_KEY", "/nonexistent.key"), "LEDGER_TLS_CERT"},
		{"ZeroTimeout", nil, env("LEDGER_REQUEST_TIMEOUT", "0s"), "LEDGER_REQUEST_TIMEOUT"},
		{"ZeroFullReconciliation", nil, env("LEDGER_RECONCILE_FULL_EVERY", "0s"), "LEDGER_RECONCILE_FULL_EVERY"},
		{"BadFlagNamesTheVariable", []string{"--fraud-deny", "2"}, env(), "LEDGER_FRAUD_DENY (--fraud-deny)"},
		{"BadListen", nil, env("LEDGER_LISTEN", "8080"), "LEDGER_LISTEN"},
		{"BadSecret", nil, env("LEDGER_SIGNING_SECRETS", "c2hvcnQ="), "LEDGER_SIGNING_SECRETS"},
		{"BadKEK", nil, env("LEDGER_KEK", "!!"), "LEDGER_KEK"},
		{"BadCreditMax", nil, env("LEDGER_CREDIT_MAX", "1e3"), "LEDGER_CREDIT_MAX"},
		{"NegativeCreditMax", nil, env("LEDGER_CREDIT_MAX", "-5"), "LEDGER_CREDIT_MAX"},
		{"BadInflight", nil, env("LEDGER_MAX_INFLIGHT", "-1"), "LEDGER_MAX_INFLIGHT"},
		{"BadPrefix", nil, env("LEDGER_CALLBACK_PREFIX", "ledger"), "LEDGER_CALLBACK_PREFIX"},
		{"ProviderRequiredWithDatabase", nil, env("DATABASE_URL", "postgres://x@localhost/db"), "LEDGER_PROVIDER_ID"},
		{"BadMaxTokenLifetime", nil, env("LEDGER_MAX_TOKEN_LIFETIME", "0s"), "LEDGER_MAX_TOKEN_LIFETIME"},
		{"RetentionOfASecond", nil, env("LEDGER_IDEMPOTENCY_RETENTION", "1s"), "LEDGER_IDEMPOTENCY_RETENTION 1s is below 720h0m0s"},
		{"RetentionUnderTheRetryWindow", nil, env("LEDGER_IDEMPOTENCY_RETENTION", "719h59m59s"), "LEDGER_IDEMPOTENCY_RETENTION"},
		{"RetentionUnderTheTokenLifetime", nil, env("LEDGER_IDEMPOTENCY_RETENTION", "800h", "LEDGER_MAX_TOKEN_LIFETIME", "801h"), "LEDGER_IDEMPOTENCY_RETENTION 800h0m0s is below 801h0m0s"},
		{"KEKRequiredWithDatabase", nil, env("DATABASE_URL", "postgres://x@localhost/db", "LEDGER_PROVIDER_ID", "p"), "LEDGER_KEK or LEDGER_KEK_FILE is required when DATABASE_URL is set"},
		{"PublicAdminNeedsToken", nil, env("LEDGER_ADMIN_LISTEN", "0.0.0.0:8081"), "LEDGER_ADMIN_TOKEN"},
		{"PublicAdminRefusesAWeakToken", nil, env("LEDGER_ADMIN_LISTEN", "0.0.0.0:8081", "LEDGER_ADMIN_TOKEN", "x"), "LEDGER_ADMIN_TOKEN is shorter than 32"},
		{"PublicAdminRefusesAPassword", nil, env("LEDGER_ADMIN_LISTEN", "[::]:8081", "LEDGER_ADMIN_TOKEN", strings.Repeat("hunter2!", 5)), "LEDGER_ADMIN_TOKEN"},
		{"BadApprovalOver", nil, env("LEDGER_ADJUSTMENT_APPROVAL_OVER", "-1"), "LEDGER_ADJUSTMENT_APPROVAL_OVER"},
		{"BadApprovalTTL", nil, env("LEDGER_ADJUSTMENT_APPROVAL_TTL", "0s"), "LEDGER_ADJUSTMENT_APPROVAL_TTL"},
		{"TLSPair", nil, env("LEDGER_TLS_CERT", "cert.pem"), "LEDGER_TLS_KEY"},
		{"StepUpAboveDeny", nil, env("LEDGER_FRAUD_STEPUP", "0.95"), "LEDGER_FRAUD_STEPUP"},
		{"BadMigrate", nil, env("LEDGER_MIGRATE", "yes"), "LEDGER_MIGRATE"},
		{"MigrateOffEmbedded", nil, env("LEDGER_MIGRATE", "off"), "LEDGER_MIGRATE=off needs DATABASE_URL"},
		{"BadMigrationURL", nil, env("DATABASE_URL", "postgres://x@h/db", "LEDGER_PROVIDER_ID", "p", "LEDGER_MIGRATION_DATABASE_URL", "postgres://x:@:bad:port/db"), "LEDGER_MIGRATION_DATABASE_URL"},
		{"MigrationURLWithoutDatabaseURL", nil, env("LEDGER_MIGRATION_DATABASE_URL", "postgres://x@h/db"), "LEDGER_MIGRATION_DATABASE_URL"},
		{"BadLogLevel", nil, env("LEDGER_LOG_LEVEL", "verbose"), "LEDGER_LOG_LEVEL"},
		{"BadExecMode", nil, env("LEDGER_DB_EXEC_MODE", "prepared"), "LEDGER_DB_EXEC_MODE"},
		{"BodyTimeoutNotBelowRequestTimeout", nil, env("LEDGER_BODY_TIMEOUT", "3s"), "LEDGER_BODY_TIMEOUT"},
		{"BadMaxConnections", nil, env("LEDGER_MAX_CONNECTIONS", "-1"), "LEDGER_MAX_CONNECTIONS"},
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	t.Run("DefaultsRunEmbedded", func(t *testing.T) {
		c, err := LoadConfig(nil, env(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Embedded() || c.ProviderID != "local" || c.Listen != "127.0.0.1:8080" || c.AdminListen != "127.0.0.1:8081" ||
			c.DataDir != datadir.Default() || c.CallbackPrefix != "/ledger" || c.RequestTimeout != 3*time.Second ||
			c.ClockLeeway != time.Minute || c.FraudDeny != 0.90 || c.FraudStepUp != 0.75 || c.CreditMax != nil ||
			c.HoldMaxAge != 264*time.Hour || c.IdempotencyRetention != 840*time.Hour || c.ReconcileEvery != 15*time.Minute ||
			c.ReconcileFullEvery != 24*time.Hour {
			t.Fatalf("defaults: %+v", c)
		}
	})
	t.Run("RetentionAtItsFloor", func(t *testing.T) {
		c, err := LoadConfig(nil, env("LEDGER_IDEMPOTENCY_RETENTION", "720h"), io.Discard)
		if err != nil || c.IdempotencyRetention != serviceRetryWindow || c.MaxTokenLifetime != 10*time.Minute {
			t.Fatalf("the retry window as retention: %v, %+v", err, c)
		}
	})
	t.Run("FlagWinsOverEnv", func(t *testing.T) {
		c, err := LoadConfig([]string{"--listen", "127.0.0.1:9000", "--credit-max", "250.00"},
			env("LEDGER_LISTEN", "127.0.0.1:7000", "LEDGER_CREDIT_MAX", "10", "LEDGER_FRAUD_DENY", "0.5", "LEDGER_FRAUD_STEPUP", "0.4"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.Listen != "127.0.0.1:9000" || c.CreditMax.String() != "250" || c.FraudDeny != 0.5 {
			t.Fatalf("%+v", c)
		}
	})
	for _, c := range badConfigs() {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadConfig(c.args, c.env, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to name %s", err, c.want)
			}
		})
	}
	t.Run("OperationsSettings", func(t *testing.T) {
		c, err := LoadConfig(nil, env(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.Migrate != "auto" || c.MigrationDatabaseURL != "" || c.LogLevel != slog.LevelInfo || c.DBExecMode != "auto" {
			t.Fatalf("defaults: %+v", c)
		}
		c, err = LoadConfig([]string{"--log-level", "debug"}, env("LEDGER_LOG_LEVEL", "error", "LEDGER_MIGRATE", "off",
			"LEDGER_DB_EXEC_MODE", "cache_describe", "DATABASE_URL", "postgres://a@h1,h2/db?target_session_attrs=read-write",
			"LEDGER_PROVIDER_ID", "p", "LEDGER_MIGRATION_DATABASE_URL", "postgres://owner@h1/db", "LEDGER_KEK", testKEKb64), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.Migrate != "off" || c.MigrationDatabaseURL != "postgres://owner@h1/db" || c.LogLevel != slog.LevelDebug || c.DBExecMode != "cache_describe" {
			t.Fatalf("%+v", c)
		}
		for _, lvl := range []string{"WARN", "warn", "error", "info"} {
			if _, err := LoadConfig(nil, env("LEDGER_LOG_LEVEL", lvl), io.Discard); err != nil {
				t.Errorf("LEDGER_LOG_LEVEL=%s: %v", lvl, err)
			}
		}
	})
	t.Run("Version", func(t *testing.T) {
		if _, err := LoadConfig([]string{"--version"}, env(), io.Discard); !errors.Is(err, ErrVersion) {
			t.Fatalf("--version: %v, want ErrVersion", err)
		}
	})
	t.Run("ConnectTimeoutBelowTheRequestTimeout", func(t *testing.T) {
		for _, rt := range []time.Duration{100 * time.Millisecond, time.Second, 3 * time.Second, time.Minute} {
			if ct := ConnectTimeout(rt); ct <= 0 || ct >= rt && rt > 100*time.Millisecond {
				t.Errorf("ConnectTimeout(%s) = %s", rt, ct)
			}
		}
	})
	t.Run("PublicAdminWithToken", func(t *testing.T) {
		if _, err := LoadConfig(nil, env("LEDGER_ADMIN_LISTEN", "0.0.0.0:8081", "LEDGER_ADMIN_TOKEN", "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="), io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
