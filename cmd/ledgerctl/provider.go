package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/provider"
)

const providerLong = `Call the service's provider API. Every command prints the API's answer as a
table of its fields (a page's items one block each), or as the API's JSON
with --output json, like the admin commands.

The connection flags may come before the command words or among a command's
flags (the last one given wins); each has an environment variable.
PARTICIPANT is a participantID or the bank's externalID. --json BODY takes
inline JSON, @FILE, or - for standard input. "secrets create --install"
creates a secret at the service and adds it to ledgerd's keyring through
the admin API (the first half of a rotation); the secret is then printed
only with --show-secret.`

// providerConn are the connection flags of every provider command.
type providerConn struct {
	baseURL, keyID, keySecret, version, providerID string
}

// providerCmd runs one provider command: the connection, the command's own
// flags, its arguments.
type providerCmd struct {
	conn   *providerConn
	fs     *pflag.FlagSet
	c      *provider.Client
	ctx    context.Context
	pos    []string
	stdout io.Writer
	output *cli.Output
	admin  *adminOpts // secrets create --install

	// shared optional flags, registered by the commands that use them
	limit  int
	cursor string
	all    bool
	body   string

	strs                map[string]*string
	phones              []string
	ensure              bool
	interval, timeout   time.Duration
	install, showSecret bool
}

// providerGroups describes the command words that hold subcommands.
var providerGroups = map[string]string{
	"participants":         "Participants: the bank's users registered at the service",
	"tokens":               "Sender tokens",
	"limit-groups":         "Limit groups",
	"limit-groups members": "Members of a limit group",
	"limits":               "The provider's limit policy and per-participant overrides",
	"reviews":              "Payout reviews",
	"payments":             "Payments",
	"funding-sources":      "Funding sources of participants",
	"secrets":              "Signing secrets at the service",
}

func providerCmdTree() *cobra.Command {
	conn := &providerConn{}
	g := cli.Group(&cobra.Command{Use: "provider", Short: "Call the service's provider API", Long: providerLong})
	pfs := g.PersistentFlags()
	pfs.StringVar(&conn.baseURL, "base-url", "", "base URL of the service's provider API")
	cli.Env(pfs, "base-url", "SERVICE_BASE_URL")
	pfs.StringVar(&conn.keyID, "api-key-id", "", "API key ID")
	cli.Env(pfs, "api-key-id", "SERVICE_API_KEY_ID")
	pfs.StringVar(&conn.keySecret, "api-key-secret", "", "API key secret")
	cli.Env(pfs, "api-key-secret", "SERVICE_API_KEY_SECRET")
	pfs.StringVar(&conn.version, "service-version", provider.DefaultVersion, "X-Service-Version to send (--version is the same flag)")
	cli.Env(pfs, "service-version", "SERVICE_VERSION")
	pfs.StringVar(&conn.providerID, "provider-id", "local", "the provider's account ID at the service")
	cli.Env(pfs, "provider-id", "SERVICE_PROVIDER_ID", "LEDGER_PROVIDER_ID")

	groups := map[string]*cobra.Command{"": g}
	var group func(path string) *cobra.Command
	group = func(path string) *cobra.Command {
		if c, ok := groups[path]; ok {
			return c
		}
		parent, name := "", path
		if i := strings.LastIndexByte(path, ' '); i >= 0 {
			parent, name = path[:i], path[i+1:]
		}
		c := cli.Group(&cobra.Command{Use: name, Short: providerGroups[path]})
		group(parent).AddCommand(c)
		groups[path] = c
		return c
	}
	for _, spec := range providerCommands {
		parent, name := "", spec.path
		if i := strings.LastIndexByte(spec.path, ' '); i >= 0 {
			parent, name = spec.path[:i], spec.path[i+1:]
		}
		group(parent).AddCommand(spec.command(conn, name))
	}
	// --version was the name of --service-version before ledgerctl had a
	// --version of its own; it still works under provider.
	g.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "version" {
			name = "service-version"
		}
		return pflag.NormalizedName(name)
	})
	return g
}

// command builds the cobra command of spec.
func (spec providerCommand) command(conn *providerConn, name string) *cobra.Command {
	use := name
	if spec.argNames != "" {
		use += " " + spec.argNames
	}
	cmd := &cobra.Command{Use: use, Short: spec.short, Args: cli.ExactArgs(spec.args)}
	pc := &providerCmd{conn: conn, fs: cmd.Flags()}
	pc.output = cli.OutputFlag(cmd.Flags(), nil)
	spec.flags(pc)
	if spec.path == "secrets create" {
		pc.admin = adminFlags(cmd, false)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := pc.connect(); err != nil {
			return err
		}
		pc.ctx, pc.pos, pc.stdout = cmd.Context(), args, cmd.OutOrStdout()
		return cli.ProviderAPI.Explain(spec.run(pc))
	}
	return cmd
}

