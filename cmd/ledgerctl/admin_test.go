package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/admin/admintest"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

type adminCLI struct {
	url string
	db  *store.DB
}

func newAdminCLI(t *testing.T) adminCLI { return newAdminCLIToken(t, "") }

// newAdminCLIToken is newAdminCLI with an admin API that requires token.
func newAdminCLIToken(t *testing.T, token string) adminCLI {
	t.Helper()
	db, _ := storetest.DB(t)
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	secrets, err := keyring.NewVault(db, kek, keyring.VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := adminCLI{db: db}
	srv := httptest.NewServer(admintest.Handler(t, admin.New(admin.Config{DB: db, Secrets: secrets, Token: token})))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// run runs `ledgerctl args… --admin URL` and returns exit code, stdout, stderr.
func (c adminCLI) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append(args, "--admin", c.url), &out, &errb)
	return code, out.String(), errb.String()
}

func (c adminCLI) json(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errs := c.run(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: not JSON: %s", args, out)
	}
	return m
}

func TestAdminCommands(t *testing.T) {
	t.Parallel()
	c := newAdminCLI(t)

	t.Run("AccountsAdjustInstruments", func(t *testing.T) { adminAccountsAdjustInstruments(t, c) })

	t.Run("FlagsNamedLikeTheAPIFields", func(t *testing.T) {
		if m := c.json(t, "accounts", "create", "--account-id", "cli-3", "--owner-external-id", "carol", "--currency", "USD"); m["ownerExternalID"] != "carol" {
			t.Fatalf("create: %v", m)
		}
		if m := c.json(t, "adjust", "--account-id", "cli-3", "--amount", "12.00", "--idempotency-key", "z"); m["balance"] != "12.00" {
			t.Fatalf("adjust by flags: %v", m)
		}
		if code, _, errs := c.run(t, "adjust", "--account-id", "cli-3", "--amount", "-0.00", "--idempotency-key", "z0"); code != 1 || !strings.Contains(errs, "/amount") {
			t.Fatalf("zero amount: exit %d %q", code, errs)
		}
	})

	t.Run("FlagsBeforeTheCommandWord", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"--admin", c.url, "--json", "accounts", "get", "cli-1"}, &out, &errb)
		if code != 0 || !strings.Contains(out.String(), `"accountID": "cli-1"`) {
			t.Fatalf("%d %q %q", code, out.String(), errb.String())
		}
	})

	t.Run("ErrorsExitNonZeroWithTheProblem", func(t *testing.T) {
		code, _, errs := c.run(t, "adjust", "cli-none", "1", "--key", "k")
		if code != 1 || !strings.Contains(errs, "404") || !strings.Contains(errs, "account-not-found") {
			t.Fatalf("unknown account: %d %q", code, errs)
		}
		code, _, errs = c.run(t, "accounts", "create", "cli-2", "--owner", "bob", "--currency", "usd")
		if code != 1 || !strings.Contains(errs, "/currency") {
			t.Fatalf("bad currency: %d %q", code, errs)
		}
		if code, _, _ := c.run(t, "adjust", "cli-2"); code != 2 {
			t.Fatalf("usage error: exit %d, want 2", code)
		}
		if code, _, _ := c.run(t, "nonsense"); code != 2 {
			t.Fatalf("unknown command: exit %d, want 2", code)
		}
	})

	t.Run("Holds", func(t *testing.T) {
		storetest.Account(t, c.db, storetest.AccountOpts{AccountID: "cli-h", Owner: "hank", Funds: "10", Source: "src-cli-h"})
		var refs []string
		for _, p := range []string{"cp-1", "cp-2", "cp-3"} {
			d := storetest.Hold(t, c.db, p, "hank", "src-cli-h", "1")
			if !d.Approved() {
				t.Fatal(d)
			}
			refs = append(refs, d.Reference)
		}
		if m := c.json(t, "holds", "get", refs[0]); m["payoutID"] != "cp-1" || m["amount"] != "1.00" {
			t.Fatalf("get: %v", m)
		}
		m := c.json(t, "holds", "list", "--limit", "1", "--all")
		if hs, _ := m["holds"].([]any); len(hs) != 3 {
			t.Fatalf("list --all over pages of 1: %v", m)
		}
		code, out, _ := c.run(t, "holds", "list", "--payout", "cp-2")
		if code != 0 || !strings.Contains(out, refs[1]) || strings.Contains(out, refs[0]) {
			t.Fatalf("list --payout: %q", out)
		}
	})

	t.Run("Secrets", func(t *testing.T) { adminSecrets(t, c) })
}

