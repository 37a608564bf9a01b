package deploy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"

	"github.com/provider-ledger/adapter/server"
	"github.com/provider-ledger/adapter/store/storetest"
)

// stage is one stage of the Dockerfile: its FROM line and instructions,
// continuation lines joined, comments dropped.
type stage struct {
	name, from string
	instr      []string
}

// dockerfile returns the Dockerfile's parser directive (# syntax=…) and
// stages.
func dockerfile(t *testing.T) (syntax string, stages []stage) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(read(t, "../Dockerfile")))
	cont := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if s, ok := strings.CutPrefix(line, "# syntax="); ok && stages == nil {
			syntax = s
		}
		if strings.HasPrefix(line, "#") || line == "" && cont == "" {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cont += l + " "
			continue
		}
		in := cont + line
		cont = ""
		if f := strings.Fields(in); strings.EqualFold(f[0], "FROM") {
			st := stage{from: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("instruction before FROM: %q", in)
		}
		stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, in)
	}
	return syntax, stages
}

// service is a compose service, as a generic map (merge keys applied).
type service map[string]any

func composeServices(t *testing.T) map[string]service {
	t.Helper()
	var f struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "compose.yaml")), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Services) == 0 {
		t.Fatal("compose.yaml has no services")
	}
	return f.Services
}