func (pc *providerCmd) connect() error {
	if pc.conn.baseURL == "" {
		return cli.Usagef("no provider API: set --base-url or SERVICE_BASE_URL (for a local sandbox, run servicesim and use the URL it prints)")
	}
	c, err := provider.NewClient(pc.conn.baseURL, provider.WithProviderID(pc.conn.providerID),
		provider.WithAPIKey(pc.conn.keyID, pc.conn.keySecret), provider.WithVersion(pc.conn.version),
		provider.WithUserAgent("ledgerctl/1"))
	if err != nil {
		return cli.Usagef("--base-url: %v", err)
	}
	pc.c = c
	return nil
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
		return cli.Usagef("--json: %v", err)
	}
	return checkBody([]byte(raw))
}

// checkBody refuses what the decoder lets through: data after the first
// value, and a member named twice (of which the decoder keeps the last).
func checkBody(raw []byte) error {
	err := strictjson.Check(raw, strictjson.Options{})
	var se *strictjson.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Reason == strictjson.Syntax:
		// The first value decoded, so what follows it is at fault.
		return cli.Usagef("--json: data after the first JSON value")
	case se != nil && se.Reason == strictjson.DuplicateName:
		return cli.Usagef("--json: member %q is given twice", se.Pointer)
	}
	return cli.Usagef("--json: %v", err)
}

// requireBody decodes the required --json into v.
func (pc *providerCmd) requireBody(v any) error {
	if pc.body == "" {
		return cli.Usagef("--json is required")
	}
	return pc.decodeBody(v)
}

