package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/provider/providertest"
)

type providerCLI struct {
	srv *providertest.Server
}

func newProviderCLI(t *testing.T) providerCLI {
	t.Helper()
	srv := providertest.NewServer()
	t.Cleanup(srv.Close)
	return providerCLI{srv: srv}
}

// run runs `ledgerctl provider args…` against the fake with the connection
// flags appended; it returns the exit code, stdout and stderr.
func (p providerCLI) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	id, secret := p.srv.APIKey()
	args = append(args, "--base-url", p.srv.URL, "--api-key-id", id, "--api-key-secret", secret, "--provider-id", p.srv.ProviderID(), "--output", "json")
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"provider"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// ok runs and decodes stdout's JSON object.
func (p providerCLI) ok(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errs := p.run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: stdout is not JSON: %v\n%s", args, err, out)
	}
	return m
}

func TestProviderCommands(t *testing.T) {
	t.Parallel()
	p := newProviderCLI(t)
	register := []string{"participants", "create", "--external-id", "alice", "--given-name", "Alice", "--family-name", "Doe",
		"--address-line1", "1 Main", "--city", "Springfield", "--state", "IL", "--postal-code", "62701", "--country", "US",
		"--phone", "+15555550100", "--phone", "+15555550101"}

	t.Run("Participants", func(t *testing.T) { providerParticipants(t, p, register) })
	t.Run("Tokens", func(t *testing.T) {
		m := p.ok(t, "tokens", "create", "--external-id", "alice", "--client-type", "device")
		if m["access_token"] == "" || m["expires_in"] != float64(3600) {
			t.Fatalf("%v", m)
		}
		user, pass, _ := p.srv.ParticipantLogin("local", "alice")
		if m := p.ok(t, "tokens", "create", "--login-user", user, "--login-password", pass); m["access_token"] == "" {
			t.Fatalf("login %v", m)
		}
		if code, _, _ := p.run(t, "tokens", "create"); code != 2 {
			t.Fatalf("no participant: exit %d", code)
		}
	})
	t.Run("LimitGroupsAndMembers", func(t *testing.T) { providerLimitGroupsAndMembers(t, p) })
	t.Run("Limits", func(t *testing.T) { providerLimits(t, p) })
	t.Run("ReviewsAndPayments", func(t *testing.T) { providerReviewsAndPayments(t, p) })
	t.Run("FundingSources", func(t *testing.T) {
		fs := p.ok(t, "funding-sources", "create", "alice", "--type", "card", "--source-id", "tok_1", "--display-name", "Visa", "--last4", "4242")
		id := fs["fundingSourceID"].(string)
		if m := p.ok(t, "funding-sources", "get", "alice", id); m["displayName"] != "Visa" {
			t.Fatalf("get %v", m)
		}
		if m := p.ok(t, "funding-sources", "update", "alice", id, "--last4", "1111"); m["last4"] != "1111" || m["displayName"] != "Visa" {
			t.Fatalf("update %v", m)
		}
		if code, _, _ := p.run(t, "funding-sources", "update", "alice", id); code != 2 {
			t.Fatal("empty update accepted")
		}
		if code, _, errs := p.run(t, "funding-sources", "create", "alice", "--type", "cash", "--source-id", "fs-cash", "--display-name", "Cash"); code != 1 || !strings.Contains(errs, "/fundingType") {
			t.Fatalf("validation: %d %s", code, errs)
		}
	})
	t.Run("ShortNameAndSecrets", func(t *testing.T) {
		if m := p.ok(t, "short-name", "Acme01"); m["shortName"] != "Acme01" {
			t.Fatalf("%v", m)
		}
		sec := p.ok(t, "secrets", "create", "--idempotency-key", "cli-1")
		if sec["secret"] == nil {
			t.Fatalf("plain create must show the secret once: %v", sec)
		}
		if code, _, errs := p.run(t, "secrets", "create", "--idempotency-key", "cli-1"); code != 1 || !strings.Contains(errs, "idempotency-key-reused") {
			t.Fatalf("replay: %d %s", code, errs)
		}
		if m := p.ok(t, "secrets", "list"); len(m["signingSecrets"].([]any)) != 1 {
			t.Fatalf("list %v", m)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		for _, args := range [][]string{{"nope"}, {"participants", "get"}, {"reviews", "get", "a", "b"}, {"participants", "get", "x", "--nope"}} {
			if code, _, _ := p.run(t, args...); code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
		}
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"provider"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "missing command") {
			t.Fatalf("no args: %d %s", code, errb.String())
		}
	})
}