// pinned is an image reference with its tag and digest.
var pinned = regexp.MustCompile(`^[a-z0-9][a-z0-9./_-]*:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// TestImagesArePinnedByDigest: every image the Dockerfile and compose.yaml
// pull (the Dockerfile's syntax too) is name:tag@sha256:digest, so that a
// build or a start gets the bytes reviewed, and the tag says which they are.
func TestImagesArePinnedByDigest(t *testing.T) {
	t.Parallel()
	syntax, stages := dockerfile(t)
	refs := map[string]string{"the Dockerfile's syntax": syntax}
	names := map[string]bool{}
	for _, st := range stages {
		if !names[st.from] { // FROM an earlier stage is no image
			refs["FROM of stage "+st.name] = st.from
		}
		names[st.name] = true
	}
	for name, s := range composeServices(t) {
		if _, built := s["build"]; !built {
			refs["compose service "+name] = fmt.Sprint(s["image"])
		}
	}
	for where, ref := range refs {
		if !pinned.MatchString(ref) {
			t.Errorf("%s: %q is not name:tag@sha256:<digest>", where, ref)
		}
	}
}

// TestDockerfile: the build stamps the release and the revision, keeps the
// module and build caches between builds, and puts ledgerd with ledgerctl
// (for the migration job) in the production image, the other tools in an
// image of their own, every binary in one of them; the production image
// checks its health with ledgerd healthcheck.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	_, stages := dockerfile(t)
	byName := map[string]stage{}
	for _, st := range stages {
		byName[st.name] = st
	}
	build, prod, tools := byName["build"], stages[len(stages)-1], byName["tools"]
	if prod.name != "ledgerd" {
		t.Fatalf("the last stage (the default target) is %q, want ledgerd", prod.name)
	}
	run := strings.Join(build.instr, "\n")
	for _, want := range []string{
		"--mount=type=cache,target=/go/pkg/mod go mod download",
		"--mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build",
		"-X github.com/provider-ledger/adapter/internal/buildinfo.Revision=${REVISION}",
		"-X github.com/provider-ledger/adapter/internal/buildinfo.Version=${VERSION}",
		"ARG VERSION", "ARG REVISION",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("the build stage lacks %q", want)
		}
	}
	copied := func(st stage) []string {
		var bins []string
		for _, in := range st.instr {
			if f := strings.Fields(in); f[0] == "COPY" && slices.Contains(f, "--from=build") {
				for _, src := range f[1 : len(f)-1] {
					if b, ok := strings.CutPrefix(src, "/out/"); ok && b != "data" {
						bins = append(bins, b)
					}
				}
			}
		}
		slices.Sort(bins)
		return bins
	}
	if got := copied(prod); !slices.Equal(got, []string{"ledgerctl", "ledgerd"}) {
		t.Errorf("the production image holds %v, want ledgerd and ledgerctl", got)
	}
	if got := copied(tools); !slices.Equal(got, []string{"ledgerctl", "loadtest", "servicesim"}) {
		t.Errorf("the tools image holds %v, want ledgerctl, loadtest and servicesim", got)
	}
	cmds, err := os.ReadDir("../cmd")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if !slices.Contains(copied(prod), c.Name()) && !slices.Contains(copied(tools), c.Name()) {
			t.Errorf("cmd/%s is in no image", c.Name())
		}
	}
	if !slices.ContainsFunc(prod.instr, func(in string) bool {
		return strings.HasPrefix(in, "HEALTHCHECK ") && strings.HasSuffix(in, `CMD ["/usr/local/bin/ledgerd", "healthcheck"]`)
	}) {
		t.Error(`the production image has no HEALTHCHECK … CMD ["/usr/local/bin/ledgerd", "healthcheck"]`)
	}
}

// TestComposeHardening: every container runs with a read-only root, no
// capabilities, no privilege escalation and CPU and memory limits.
func TestComposeHardening(t *testing.T) {
	t.Parallel()
	for name, s := range composeServices(t) {
		if s["read_only"] != true {
			t.Errorf("service %s: read_only is %v, want true", name, s["read_only"])
		}
		if fmt.Sprint(s["cap_drop"]) != "[ALL]" {
			t.Errorf("service %s: cap_drop is %v, want [ALL]", name, s["cap_drop"])
		}
		if opts, _ := s["security_opt"].([]any); !slices.Contains(opts, any("no-new-privileges:true")) {
			t.Errorf("service %s: security_opt %v lacks no-new-privileges:true", name, s["security_opt"])
		}
		limits := dig(s, "deploy", "resources", "limits")
		if limits["cpus"] == nil || limits["memory"] == nil {
			t.Errorf("service %s: deploy.resources.limits %v lacks cpus or memory", name, limits)
		}
	}
}

// dig returns the map at path in m (nil when absent).
func dig(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		// yaml.v3 decodes a mapping nested in a service as a service.
		switch next := m[k].(type) {
		case service:
			m = next
		case map[string]any:
			m = next
		default:
			return nil
		}
	}
	return m
}

// TestComposeRunsLeastPrivilege: a one-shot service migrates as the
// schema's owner; ledgerd starts once it has succeeded, as the runtime role,
// without migrating; the database's first start creates both roles and the
// runtime role's rights; ledgerd's health is ledgerd healthcheck; it is
// given longer than its drain to stop.
func TestComposeRunsLeastPrivilege(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svcs := composeServices(t)
	env := environment(t, b.compose.Services["ledgerd"].Environment)
	if env["LEDGER_MIGRATE"] != "off" {
		t.Errorf("ledgerd's LEDGER_MIGRATE is %q, want off", env["LEDGER_MIGRATE"])
	}
	if c := dig(svcs["ledgerd"], "depends_on", "migrate")["condition"]; c != "service_completed_successfully" {
		t.Errorf("ledgerd depends on migrate with condition %v, want service_completed_successfully", c)
	}
	// The append-only tables exist only after migrate: docs/runtime-role.sql
	// again, as the owner, revokes the runtime role's rights to change them.
	if c := dig(svcs["ledgerd"], "depends_on", "runtime-role")["condition"]; c != "service_completed_successfully" {
		t.Errorf("ledgerd depends on runtime-role with condition %v, want service_completed_successfully", c)
	}
	if c := dig(svcs["runtime-role"], "depends_on", "migrate")["condition"]; c != "service_completed_successfully" {
		t.Errorf("runtime-role depends on migrate with condition %v, want service_completed_successfully", c)
	}
	rr := fmt.Sprint(svcs["runtime-role"]["entrypoint"], svcs["runtime-role"]["volumes"])
	for _, want := range []string{"/etc/ledger/runtime-role.sh postgres://ledger_owner@", "../docs/runtime-role.sql:/etc/ledger/runtime-role.sql:ro"} {
		if !strings.Contains(rr, want) {
			t.Errorf("the runtime-role service (%s) lacks %q", rr, want)
		}
	}
	m := svcs["migrate"]
	if fmt.Sprint(m["entrypoint"]) != "[/usr/local/bin/ledgerctl migrate]" || m["restart"] != "no" {
		t.Errorf("migrate runs %v (restart %v), want ledgerctl migrate once", m["entrypoint"], m["restart"])
	}
	owner := userOf(t, environment(t, b.compose.Services["migrate"].Environment)["LEDGER_MIGRATION_DATABASE_URL"])
	runtime := userOf(t, env["DATABASE_URL"])
	init := read(t, "postgres/init-roles.sh")
	for _, want := range []string{"CREATE ROLE " + owner + " LOGIN", "CREATE ROLE " + runtime + " LOGIN",
		"CREATE DATABASE ledger OWNER " + owner, "SET ROLE " + owner, "-f /etc/ledger/runtime-role.sql"} {
		if !strings.Contains(init, want) {
			t.Errorf("postgres/init-roles.sh does not %q", want)
		}
	}
	roleSQL := read(t, "../docs/runtime-role.sql")
	if !strings.Contains(roleSQL, "TO "+runtime+";") {
		t.Errorf("docs/runtime-role.sql grants nothing to %s, ledgerd's user", runtime)
	}
	vols := fmt.Sprint(svcs["postgres"]["volumes"])
	for _, want := range []string{"./postgres/init-roles.sh:/docker-entrypoint-initdb.d/init-roles.sh:ro", "../docs/runtime-role.sql:/etc/ledger/runtime-role.sql:ro"} {
		if !strings.Contains(vols, want) {
			t.Errorf("the postgres service does not mount %s", want)
		}
	}
	if hc := fmt.Sprint(dig(svcs["ledgerd"], "healthcheck")["test"]); hc != "[CMD /usr/local/bin/ledgerd healthcheck]" {
		t.Errorf("ledgerd's health check is %s, want ledgerd healthcheck", hc)
	}
	grace, err := time.ParseDuration(fmt.Sprint(svcs["ledgerd"]["stop_grace_period"]))
	if err != nil || grace <= server.ShutdownTimeout+5*time.Second {
		t.Errorf("ledgerd's stop_grace_period %v (%v), want more than its drain, %v, with room to spare", svcs["ledgerd"]["stop_grace_period"], err, server.ShutdownTimeout)
	}
}

func userOf(t *testing.T, u string) string {
	t.Helper()
	m := regexp.MustCompile(`^postgres://([a-z_]+)@`).FindStringSubmatch(u)
	if m == nil {
		t.Fatalf("%q names no user", u)
	}
	return m[1]
}

// TestComposePostgresIsTheTestedMajor: compose runs the Postgres major
// version the tests run on.
func TestComposePostgresIsTheTestedMajor(t *testing.T) {
	t.Parallel()
	image := fmt.Sprint(composeServices(t)["postgres"]["image"])
	m := regexp.MustCompile(`^postgres:(\d+)[.-]`).FindStringSubmatch(image)
	if m == nil {
		t.Fatalf("compose's postgres image %q has no major version in its tag", image)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var num int
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&num); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(num / 10000); m[1] != want {
		t.Errorf("compose runs Postgres %s (%s); the tests run on %s", m[1], image, want)
	}
}