// adminSecrets: a secret is generated, added from a file, listed without
// its bytes and retired, and the list shows it retired.
func adminSecrets(t *testing.T, c adminCLI) {
	gen := c.json(t, "secrets", "generate")
	if gen["secret"] == nil || gen["fingerprint"] == nil {
		t.Fatalf("generate: %v", gen)
	}
	file := t.TempDir() + "/secret"
	if err := os.WriteFile(file, []byte("jB/SB55EsWoD5X2QK8hR+jYOqXLdFItl8Cm+R5MKwV4=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	added := c.json(t, "secrets", "add", "--from-file", file)
	code, out, _ := c.run(t, "secrets", "list")
	if code != 0 || !strings.Contains(out, added["secretID"].(string)) || strings.Contains(out, "jB/SB55E") {
		t.Fatalf("list: %q", out)
	}
	if code, out, errs := c.run(t, "secrets", "retire", added["secretID"].(string)); code != 0 || !strings.Contains(out, "retired") {
		t.Fatalf("retire: %d %q %q", code, out, errs)
	}
	m := c.json(t, "secrets", "list")
	for _, s := range m["signingSecrets"].([]any) {
		s := s.(map[string]any)
		if s["secretID"] == added["secretID"] && s["retiredOn"] == nil {
			t.Fatalf("retired secret still active: %v", s)
		}
	}
}

// adminAccountsAdjustInstruments: an account is created, adjusted up and down
// (a negative amount is an argument), given an instrument, frozen, unfrozen,
// read and closed, with the balances the commands print.
func adminAccountsAdjustInstruments(t *testing.T, c adminCLI) {
	code, out, errs := c.run(t, "accounts", "create", "cli-1", "--owner", "alice", "--currency", "EUR")
	if code != 0 || !strings.Contains(out, "ACCOUNT") || !strings.Contains(out, "cli-1") || !strings.Contains(out, "0.00") {
		t.Fatalf("create: %d %q %q", code, out, errs)
	}
	if m := c.json(t, "adjust", "cli-1", "100.75", "--key", "dep-1", "--memo", "opening"); m["balance"] != "100.75" {
		t.Fatalf("adjust: %v", m)
	}
	// A negative amount is an argument, not a flag.
	if m := c.json(t, "adjust", "cli-1", "-0.25", "--key", "fee-1"); m["balance"] != "100.50" {
		t.Fatalf("negative adjust: %v", m)
	}
	if m := c.json(t, "instruments", "add", "--token", "card-cli", "--kind", "source", "--account", "cli-1"); m["accountID"] != "cli-1" {
		t.Fatalf("instrument: %v", m)
	}
	if m := c.json(t, "accounts", "freeze", "cli-1"); m["status"] != "frozen" {
		t.Fatalf("freeze: %v", m)
	}
	if m := c.json(t, "accounts", "unfreeze", "cli-1"); m["status"] != "open" {
		t.Fatalf("unfreeze: %v", m)
	}
	if m := c.json(t, "accounts", "get", "cli-1"); m["available"] != "100.50" || m["currency"] != "EUR" {
		t.Fatalf("get: %v", m)
	}
	if m := c.json(t, "accounts", "close", "cli-1"); m["status"] != "closed" {
		t.Fatalf("close: %v", m)
	}
}

// TestAdminErrors: every error is printed once, on one line, with what to
// do next when there is something to do.
func TestAdminErrors(t *testing.T) {
	t.Parallel()
	c := newAdminCLIToken(t, "s3cret")
	oneLine := func(t *testing.T, errs string) {
		t.Helper()
		if strings.Count(errs, "\n") != 1 || !strings.HasSuffix(errs, "\n") {
			t.Fatalf("stderr is not one line: %q", errs)
		}
	}

	t.Run("UnauthorizedSaysHowToPassTheToken", func(t *testing.T) {
		t.Parallel()
		code, _, errs := c.run(t, "accounts", "get", "a")
		oneLine(t, errs)
		if code != 1 || !strings.Contains(errs, "401 Unauthorized") || !strings.Contains(errs, "pass ledgerd's admin token with --admin-token or LEDGER_ADMIN_TOKEN") {
			t.Fatalf("exit %d %q", code, errs)
		}
		if code, _, errs := c.run(t, "accounts", "create", "tok-1", "--owner", "o", "--admin-token", "s3cret"); code != 0 {
			t.Fatalf("with --admin-token: exit %d %q", code, errs)
		}
	})

	t.Run("ConnectionRefusedAsksIfLedgerdRuns", func(t *testing.T) {
		t.Parallel()
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"--admin", gone.URL, "holds", "list"}, &out, &errb)
		oneLine(t, errb.String())
		if code != 1 || !strings.Contains(errb.String(), "connection refused; is ledgerd running? (--admin or LEDGER_ADMIN_URL)") {
			t.Fatalf("exit %d %q", code, errb.String())
		}
	})

	t.Run("AProblemIsPrintedOnce", func(t *testing.T) {
		t.Parallel()
		if code, _, errs := c.run(t, "accounts", "create", "once-1", "--owner", "o", "--admin-token", "s3cret"); code != 0 {
			t.Fatalf("create: %d %s", code, errs)
		}
		code, _, errs := c.run(t, "adjust", "once-1", "1.001", "--key", "k", "--admin-token", "s3cret")
		oneLine(t, errs)
		if code != 1 || !strings.Contains(errs, "at /amount") {
			t.Fatalf("exit %d %q", code, errs)
		}
		// The detail and the field error say the same: once.
		detail := errs[strings.Index(errs, "(invalid-request): ")+len("(invalid-request): ") : strings.Index(errs, " at /amount")]
		if detail == "" || strings.Count(errs, detail) != 1 {
			t.Fatalf("the detail %q is repeated in %q", detail, errs)
		}
	})

	t.Run("ANotFoundRouteAsksAboutTheURL", func(t *testing.T) {
		t.Parallel()
		cb := httptest.NewServer(http.NotFoundHandler()) // as if --admin were the callback listener
		t.Cleanup(cb.Close)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"accounts", "get", "a", "--admin", cb.URL}, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "is --admin the admin listener of ledgerd") {
			t.Fatalf("exit %d %q", code, errb.String())
		}
	})
}