// providerLimits: no policy until one is set; a policy and an override are
// set, one without --json refused, and the override deleted.
func providerLimits(t *testing.T, p providerCLI) {
	if code, _, _ := p.run(t, "limits", "policy"); code != 1 {
		t.Fatalf("no policy yet: exit %d", code)
	}
	_, _ = p.srv.SetPolicy("local", providertest.Limits{DailySendCount: providertest.Count(9)})
	if m := p.ok(t, "limits", "policy"); m["dailySendCount"] != float64(9) {
		t.Fatalf("policy %v", m)
	}
	o := p.ok(t, "limits", "set", "alice", "--json", `{"weeklyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"50.00"},"expiresOn":null}`)
	if o["expiresOn"] != nil || o["versionID"] == "" {
		t.Fatalf("override %v", o)
	}
	if code, _, _ := p.run(t, "limits", "set", "alice"); code != 2 {
		t.Fatal("limits set without --json accepted")
	}
	p.ok(t, "limits", "delete", "alice")
	if _, ok, _ := p.srv.Override("local", "alice"); ok {
		t.Fatal("override not deleted")
	}
}

// providerReviewsAndPayments: reviews are listed, read and resolved once
// (a second resolution refused), rejected ones listed, and payments listed.
func providerReviewsAndPayments(t *testing.T, p providerCLI) {
	po, _ := p.srv.SeedPayout("local", providertest.Payout{SenderExternalID: "alice", Amount: providertest.USD("20.00")})
	rv, _ := p.srv.SeedReview("local", po.PayoutID, "velocity")
	if m := p.ok(t, "reviews", "list", "--all"); len(m["reviews"].([]any)) != 1 {
		t.Fatalf("reviews %v", m)
	}
	if m := p.ok(t, "reviews", "get", rv.ReviewID); m["reviewID"] != rv.ReviewID {
		t.Fatalf("get %v", m)
	}
	if m := p.ok(t, "reviews", "resolve", rv.ReviewID, "--resolution", "rejected", "--notes", "fraud"); m["status"] != "rejected" {
		t.Fatalf("resolve %v", m)
	}
	if code, _, _ := p.run(t, "reviews", "resolve", rv.ReviewID, "--resolution", "maybe"); code != 2 {
		t.Fatal("bad resolution accepted")
	}
	if code, _, errs := p.run(t, "reviews", "resolve", rv.ReviewID, "--resolution", "approved"); code != 1 || !strings.Contains(errs, "409") {
		t.Fatalf("re-resolve: %d %s", code, errs)
	}
	if m := p.ok(t, "reviews", "list", "--status", "rejected"); len(m["reviews"].([]any)) != 1 {
		t.Fatalf("rejected %v", m)
	}
	if m := p.ok(t, "payments", "list", "alice"); len(m["payments"].([]any)) != 1 {
		t.Fatalf("payments %v", m)
	}
}

// providerLimitGroupsAndMembers: a limit group is created and updated (the
// tri-state body forwarded exactly; a stale version and an unknown field
// refused), groups are listed whole and by page (a bad limit refused), and
// members are added and removed.
func providerLimitGroupsAndMembers(t *testing.T, p providerCLI) {
	g := p.ok(t, "limit-groups", "create", "--name", "gold", "--json", `{"dailyAmount":{"currency":{"code":"USD","decimalPlaces":2},"value":"100"}}`)
	gid, ver := g["groupID"].(string), g["versionID"].(string)
	if g["dailyAmount"].(map[string]any)["value"] != "100.00" {
		t.Fatalf("%v", g)
	}
	up := p.ok(t, "limit-groups", "update", gid, "--json", `{"dailyAmount":null,"dailySendCount":4,"expectedVersionID":"`+ver+`"}`)
	if _, ok := up["dailyAmount"]; ok || up["dailySendCount"] != float64(4) {
		t.Fatalf("update %v", up)
	}
	req, _ := p.srv.LastRequest("PATCH /providers/{providerID}/limit-groups/{groupID}")
	if string(req.Body) != `{"dailyAmount":null,"dailySendCount":4,"expectedVersionID":"`+ver+`"}` {
		t.Fatalf("tri-state body not forwarded exactly: %s", req.Body)
	}
	if code, _, errs := p.run(t, "limit-groups", "update", gid, "--json", `{"name":"x","expectedVersionID":"`+ver+`"}`); code != 1 || !strings.Contains(errs, "version_conflict") {
		t.Fatalf("stale: %d %s", code, errs)
	}
	if code, _, errs := p.run(t, "limit-groups", "update", gid, "--json", `{"colour":"red"}`); code != 2 || !strings.Contains(errs, "colour") {
		t.Fatalf("unknown field: %d %s", code, errs)
	}
	p.ok(t, "limit-groups", "create", "--name", "silver")
	if all := p.ok(t, "limit-groups", "list", "--all", "--limit", "1"); len(all["groups"].([]any)) != 2 {
		t.Fatalf("list --all %v", all)
	}
	if page := p.ok(t, "limit-groups", "list", "--limit", "1"); page["hasMore"] != true || page["nextCursor"] == nil {
		t.Fatalf("page %v", page)
	}
	if code, _, errs := p.run(t, "limit-groups", "list", "--limit", "500"); code != 1 || !strings.Contains(errs, "1 to 100") {
		t.Fatalf("bad limit: %d %s", code, errs)
	}
	if m := p.ok(t, "limit-groups", "members", "add", gid, "alice"); m["externalID"] != "alice" {
		t.Fatalf("add %v", m)
	}
	if m := p.ok(t, "limit-groups", "members", "list", gid); len(m["members"].([]any)) != 1 {
		t.Fatalf("members %v", m)
	}
	p.ok(t, "limit-groups", "members", "remove", gid, "alice")
	if m := p.ok(t, "limit-groups", "members", "list", gid, "--all"); len(m["members"].([]any)) != 0 {
		t.Fatalf("members after remove %v", m)
	}
}

