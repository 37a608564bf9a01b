package loadtest_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/tooltest"
	"github.com/provider-ledger/adapter/loadtest"
)

// sealSecret writes a fresh signing secret to a file and returns it.
func sealSecret(t *testing.T) (string, envelope.Key) {
	t.Helper()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "signing-secret")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, envelope.Key{ID: "t", Secret: secret}
}

// answer is what ledgerd answered one replayed target.
type answer struct {
	status  int
	service map[string]any
}

// send posts a decoded target with net/http, as a load tool would, and
// opens a 200 answer with key.
func send(t *testing.T, key envelope.Key, method, url string, header http.Header, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return answer{status: resp.StatusCode}
	}
	var wrapped struct {
		Response string `json:"response"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	opened, err := envelope.Open(wrapped.Response, []envelope.Key{key})
	if err != nil {
		t.Fatalf("opening the answer: %v", err)
	}
	hdr, err := claims.Parse(opened.Claims)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode}
	if err := json.Unmarshal(hdr.Service, &a.service); err != nil {
		t.Fatal(err)
	}
	return a
}

// requestLifetime opens a sealed body and returns its exp - iat and typ.
func requestLifetime(t *testing.T, key envelope.Key, body []byte) (int64, string) {
	t.Helper()
	var b struct {
		Request string `json:"request"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	opened, err := envelope.Open(b.Request, []envelope.Key{key})
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := claims.Parse(opened.Claims)
	if err != nil {
		t.Fatal(err)
	}
	return hdr.Exp - hdr.Iat, hdr.Typ
}

// TestSealVegeta: seal seeds the accounts and writes vegeta targets that,
// sent with net/http, are all approved; a target sent again answers the
// same.
func TestSealVegeta(t *testing.T) {
	tooltest.SkipShort(t, "seals requests and sends them to a ledgerd")
	t.Parallel()
	secretFile, key := sealSecret(t)
	l := startLedgerd(t, "LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(key.Secret))
	out := filepath.Join(t.TempDir(), "targets.json")
	code, stdout, errs := run(t, l.args("seal", "--secret-file", secretFile, "--seed-accounts", "--count", "12",
		"--accounts", "3", "--mix", "authorize=2,credit=1", "--lifetime", "2m", "--out", out), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("seal: exit %d\n%s\n%s", code, stdout, errs)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), base64.StdEncoding.EncodeToString(key.Secret)) {
		t.Fatal("the targets contain the secret")
	}
	var targets []loadtest.VegetaTarget
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var tg loadtest.VegetaTarget
		if err := json.Unmarshal(sc.Bytes(), &tg); err != nil {
			t.Fatalf("line %d is not a vegeta target: %v", len(targets)+1, err)
		}
		targets = append(targets, tg)
	}
	byEndpoint := map[string]int{}
	for _, tg := range targets {
		byEndpoint[strings.TrimPrefix(tg.URL, l.callbacks+"/")]++
		if tg.Method != http.MethodPost || tg.Header["Content-Type"][0] != "application/json" {
			t.Fatalf("target %+v", tg)
		}
		if life, typ := requestLifetime(t, key, tg.Body); life != 120 || tg.URL != l.callbacks+"/"+typ {
			t.Fatalf("target %s: exp - iat %d, typ %q", tg.URL, life, typ)
		}
	}
	if len(targets) != 12 || byEndpoint[claims.Authorize] != 8 || byEndpoint[claims.CreditAccount] != 4 {
		t.Fatalf("%d targets by endpoint %v, want 8 authorizes and 4 credits", len(targets), byEndpoint)
	}
	first := make([]answer, len(targets))
	for i, tg := range targets {
		first[i] = send(t, key, tg.Method, tg.URL, tg.Header, tg.Body)
		if first[i].status != http.StatusOK || first[i].service["outcome"] != "approved" {
			t.Fatalf("target %d (%s): %d %v", i, tg.URL, first[i].status, first[i].service)
		}
	}
	for _, i := range []int{0, len(targets) - 1} {
		tg := targets[i]
		again := send(t, key, tg.Method, tg.URL, tg.Header, tg.Body)
		ref := claims.ReferenceClaim(strings.TrimPrefix(tg.URL, l.callbacks+"/"))
		if again.status != http.StatusOK || again.service["outcome"] != "approved" || again.service[ref] == nil || again.service[ref] != first[i].service[ref] {
			t.Fatalf("target %d sent again: %d %v, first %v", i, again.status, again.service, first[i].service)
		}
	}
}

// TestSealK6: --format k6 writes one JSON array of http.request arguments
// that ledgerd approves.
func TestSealK6(t *testing.T) {
	tooltest.SkipShort(t, "seals requests and sends them to a ledgerd")
	t.Parallel()
	secretFile, key := sealSecret(t)
	l := startLedgerd(t, "LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(key.Secret))
	code, stdout, errs := run(t, l.args("seal", "--secret-file", secretFile, "--seed-accounts", "--count", "4",
		"--accounts", "2", "--format", "k6"), loadtest.Hooks{})
	if code != 0 {
		t.Fatalf("seal: exit %d\n%s\n%s", code, stdout, errs)
	}
	var reqs []loadtest.K6Request
	if err := json.Unmarshal([]byte(stdout), &reqs); err != nil || len(reqs) != 4 {
		t.Fatalf("not a k6 array of 4 (%v):\n%s", err, stdout)
	}
	for i, r := range reqs {
		if life, _ := requestLifetime(t, key, []byte(r.Body)); life != 300 {
			t.Fatalf("request %d: exp - iat %d, want the default 5m", i, life)
		}
		h := http.Header{}
		for k, v := range r.Params.Headers {
			h.Set(k, v)
		}
		if a := send(t, key, r.Method, r.URL, h, []byte(r.Body)); a.status != http.StatusOK || a.service["outcome"] != "approved" {
			t.Fatalf("request %d (%s): %d %v", i, r.URL, a.status, a.service)
		}
	}
}

// TestSealUsage: bad flags exit 2 and write nothing.
func TestSealUsage(t *testing.T) {
	t.Parallel()
	secretFile, _ := sealSecret(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"seal"}, "required flag --secret-file not given"},
		{[]string{"seal", "--secret-file", secretFile, "--lifetime", "11m"}, "--lifetime must be 1s to 10m0s"},
		{[]string{"seal", "--secret-file", secretFile, "--format", "wrk"}, `--format "wrk"`},
		{[]string{"seal", "--secret-file", secretFile, "--mix", "capture=1"}, `--mix "capture=1"`},
		{[]string{"seal", "--secret-file", secretFile, "--mix", "authorize=0"}, `--mix "authorize=0"`},
		{[]string{"seal", "--secret-file", secretFile, "--count", "0"}, "--count must be"},
		{[]string{"seal", "--secret-file", filepath.Join(t.TempDir(), "absent")}, "--secret-file"},
	} {
		code, out, errs := run(t, tc.args, loadtest.Hooks{})
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}
