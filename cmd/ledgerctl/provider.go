package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/provider"
)

const providerUsage = `usage: ledgerctl provider [connection flags] <command> [flags] [args]

The service's provider API. Every command prints the API's answer as JSON.
Connection flags, before the command words or among its flags (a flag
after the command words wins): --base-url (env SERVICE_BASE_URL),
--api-key-id (SERVICE_API_KEY_ID), --api-key-secret (SERVICE_API_KEY_SECRET),
--version (SERVICE_VERSION, default v2026.10.00), --provider-id
(SERVICE_PROVIDER_ID, else LEDGER_PROVIDER_ID, else local).

commands:
  participants create --external-id ID --given-name G --family-name F --address-line1 A
                      --city C --state S --postal-code P --country C [--phone N]... [--ensure]
  participants get PARTICIPANT
  participants wait PARTICIPANT [--interval 1s] [--timeout 2m]
  tokens create --external-id ID [--client-type web|device|service]
  tokens create --login-user U --login-password P
  limit-groups list [--limit N] [--cursor C] [--all]
  limit-groups create --name N [--description D] [--json BODY]
  limit-groups update GROUP --json BODY          (absent keeps, null clears, value sets)
  limit-groups members list GROUP [--limit N] [--cursor C] [--all]
  limit-groups members add|remove GROUP PARTICIPANT
  limits policy
  limits set PARTICIPANT --json BODY             (override: absent keeps, null clears)
  limits delete PARTICIPANT
  reviews list [--status pending|approved|rejected] [--limit N] [--cursor C] [--all]
  reviews get REVIEW
  reviews resolve REVIEW --resolution approved|rejected [--notes N]
  payments list PARTICIPANT [--limit N] [--cursor C] [--all]
  funding-sources create PARTICIPANT --type card|bank_account --source-id S --display-name N [--last4 L]
  funding-sources get PARTICIPANT FUNDING_SOURCE
  funding-sources update PARTICIPANT FUNDING_SOURCE [--display-name N] [--last4 L]
  secrets list [--all]
  secrets create [--idempotency-key K] [--install [--admin URL] [--show-secret]]
  short-name NAME

PARTICIPANT is a participantID or the bank's externalID. --json BODY takes
inline JSON, @FILE, or - for stdin. secrets create --install creates a secret
at the service and adds it to ledgerd's keyring through the admin API (the
first half of a rotation); the secret is then printed only with --show-secret.
`

// runProvider runs `ledgerctl provider …`; args follow the word provider.
func runProvider(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Connection flags may come before the command words:
	// ledgerctl provider --base-url URL reviews list.
	lead := newProviderCmd("", stderr, nil)
	lead.fs.Usage = func() { fmt.Fprint(stderr, providerUsage) }
	if err := lead.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	conn := map[string]string{}
	lead.fs.Visit(func(f *flag.Flag) { conn[f.Name] = f.Value.String() })
	args = lead.fs.Args()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, providerUsage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd := args[0]
	rest := args[1:]
	// Two-word commands.
	if cmd == "limit-groups" && len(rest) > 0 && rest[0] == "members" {
		cmd, rest = "limit-groups members", rest[1:]
	}
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") && cmd != "short-name" {
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	h, ok := providerCommands[cmd]
	if !ok {
		fmt.Fprintf(stderr, "ledgerctl provider: unknown command %q\n\n%s", cmd, providerUsage)
		return 2
	}
	pc := newProviderCmd(cmd, stderr, conn)
	h.flags(pc)
	pos, err := parseInterleaved(pc.fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != h.args {
		fmt.Fprintf(stderr, "ledgerctl provider %s: want %d argument(s), got %d\n", cmd, h.args, len(pos))
		return 2
	}
	if err := pc.connect(); err != nil {
		fmt.Fprintln(stderr, "ledgerctl provider:", err)
		return 2
	}
	pc.ctx, pc.pos, pc.stdout = ctx, pos, stdout
	if err := h.run(pc); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "ledgerctl provider %s: %s\n", cmd, ue)
			return 2
		}
		return fail(stderr, err)
	}
	return 0
}

