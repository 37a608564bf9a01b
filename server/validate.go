package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/envelope"
)

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

// serviceRetryWindow is the longest the service may go on sending a
// callback's idempotency key: a request for payment stays unpaid, and its
// credit-account retried, for up to 30 days (docs/interface.md; an
// unclaimed payment, 10 days). LEDGER_IDEMPOTENCY_RETENTION may not be less.
const serviceRetryWindow = 30 * 24 * time.Hour

// RetentionFloor is the least LEDGER_IDEMPOTENCY_RETENTION accepted: no
// stored answer is purged while the service may still send its key, nor
// while a request that carries it is still valid.
func (c Config) RetentionFloor() time.Duration { return max(serviceRetryWindow, c.MaxTokenLifetime) }

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
			c.IdempotencyRetention, floor, serviceRetryWindow, c.MaxTokenLifetime)
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