// providerParticipants: a participant is registered with its phones once
// (again is refused, --ensure returns the first), then read, waited for,
// and an unknown one is missing.
func providerParticipants(t *testing.T, p providerCLI, register []string) {
	m := p.ok(t, register...)
	if m["participantID"] == "" || m["status"] != "pending" {
		t.Fatalf("%v", m)
	}
	req, _ := p.srv.LastRequest("POST /providers/{providerID}/participants")
	var body map[string]any
	_ = json.Unmarshal(req.Body, &body)
	if phones := body["phoneNumbers"].([]any); len(phones) != 2 {
		t.Fatalf("phones %v", body)
	}
	if code, _, errs := p.run(t, register...); code != 1 || !strings.Contains(errs, "already registered") {
		t.Fatalf("duplicate: %d %s", code, errs)
	}
	if again := p.ok(t, append(register, "--ensure")...); again["participantID"] != m["participantID"] {
		t.Fatalf("ensure %v", again)
	}
	if got := p.ok(t, "participants", "get", "alice"); got["participantID"] != m["participantID"] {
		t.Fatalf("get %v", got)
	}
	if got := p.ok(t, "participants", "wait", "alice", "--interval", "1ms"); got["status"] != "active" {
		t.Fatalf("wait %v", got)
	}
	if code, _, errs := p.run(t, "participants", "get", "nobody"); code != 1 || !strings.Contains(errs, "404") {
		t.Fatalf("missing: %d %s", code, errs)
	}
}

// keyringAdminStub is ledgerd's admin API as far as --install uses it.
type keyringAdminStub struct {
	mu      sync.Mutex
	secrets []string
	auth    []string
	fail    bool
}

func (f *keyringAdminStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/signing-secrets":
		_, _ = io.WriteString(w, `{"signingSecrets":[]}`)
	case r.Method == "POST" && r.URL.Path == "/v1/signing-secrets" && !f.fail:
		var body struct{ Secret string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.secrets = append(f.secrets, body.Secret)
		w.WriteHeader(201)
		_, _ = io.WriteString(w, `{"secretID":"ks_1","fingerprint":"fp"}`)
	default:
		w.WriteHeader(500)
	}
}