func (pc *providerCmd) print(v any) error {
	if pc.output.JSON() {
		return printJSON(pc.stdout, v)
	}
	return printTable(pc.stdout, v)
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

// providerCommand is one leaf command under provider.
type providerCommand struct {
	path     string // the command words after provider
	argNames string // for the usage line
	args     int
	short    string
	flags    func(*providerCmd)
	run      func(*providerCmd) error
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
func (pc *providerCmd) set(name string) bool { return pc.fs.Changed(name) }

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

var providerCommands = []providerCommand{
	{"participants create", "", 0, "Register a participant (a user of the bank) at the service", func(pc *providerCmd) {
		for _, f := range participantFields {
			pc.strFlag(f.flag, "", f.help)
		}
		pc.fs.StringArrayVar(&pc.phones, "phone", nil, "phone number (repeatable)")
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
	{"participants get", "PARTICIPANT", 1, "Show a participant", noFlags, func(pc *providerCmd) error {
		p, resp, err := pc.c.Participants.Get(pc.ctx, pc.pos[0])
		return printOne(pc, p, resp, err)
	}},
	{"participants wait", "PARTICIPANT", 1, "Wait until a participant's signup check is done (active or denied)", func(pc *providerCmd) {
		pc.fs.DurationVar(&pc.interval, "interval", time.Second, "poll interval")
		pc.fs.DurationVar(&pc.timeout, "timeout", 2*time.Minute, "give up after")
	}, func(pc *providerCmd) error {
		ctx, cancel := context.WithTimeout(pc.ctx, pc.timeout)
		defer cancel()
		p, err := pc.c.Participants.Await(ctx, pc.pos[0], pc.interval)
		return printOne(pc, p, nil, err)
	}},
	{"tokens create", "", 0, "Mint a sender token for a participant", func(pc *providerCmd) {
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
		return cli.Usagef("give either --external-id or --login-user")
	}},
	{"limit-groups list", "", 0, "List the limit groups", (*providerCmd).pageFlags, func(pc *providerCmd) error {
		return printPage(pc, "groups", func(o *provider.ListOptions) ([]*provider.LimitGroup, *provider.Response, error) {
			return pc.c.LimitGroups.List(pc.ctx, o)
		}, func(o *provider.ListOptions) func(func(*provider.LimitGroup, error) bool) {
			return pc.c.LimitGroups.ListIter(pc.ctx, o)
		})
	}},
	{"limit-groups create", "", 0, "Create a limit group", func(pc *providerCmd) {
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
			return cli.Usagef("--name or a name in --json is required")
		}
		g, resp, err := pc.c.LimitGroups.Create(pc.ctx, req)
		return printOne(pc, g, resp, err)
	}},
	{"limit-groups update", "GROUP", 1, "Update a limit group (--json: absent keeps, null clears, a value sets)", func(pc *providerCmd) {
		pc.bodyFlag("PATCH body, e.g. {\"dailyAmount\":null,\"expectedVersionID\":\"…\"} (required)")
	}, func(pc *providerCmd) error {
		req := &provider.LimitGroupUpdate{}
		if err := pc.requireBody(req); err != nil {
			return err
		}
		g, resp, err := pc.c.LimitGroups.Update(pc.ctx, pc.pos[0], req)
		return printOne(pc, g, resp, err)
	}},
	{"limit-groups members list", "GROUP", 1, "List the members of a limit group", (*providerCmd).pageFlags, func(pc *providerCmd) error {
		gid := pc.pos[0]
		return printPage(pc, "members", func(o *provider.ListOptions) ([]*provider.Member, *provider.Response, error) {
			return pc.c.LimitGroups.ListMembers(pc.ctx, gid, o)
		}, func(o *provider.ListOptions) func(func(*provider.Member, error) bool) {
			return pc.c.LimitGroups.ListMembersIter(pc.ctx, gid, o)
		})
	}},
	{"limit-groups members add", "GROUP PARTICIPANT", 2, "Add a participant to a limit group", noFlags, func(pc *providerCmd) error {
		m, resp, err := pc.c.LimitGroups.AddMember(pc.ctx, pc.pos[0], pc.pos[1])
		return printOne(pc, m, resp, err)
	}},
	{"limit-groups members remove", "GROUP PARTICIPANT", 2, "Remove a participant from a limit group", noFlags, func(pc *providerCmd) error {
		if _, err := pc.c.LimitGroups.RemoveMember(pc.ctx, pc.pos[0], pc.pos[1]); err != nil {
			return err
		}
		return pc.print(map[string]any{"removed": true, "groupID": pc.pos[0], "participant": pc.pos[1]})
	}},
	{"limits policy", "", 0, "Show the provider's limit policy", noFlags, func(pc *providerCmd) error {
		p, resp, err := pc.c.Limits.GetPolicy(pc.ctx)
		return printOne(pc, p, resp, err)
	}},
	{"limits set", "PARTICIPANT", 1, "Set a participant's limit override (--json: absent keeps, null clears)", func(pc *providerCmd) {
		pc.bodyFlag("PUT body, e.g. {\"dailyAmount\":{…},\"expiresOn\":null} (required)")
	}, func(pc *providerCmd) error {
		req := &provider.OverrideUpdate{}
		if err := pc.requireBody(req); err != nil {
			return err
		}
		o, resp, err := pc.c.Limits.PutOverride(pc.ctx, pc.pos[0], req)
		return printOne(pc, o, resp, err)
	}},
	{"limits delete", "PARTICIPANT", 1, "Delete a participant's limit override", noFlags, func(pc *providerCmd) error {
		if _, err := pc.c.Limits.DeleteOverride(pc.ctx, pc.pos[0]); err != nil {
			return err
		}
		return pc.print(map[string]any{"deleted": true, "participant": pc.pos[0]})
	}},
	{"reviews list", "", 0, "List payout reviews", func(pc *providerCmd) {
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
	{"reviews get", "REVIEW", 1, "Show a review", noFlags, func(pc *providerCmd) error {
		r, resp, err := pc.c.Reviews.Get(pc.ctx, pc.pos[0])
		return printOne(pc, r, resp, err)
	}},
	{"reviews resolve", "REVIEW", 1, "Approve or reject a review", func(pc *providerCmd) {
		pc.strFlag("resolution", "", "approved or rejected (required)")
		pc.strFlag("notes", "", "reviewer notes")
	}, func(pc *providerCmd) error {
		res := pc.str("resolution")
		if res != provider.ReviewApproved && res != provider.ReviewRejected {
			return cli.Usagef("--resolution must be approved or rejected")
		}
		r, resp, err := pc.c.Reviews.Resolve(pc.ctx, pc.pos[0], &provider.ReviewResolution{Resolution: res, Notes: pc.str("notes")})
		return printOne(pc, r, resp, err)
	}},
	{"payments list", "PARTICIPANT", 1, "List a participant's payments", (*providerCmd).pageFlags, func(pc *providerCmd) error {
		who := pc.pos[0]
		return printPage(pc, "payments", func(o *provider.ListOptions) ([]*provider.Payment, *provider.Response, error) {
			return pc.c.Payments.List(pc.ctx, who, o)
		}, func(o *provider.ListOptions) func(func(*provider.Payment, error) bool) {
			return pc.c.Payments.ListIter(pc.ctx, who, o)
		})
	}},
	{"funding-sources create", "PARTICIPANT", 1, "Register a funding source of a participant", func(pc *providerCmd) {
		pc.strFlag("type", "", "card or bank_account (required)")
		pc.strFlag("source-id", "", "the bank's providerSourceID (required)")
		pc.strFlag("display-name", "", "display name (required)")
		pc.strFlag("last4", "", "last four digits")
	}, func(pc *providerCmd) error {
		fs, resp, err := pc.c.FundingSources.Create(pc.ctx, pc.pos[0], &provider.FundingSourceCreateRequest{
			ProviderSourceID: pc.str("source-id"), DisplayName: pc.str("display-name"), FundingType: pc.str("type"), Last4: pc.str("last4")})
		return printOne(pc, fs, resp, err)
	}},
	{"funding-sources get", "PARTICIPANT FUNDING_SOURCE", 2, "Show a funding source", noFlags, func(pc *providerCmd) error {
		fs, resp, err := pc.c.FundingSources.Get(pc.ctx, pc.pos[0], pc.pos[1])
		return printOne(pc, fs, resp, err)
	}},
	{"funding-sources update", "PARTICIPANT FUNDING_SOURCE", 2, "Change a funding source's display name or last four digits", func(pc *providerCmd) {
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
			return cli.Usagef("give --display-name or --last4")
		}
		fs, resp, err := pc.c.FundingSources.Update(pc.ctx, pc.pos[0], pc.pos[1], up)
		return printOne(pc, fs, resp, err)
	}},
	{"secrets list", "", 0, "List the signing secrets at the service", (*providerCmd).pageFlags, func(pc *providerCmd) error {
		return printPage(pc, "signingSecrets", func(o *provider.ListOptions) ([]*provider.SigningSecret, *provider.Response, error) {
			return pc.c.SigningSecrets.List(pc.ctx, o)
		}, func(o *provider.ListOptions) func(func(*provider.SigningSecret, error) bool) {
			return pc.c.SigningSecrets.ListIter(pc.ctx, o)
		})
	}},
	{"secrets create", "", 0, "Create a signing secret at the service (--install: also add it to ledgerd's keyring)", func(pc *providerCmd) {
		pc.strFlag("idempotency-key", "", "X-Idempotency-Key (default: a new UUID)")
		pc.fs.BoolVar(&pc.install, "install", false, "add the new secret to ledgerd's keyring through the admin API (--admin, --admin-token)")
		pc.fs.BoolVar(&pc.showSecret, "show-secret", false, "with --install, print the secret too")
	}, runSecretsCreate},
	{"short-name", "NAME", 1, "Set the provider's short name", noFlags, func(pc *providerCmd) error {
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
	admin, ctx, cancel, err := pc.admin.client(pc.ctx)
	if err != nil {
		return err
	}
	defer cancel()
	// Check the admin API answers before creating a secret that could not
	// be installed: the service returns its plaintext only once.
	if _, _, err := admin.SigningSecrets.List(ctx); err != nil {
		return fmt.Errorf("admin API not usable, no secret created: %w", cli.AdminAPI.Explain(err))
	}
	sec, resp, err := pc.c.SigningSecrets.Create(ctx, opts...)
	if err != nil {
		return err
	}
	installed, _, err := admin.SigningSecrets.Create(ctx, &adminapi.SigningSecretRequest{Secret: sec.Secret})
	if err != nil {
		return fmt.Errorf("signing secret %s was created at the service (X-Idempotency-Key %s) but not installed: %w; "+
			"its value is not shown and cannot be fetched again: run this command again for a new secret, "+
			"and have %s revoked through the service", sec.SecretID, resp.IdempotencyKey, cli.AdminAPI.Explain(err), sec.SecretID)
	}
	out := map[string]any{
		"signingSecret":  map[string]any{"secretID": sec.SecretID, "createdOn": sec.CreatedOn, "revokedOn": sec.RevokedOn},
		"keyring":        map[string]string{"secretID": installed.SecretID, "fingerprint": installed.Fingerprint},
		"idempotencyKey": resp.IdempotencyKey,
	}
	if pc.showSecret {
		out["secret"] = sec.Secret
	}
	return pc.print(out)
}