// TestAdminTokenFromTheEnvironment: not parallel, it sets the environment.
func TestAdminTokenFromTheEnvironment(t *testing.T) {
	c := newAdminCLIToken(t, "env-s3cret")
	t.Setenv("LEDGER_ADMIN_TOKEN", "env-s3cret")
	if code, _, errs := c.run(t, "accounts", "create", "env-1", "--owner", "o"); code != 0 {
		t.Fatalf("exit %d %q", code, errs)
	}
	if code, _, errs := c.run(t, "accounts", "get", "env-1", "--admin-token", "wrong"); code != 1 || !strings.Contains(errs, "401") {
		t.Fatalf("the flag does not win over LEDGER_ADMIN_TOKEN: exit %d %q", code, errs)
	}
	t.Setenv("LEDGER_ADMIN_URL", c.url)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"accounts", "get", "env-1"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "env-1") {
		t.Fatalf("LEDGER_ADMIN_URL not used: exit %d %q", code, errb.String())
	}
}

func TestMigrate(t *testing.T) { // not parallel: it sets DATABASE_URL
	url := storetest.URL(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "--database-url", url}, &out, &errb); code != 0 || !strings.Contains(out.String(), "schema at version") {
		t.Fatalf("migrate: %d %q %q", code, out.String(), errb.String())
	}
	t.Setenv("DATABASE_URL", "")
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"migrate"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "DATABASE_URL") {
		t.Fatalf("migrate without a URL: %d %q", code, errb.String())
	}
	// pgx's error (a line per address tried) comes out as one line: the
	// host, the port, the cause, the next step.
	errb.Reset()
	code := run(context.Background(), []string{"migrate", "--database-url", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"}, &out, &errb)
	if want := "ledgerctl migrate: cannot connect to Postgres at 127.0.0.1:1: connection refused; is Postgres running there? (--database-url or DATABASE_URL)\n"; code != 1 || errb.String() != want {
		t.Fatalf("migrate to nowhere: %d %q\nwant %q", code, errb.String(), want)
	}
}