func TestProviderSecretsInstall(t *testing.T) {
	p := newProviderCLI(t)
	admin := &keyringAdminStub{}
	as := httptest.NewServer(admin)
	defer as.Close()
	t.Setenv("LEDGER_ADMIN_TOKEN", "tok")

	code, out, errs := p.run(t, "secrets", "create", "--install", "--admin", as.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	created, _ := p.srv.SigningSecrets("local")
	if len(created) != 1 || len(admin.secrets) != 1 || admin.secrets[0] != created[0].Secret {
		t.Fatalf("installed %v, created %+v", admin.secrets, created)
	}
	if strings.Contains(out, created[0].Secret) {
		t.Fatal("--install printed the secret without --show-secret")
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(out), &m)
	if m["keyring"].(map[string]any)["fingerprint"] != "fp" || m["signingSecret"].(map[string]any)["secretID"] != created[0].SecretID {
		t.Fatalf("output %s", out)
	}
	for _, a := range admin.auth {
		if a != "Bearer tok" {
			t.Fatalf("admin auth %q", a)
		}
	}

	if _, out, _ = p.run(t, "secrets", "create", "--install", "--show-secret", "--admin", as.URL); !strings.Contains(out, admin.secrets[1]) {
		t.Fatalf("--show-secret did not print it: %s", out)
	}

	admin.fail = true
	code, out, errs = p.run(t, "secrets", "create", "--install", "--admin", as.URL)
	created, _ = p.srv.SigningSecrets("local")
	if code != 1 || !strings.Contains(errs, "not installed") || strings.Contains(errs+out, created[2].Secret) {
		t.Fatalf("failed install: %d %q %q", code, out, errs)
	}

	t.Setenv("SERVICE_BASE_URL", "")
	var o, e bytes.Buffer
	if code := run(context.Background(), []string{"provider", "participants", "get", "x"}, &o, &e); code != 2 || !strings.Contains(e.String(), "SERVICE_BASE_URL") {
		t.Fatalf("no base URL: %d %s", code, e.String())
	}

	// An unreachable admin API stops before a secret is created.
	as.Close()
	if code, _, errs := p.run(t, "secrets", "create", "--install", "--admin", as.URL); code != 1 || !strings.Contains(errs, "no secret created") {
		t.Fatalf("unreachable admin: %d %s", code, errs)
	}
	if after, _ := p.srv.SigningSecrets("local"); len(after) != 3 {
		t.Fatalf("%d secrets after the refused install", len(after))
	}
}

// TestProviderConnection configures the client from the environment and
// from connection flags placed before the command words.
func TestProviderConnection(t *testing.T) {
	srv := providertest.NewServer()
	t.Cleanup(srv.Close)
	id, secret := srv.APIKey()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"provider"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	version := func() string {
		r, _ := srv.LastRequest("")
		return r.Header.Get("X-Service-Version")
	}

	t.Run("Environment", func(t *testing.T) {
		t.Setenv("SERVICE_BASE_URL", srv.URL)
		t.Setenv("SERVICE_API_KEY_ID", id)
		t.Setenv("SERVICE_API_KEY_SECRET", secret)
		t.Setenv("SERVICE_PROVIDER_ID", srv.ProviderID())
		t.Setenv("SERVICE_VERSION", "v2026.07.00")
		if code, _, errs := run("limit-groups", "list"); code != 0 || version() != "v2026.07.00" {
			t.Fatalf("exit %d (%s), X-Service-Version %q", code, errs, version())
		}
		// The version decides the signing-secret body: the bare secret.
		code, out, errs := run("secrets", "create", "-o", "json")
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m["secret"] == nil || version() != "v2026.07.00" {
			t.Fatalf("exit %d (%s): %s", code, errs, out)
		}
		// A flag beats the environment.
		if code, _, errs := run("limit-groups", "list", "--version", "v2026.10.00"); code != 0 || version() != "v2026.10.00" {
			t.Fatalf("exit %d (%s), X-Service-Version %q", code, errs, version())
		}
	})

	t.Run("FlagsBeforeTheCommandWords", func(t *testing.T) {
		t.Setenv("SERVICE_BASE_URL", "")
		t.Setenv("SERVICE_API_KEY_ID", "")
		t.Setenv("SERVICE_API_KEY_SECRET", "")
		t.Setenv("SERVICE_VERSION", "")
		lead := []string{"--base-url", srv.URL, "--api-key-id", id, "--api-key-secret=" + secret,
			"--provider-id", srv.ProviderID(), "--version", "v2026.07.00"}
		code, out, errs := run(append(lead, "limit-groups", "create", "--name", "lead", "-o", "json")...)
		if code != 0 || !strings.Contains(out, `"groupID"`) || version() != "v2026.07.00" {
			t.Fatalf("exit %d (%s): %s, version %q", code, errs, out, version())
		}
		if code, _, errs := run(append(lead, "limit-groups", "list", "--version", "v2026.10.00")...); code != 0 || version() != "v2026.10.00" {
			t.Fatalf("a flag after the command words should win: exit %d (%s), version %q", code, errs, version())
		}
		if code, _, errs := run("--base-url", srv.URL, "--api-key-id", id, "--api-key-secret", "wrong", "limit-groups", "list"); code != 1 || !strings.Contains(errs, "401") {
			t.Fatalf("leading credentials not used: exit %d %s", code, errs)
		}
		if code, out, errs := run("--base-url", srv.URL, "--help"); code != 0 || !strings.Contains(out, "connection flags") || errs != "" {
			t.Fatalf("help: %d %s %s", code, out, errs)
		}
		if code, _, _ := run("--base-url", srv.URL); code != 2 {
			t.Fatalf("no command: exit %d", code)
		}
		if code, _, _ := run("--nope", "limit-groups", "list"); code != 2 {
			t.Fatalf("unknown leading flag: exit %d", code)
		}
	})
}
