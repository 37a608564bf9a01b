package deploy

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestComposeAutoFailover checks compose.autofailover.yaml statically (CI
// has no container engine): every secret a service mounts is declared and
// its file is one secrets.sh writes; ledgerd's and migrate's URLs list both
// nodes with target_session_attrs=read-write and a connect_timeout
// (docs/high-availability.md), each node port below the kernel's ephemeral
// range; and ledgerd sets only variables it reads.
func TestComposeAutoFailover(t *testing.T) {
	t.Parallel()
	var f composeFile
	decodeYAML(t, "compose.autofailover.yaml", &f)
	script := read(t, "secrets.sh")
	for name, s := range f.Secrets {
		if !strings.Contains(script, "put "+strings.TrimPrefix(s.File, "./secrets/")+" ") {
			t.Errorf("secret %s: file %s is not one deploy/secrets.sh writes", name, s.File)
		}
	}
	for svc, s := range f.Services {
		for _, name := range secretNames(t, s.Secrets) {
			if _, ok := f.Secrets[name]; !ok {
				t.Errorf("service %s mounts secret %s, which the file does not declare", svc, name)
			}
		}
	}
	checkFormationURL(t, "ledgerd", environment(t, f.Services["ledgerd"].Environment)["DATABASE_URL"])
	checkFormationURL(t, "migrate", environment(t, f.Services["migrate"].Environment)["LEDGER_MIGRATION_DATABASE_URL"])
	_, reads := ledgerdSettings(t)
	for name := range environment(t, f.Services["ledgerd"].Environment) {
		_, ok := reads[name]
		_, file := reads[strings.TrimSuffix(name, "_FILE")] // a secret given by file
		if !ok && !file && name != "DATABASE_URL" {
			t.Errorf("ledgerd's environment sets %s, which ledgerd does not read", name)
		}
	}
}

func checkFormationURL(t *testing.T, svc, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s's URL: %v", svc, err)
	}
	q := u.Query()
	if q.Get("target_session_attrs") != "read-write" || q.Get("connect_timeout") == "" {
		t.Errorf("%s's URL %q: want target_session_attrs=read-write and a connect_timeout", svc, raw)
	}
	var hosts []string
	for _, hp := range strings.Split(u.Host, ",") {
		host, port, _ := strings.Cut(hp, ":")
		hosts = append(hosts, host)
		if p, err := strconv.Atoi(port); err != nil || p >= 32768 {
			t.Errorf("%s's URL: node port %q, want one below the ephemeral range (32768)", svc, port)
		}
	}
	if !slices.Equal(hosts, []string{"node1", "node2"}) {
		t.Errorf("%s's URL lists hosts %v, want node1 and node2", svc, hosts)
	}
}