// usageError is a bad flag combination: exit 2.
type usageError string

func (e usageError) Error() string { return string(e) }

type providerCmd struct {
	fs     *flag.FlagSet
	c      *provider.Client
	ctx    context.Context
	pos    []string
	stdout io.Writer

	baseURL, keyID, keySecret, version, providerID string

	// shared optional flags, registered by the commands that use them
	limit  int
	cursor string
	all    bool
	body   string

	strs                map[string]*string
	phones              multiFlag
	ensure              bool
	interval, timeout   time.Duration
	install, showSecret bool
}

func envFirst(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// newProviderCmd returns a command with the connection flags registered.
// Their defaults are lead (the connection flags given before the command
// words), else the environment, else the built-in defaults.
func newProviderCmd(name string, stderr io.Writer, lead map[string]string) *providerCmd {
	pc := &providerCmd{fs: flag.NewFlagSet(strings.TrimSpace("ledgerctl provider "+name), flag.ContinueOnError)}
	pc.fs.SetOutput(stderr)
	def := func(flagName, fallback string, envs ...string) string {
		if v, ok := lead[flagName]; ok {
			return v
		}
		if v := envFirst(envs...); v != "" {
			return v
		}
		return fallback
	}
	pc.fs.StringVar(&pc.baseURL, "base-url", def("base-url", "", "SERVICE_BASE_URL"), "provider API base URL (env SERVICE_BASE_URL)")
	pc.fs.StringVar(&pc.keyID, "api-key-id", def("api-key-id", "", "SERVICE_API_KEY_ID"), "API key id (env SERVICE_API_KEY_ID)")
	pc.fs.StringVar(&pc.keySecret, "api-key-secret", def("api-key-secret", "", "SERVICE_API_KEY_SECRET"), "API key secret (env SERVICE_API_KEY_SECRET)")
	pc.fs.StringVar(&pc.version, "version", def("version", provider.DefaultVersion, "SERVICE_VERSION"), "X-Service-Version (env SERVICE_VERSION)")
	pc.fs.StringVar(&pc.providerID, "provider-id", def("provider-id", "local", "SERVICE_PROVIDER_ID", "LEDGER_PROVIDER_ID"),
		"provider account ID (env SERVICE_PROVIDER_ID or LEDGER_PROVIDER_ID)")
	return pc
}

func (pc *providerCmd) connect() error {
	if pc.baseURL == "" {
		return errors.New("no provider API: set SERVICE_BASE_URL or --base-url")
	}
	c, err := provider.NewClient(pc.baseURL, provider.WithProviderID(pc.providerID),
		provider.WithAPIKey(pc.keyID, pc.keySecret), provider.WithVersion(pc.version),
		provider.WithUserAgent("ledgerctl/1"))
	pc.c = c
	return err
}

func (pc *providerCmd) pageFlags() {
	pc.fs.IntVar(&pc.limit, "limit", 0, "page size, 1 to 100 (default: the server's)")
	pc.fs.StringVar(&pc.cursor, "cursor", "", "nextCursor of the previous page")
	pc.fs.BoolVar(&pc.all, "all", false, "follow every page and print all items")
}

func (pc *providerCmd) bodyFlag(help string) { pc.fs.StringVar(&pc.body, "json", "", help) }

func (pc *providerCmd) listOpts() *provider.ListOptions {
	return &provider.ListOptions{Limit: pc.limit, Cursor: pc.cursor}
}

// decodeBody reads --json (inline, @file or - for stdin) into v, strictly.
func (pc *providerCmd) decodeBody(v any) error {
	raw := pc.body
	switch {
	case raw == "-":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		raw = string(b)
	case strings.HasPrefix(raw, "@"):
		b, err := os.ReadFile(raw[1:])
		if err != nil {
			return err
		}
		raw = string(b)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return usageError("--json: " + err.Error())
	}
	return nil
}

// requireBody decodes the required --json into v.
func (pc *providerCmd) requireBody(v any) error {
	if pc.body == "" {
		return usageError("--json is required")
	}
	return pc.decodeBody(v)
}

func (pc *providerCmd) print(v any) error {
	printJSONValue(pc.stdout, v)
	return nil
}

// printPage prints one page with its cursor, or, with --all, every item.
func printPage[T any](pc *providerCmd, key string, page func(*provider.ListOptions) ([]*T, *provider.Response, error),
	all func(*provider.ListOptions) func(func(*T, error) bool)) error {
	if pc.all {
		items := []*T{}
		for it, err := range all(pc.listOpts()) {
			if err != nil {
				return err
			}
			items = append(items, it)
		}
		return pc.print(map[string]any{key: items})
	}
	items, resp, err := page(pc.listOpts())
	if err != nil {
		return err
	}
	out := map[string]any{key: items, "hasMore": resp.HasMore}
	if resp.NextCursor != "" {
		out["nextCursor"] = resp.NextCursor
	}
	return pc.print(out)
}

type providerCommand struct {
	args  int
	flags func(*providerCmd)
	run   func(*providerCmd) error
}

func noFlags(*providerCmd) {}

// Command-specific flags are kept by name on the providerCmd.
func (pc *providerCmd) strFlag(name, def, help string) {
	if pc.strs == nil {
		pc.strs = map[string]*string{}
	}
	pc.strs[name] = pc.fs.String(name, def, help)
}

func (pc *providerCmd) str(name string) string { return *pc.strs[name] }

// set reports whether the flag was given on the command line.
func (pc *providerCmd) set(name string) bool {
	found := false
	pc.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func printOne[T any](pc *providerCmd, v *T, _ *provider.Response, err error) error {
	if err != nil {
		return err
	}
	return pc.print(v)
}

var participantFields = []struct{ flag, help string }{
	{"external-id", "the bank's identifier of the user (required)"},
	{"given-name", "given name (required)"},
	{"family-name", "family name (required)"},
	{"address-line1", "address line 1 (required)"},
	{"address-line2", "address line 2"},
	{"city", "city (required)"},
	{"state", "state or province (required)"},
	{"postal-code", "postal code (required)"},
	{"country", "country (required)"},
	{"idempotency-key", "Idempotency-Key (default: a new UUID)"},
}

var providerCommands = map[string]providerCommand{
	"participants create": {0, func(pc *providerCmd) {
		for _, f := range participantFields {
			pc.strFlag(f.flag, "", f.help)
		}
		pc.fs.Var(&pc.phones, "phone", "phone number (repeatable)")
		pc.fs.BoolVar(&pc.ensure, "ensure", false, "read the participant when its externalID is already registered")
	}, func(pc *providerCmd) error {
		req := &provider.ParticipantCreateRequest{ExternalID: pc.str("external-id"), GivenName: pc.str("given-name"),
			FamilyName: pc.str("family-name"), PhoneNumbers: pc.phones, Address: provider.Address{
				AddressLine1: pc.str("address-line1"), AddressLine2: pc.str("address-line2"), City: pc.str("city"),
				StateOrProvince: pc.str("state"), PostalCode: pc.str("postal-code"), Country: pc.str("country")}}
		var opts []provider.RequestOption
		if k := pc.str("idempotency-key"); k != "" {
			opts = append(opts, provider.WithIdempotencyKey(k))
		}
		create := pc.c.Participants.Create
		if pc.ensure {
			create = pc.c.Participants.Ensure
		}
		p, resp, err := create(pc.ctx, req, opts...)
		return printOne(pc, p, resp, err)
	}},
	"participants get": {1, noFlags, func(pc *providerCmd) error {
		p, resp, err := pc.c.Participants.Get(pc.ctx, pc.pos[0])
		return printOne(pc, p, resp, err)
	}},
	"participants wait": {1, func(pc *providerCmd) {
		pc.fs.DurationVar(&pc.interval, "interval", time.Second, "poll interval")
		pc.fs.DurationVar(&pc.timeout, "timeout", 2*time.Minute, "give up after")
	}, func(pc *providerCmd) error {
		ctx, cancel := context.WithTimeout(pc.ctx, pc.timeout)
		defer cancel()
		p, err := pc.c.Participants.Await(ctx, pc.pos[0], pc.interval)
		return printOne(pc, p, nil, err)
	}},
	"tokens create": {0, func(pc *providerCmd) {
		pc.strFlag("external-id", "", "participant's externalID (API-key form)")
		pc.strFlag("client-type", "", "web, device or service (default: the server's, web)")
		pc.strFlag("login-user", "", "participant login user (login form: empty body)")
		pc.strFlag("login-password", "", "participant login password")
	}, func(pc *providerCmd) error {
		ext, user := pc.str("external-id"), pc.str("login-user")
		switch {
		case user != "" && ext == "":
			tok, resp, err := pc.c.Tokens.CreateForLogin(pc.ctx, user, pc.str("login-password"))
			return printOne(pc, tok, resp, err)
		case user == "" && ext != "":
			tok, resp, err := pc.c.Tokens.Create(pc.ctx, &provider.TokenRequest{ExternalID: ext, ClientType: pc.str("client-type")})
			return printOne(pc, tok, resp, err)
		}
		return usageError("give either --external-id or --login-user")
	}},
	"limit-groups list": {0, (*providerCmd).pageFlags, func(pc *providerCmd) error {
		return printPage(pc, "groups", func(o *provider.ListOptions) ([]*provider.LimitGroup, *provider.Response, error) {
			return pc.c.LimitGroups.List(pc.ctx, o)
		}, func(o *provider.ListOptions) func(func(*provider.LimitGroup, error) bool) {
			return pc.c.LimitGroups.ListIter(pc.ctx, o)
		})
	}},
	"limit-groups create": {0, func(pc *providerCmd) {
		pc.strFlag("name", "", "group name")
		pc.strFlag("description", "", "group description")
		pc.bodyFlag("request body: {name, description, perTransactionAmount, dailyAmount, weeklyAmount, monthlyAmount, dailySendCount}")
	}, func(pc *providerCmd) error {
		req := &provider.LimitGroupCreateRequest{}
		if pc.body != "" {
			if err := pc.decodeBody(req); err != nil {
				return err
			}
		}
		if pc.set("name") {
			req.Name = pc.str("name")
		}
		if pc.set("description") {
			req.Description = pc.str("description")
		}
		if req.Name == "" {
			return usageError("--name or a name in --json is required")
		}
		g, resp, err := pc.c.LimitGroups.Create(pc.ctx, req)
		return printOne(pc, g, resp, err)
	}},
	"limit-groups update": {1, func(pc *providerCmd) {
		pc.bodyFlag("PATCH body, e.g. {\"dailyAmount\":null,\"expectedVersionID\":\"…\"} (required)")
	}, func(pc *providerCmd) error {
		req := &provider.LimitGroupUpdate{}
		if err := pc.requireBody(req); err != nil {
			return err
		}
		g, resp, err := pc.c.LimitGroups.Update(pc.ctx, pc.pos[0], req)
		return printOne(pc, g, resp, err)
	}},
	"limit-groups members list": {1, (*providerCmd).pageFlags, func(pc *providerCmd) error {
		gid := pc.pos[0]
		return printPage(pc, "members", func(o *provider.ListOptions) ([]*provider.Member, *provider.Response, error) {
			return pc.c.LimitGroups.ListMembers(pc.ctx, gid, o)
		}, func(o *provider.ListOptions) func(func(*provider.Member, error) bool) {
			return pc.c.LimitGroups.ListMembersIter(pc.ctx, gid, o)
		})
	}},
	"limit-groups members add": {2, noFlags, func(pc *providerCmd) error {
		m, resp, err := pc.c.LimitGroups.AddMember(pc.ctx, pc.pos[0], pc.pos[1])
		return printOne(pc, m, resp, err)
	}},
	"limit-groups members remove": {2, noFlags, func(pc *providerCmd) error {
		if _, err := pc.c.LimitGroups.RemoveMember(pc.ctx, pc.pos[0], pc.pos[1]); err != nil {
			return err
		}
		return pc.print(map[string]any{"removed": true, "groupID": pc.pos[0], "participant": pc.pos[1]})
	}},
	"limits policy": {0, noFlags, func(pc *providerCmd) error {
		p, resp, err := pc.c.Limits.GetPolicy(pc.ctx)
		return printOne(pc, p, resp, err)
	}},
	"limits set": {1, func(pc *providerCmd) {
		pc.bodyFlag("PUT body, e.g. {\"dailyAmount\":{…},\"expiresOn\":null} (required)")
	}, func(pc *providerCmd) error {
		req := &provider.OverrideUpdate{}
		if err := pc.requireBody(req); err != nil {
			return err
		}
		o, resp, err := pc.c.Limits.PutOverride(pc.ctx, pc.pos[0], req)
		return printOne(pc, o, resp, err)
	}},
	"limits delete": {1, noFlags, func(pc *providerCmd) error {
		if _, err := pc.c.Limits.DeleteOverride(pc.ctx, pc.pos[0]); err != nil {
			return err
		}
		return pc.print(map[string]any{"deleted": true, "participant": pc.pos[0]})
	}},
	"reviews list": {0, func(pc *providerCmd) {
		pc.pageFlags()
		pc.strFlag("status", "", "pending (the server's default), approved or rejected")
	}, func(pc *providerCmd) error {
		status := pc.str("status")
		return printPage(pc, "reviews", func(o *provider.ListOptions) ([]*provider.Review, *provider.Response, error) {
			return pc.c.Reviews.List(pc.ctx, &provider.ReviewListOptions{Status: status, ListOptions: *o})
		}, func(o *provider.ListOptions) func(func(*provider.Review, error) bool) {
			return pc.c.Reviews.ListIter(pc.ctx, &provider.ReviewListOptions{Status: status, ListOptions: *o})
		})
	}},
	"reviews get": {1, noFlags, func(pc *providerCmd) error {
		r, resp, err := pc.c.Reviews.Get(pc.ctx, pc.pos[0])
		return printOne(pc, r, resp, err)
	}},
	"reviews resolve": {1, func(pc *providerCmd) {
		pc.strFlag("resolution", "", "approved or rejected (required)")
		pc.strFlag("notes", "", "reviewer notes")
	}, func(pc *providerCmd) error {
		res := pc.str("resolution")
		if res != provider.ReviewApproved && res != provider.ReviewRejected {
			return usageError("--resolution must be approved or rejected")
		}
		r, resp, err := pc.c.Reviews.Resolve(pc.ctx, pc.pos[0], &provider.ReviewResolution{Resolution: res, Notes: pc.str("notes")})
		return printOne(pc, r, resp, err)
	}},
	"payments list": {1, (*providerCmd).pageFlags, func(pc *providerCmd) error {
		who := pc.pos[0]
		return printPage(pc, "payments", func(o *provider.ListOptions) ([]*provider.Payment, *provider.Response, error) {
			return pc.c.Payments.List(pc.ctx, who, o)
		}, func(o *provider.ListOptions) func(func(*provider.Payment, error) bool) {
			return pc.c.Payments.ListIter(pc.ctx, who, o)
		})
	}},
	"funding-sources create": {1, func(pc *providerCmd) {
		pc.strFlag("type", "", "card or bank_account (required)")
		pc.strFlag("source-id", "", "the bank's providerSourceID (required)")
		pc.strFlag("display-name", "", "display name (required)")
		pc.strFlag("last4", "", "last four digits")
	}, func(pc *providerCmd) error {
		fs, resp, err := pc.c.FundingSources.Create(pc.ctx, pc.pos[0], &provider.FundingSourceCreateRequest{
			ProviderSourceID: pc.str("source-id"), DisplayName: pc.str("display-name"), FundingType: pc.str("type"), Last4: pc.str("last4")})
		return printOne(pc, fs, resp, err)
	}},
	"funding-sources get": {2, noFlags, func(pc *providerCmd) error {
		fs, resp, err := pc.c.FundingSources.Get(pc.ctx, pc.pos[0], pc.pos[1])
		return printOne(pc, fs, resp, err)
	}},
	"funding-sources update": {2, func(pc *providerCmd) {
		pc.strFlag("display-name", "", "new display name")
		pc.strFlag("last4", "", "new last four digits")
	}, func(pc *providerCmd) error {
		up := &provider.FundingSourceUpdate{}
		if pc.set("display-name") {
			up.DisplayName = pc.strs["display-name"]
		}
		if pc.set("last4") {
			up.Last4 = pc.strs["last4"]
		}
		if up.DisplayName == nil && up.Last4 == nil {
			return usageError("give --display-name or --last4")
		}
		fs, resp, err := pc.c.FundingSources.Update(pc.ctx, pc.pos[0], pc.pos[1], up)
		return printOne(pc, fs, resp, err)
	}},
	"secrets list": {0, (*providerCmd).pageFlags, func(pc *providerCmd) error {
		return printPage(pc, "signingSecrets", func(o *provider.ListOptions) ([]*provider.SigningSecret, *provider.Response, error) {
			return pc.c.SigningSecrets.List(pc.ctx, o)
		}, func(o *provider.ListOptions) func(func(*provider.SigningSecret, error) bool) {
			return pc.c.SigningSecrets.ListIter(pc.ctx, o)
		})
	}},
	"secrets create": {0, func(pc *providerCmd) {
		def := os.Getenv("LEDGER_ADMIN_URL")
		if def == "" {
			def = "http://127.0.0.1:8081"
		}
		pc.strFlag("idempotency-key", "", "X-Idempotency-Key (default: a new UUID)")
		pc.strFlag("admin", def, "admin API base URL for --install (env LEDGER_ADMIN_URL)")
		pc.fs.BoolVar(&pc.install, "install", false, "add the new secret to ledgerd's keyring through the admin API")
		pc.fs.BoolVar(&pc.showSecret, "show-secret", false, "with --install, print the secret too")
	}, runSecretsCreate},
	"short-name": {1, noFlags, func(pc *providerCmd) error {
		rec, resp, err := pc.c.Provider.Update(pc.ctx, &provider.ProviderUpdateRequest{ShortName: pc.pos[0]})
		return printOne(pc, rec, resp, err)
	}},
}

// runSecretsCreate creates a signing secret and, with --install, adds it to
// the keyring: the first half of a rotation (then wait for the keyring to
// reload, and have the old secret revoked at the service).
func runSecretsCreate(pc *providerCmd) error {
	var opts []provider.RequestOption
	if k := pc.str("idempotency-key"); k != "" {
		opts = append(opts, provider.WithIdempotencyKey(k))
	}
	if !pc.install {
		sec, _, err := pc.c.SigningSecrets.Create(pc.ctx, opts...)
		if err != nil {
			return err
		}
		return pc.print(sec)
	}
	admin := &adminFlags{admin: pc.str("admin")}
	// Check the admin API answers before creating a secret that could not
	// be installed: the service returns its plaintext only once.
	if _, err := admin.call(pc.ctx, "GET", "/v1/signing-secrets", nil, nil); err != nil {
		return fmt.Errorf("admin API not usable, no secret created: %w", err)
	}
	sec, resp, err := pc.c.SigningSecrets.Create(pc.ctx, opts...)
	if err != nil {
		return err
	}
	var installed struct {
		SecretID    string `json:"secretID"`
		Fingerprint string `json:"fingerprint"`
	}
	if _, err := admin.call(pc.ctx, "POST", "/v1/signing-secrets", map[string]string{"secret": sec.Secret}, &installed); err != nil {
		return fmt.Errorf("signing secret %s was created at the service (X-Idempotency-Key %s) but not installed: %w; "+
			"its value is not shown and cannot be fetched again: run this command again for a new secret, "+
			"and have %s revoked through the service", sec.SecretID, resp.IdempotencyKey, err, sec.SecretID)
	}
	out := map[string]any{
		"signingSecret":  map[string]any{"secretID": sec.SecretID, "createdOn": sec.CreatedOn, "revokedOn": sec.RevokedOn},
		"keyring":        installed,
		"idempotencyKey": resp.IdempotencyKey,
	}
	if pc.showSecret {
		out["secret"] = sec.Secret
	}
	return pc.print(out)
}
