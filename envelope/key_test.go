package envelope_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
)

func TestKeyParseSecret(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)[:32] // has + / in std, - _ in URL
	std := base64.StdEncoding.EncodeToString(raw)
	url := base64.URLEncoding.EncodeToString(raw)
	if !strings.ContainsAny(std, "+/") || !strings.ContainsAny(url, "-_") || !strings.HasSuffix(std, "=") {
		t.Fatalf("fixture does not exercise both alphabets: %s %s", std, url)
	}
	for _, in := range []string{
		std, strings.TrimRight(std, "="), url, strings.TrimRight(url, "="), " " + std + "\n",
	} {
		got, err := envelope.ParseSecret(in)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("ParseSecret(%q) = %x, %v", in, got, err)
		}
	}
	bad := []string{
		"",
		base64.StdEncoding.EncodeToString(raw[:31]),
		base64.StdEncoding.EncodeToString(append(raw, 1)),
		base64.StdEncoding.EncodeToString(make([]byte, 48)),
		strings.Replace(std, "/", "_", 1), // mixed alphabets
		std[:10] + "!" + std[11:],
		std[:42] + "B=", // non-canonical trailing bits
	}
	for _, in := range bad {
		_, err := envelope.ParseSecret(in)
		if !errors.Is(err, envelope.ErrInvalidSecret) {
			t.Errorf("ParseSecret(%q) = %v, want ErrInvalidSecret", in, err)
			continue
		}
		if in != "" && strings.Contains(err.Error(), in) {
			t.Errorf("error %q contains the input", err)
		}
	}
}

func TestKeyFingerprint(t *testing.T) {
	t.Parallel()
	k := testKey(0)
	fp := k.Fingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(fp) {
		t.Fatalf("fingerprint %q is not 16 hex digits", fp)
	}
	if fp != (envelope.Key{ID: "other", Secret: append([]byte(nil), k.Secret...)}).Fingerprint() {
		t.Fatal("fingerprint depends on more than the secret")
	}
	if fp == testKey(1).Fingerprint() {
		t.Fatal("two keys share a fingerprint")
	}
	if strings.Contains(hex.EncodeToString(k.Secret), fp) {
		t.Fatal("fingerprint is a piece of the secret")
	}
	// Pinned: other components (ledgerd's start-up line, the admin API)
	// print this value, so it must not change silently.
	if got := (envelope.Key{Secret: make([]byte, 32)}).Fingerprint(); got != "66687aadf862bd77" {
		t.Fatalf("fingerprint of 32 zero bytes = %s", got)
	}
	if (envelope.Key{}).Fingerprint() != "none" {
		t.Fatal("empty key fingerprint")
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	k := testKey(0)
	forbidden := []string{
		base64.StdEncoding.EncodeToString(k.Secret),
		base64.RawStdEncoding.EncodeToString(k.Secret),
		base64.URLEncoding.EncodeToString(k.Secret),
		base64.RawURLEncoding.EncodeToString(k.Secret),
		hex.EncodeToString(k.Secret),
		strings.ToUpper(hex.EncodeToString(k.Secret)),
		string(k.Secret),
		fmt.Sprint(k.Secret), // [12 34 ...]
		fmt.Sprintf("%d", k.Secret[:4]),
		strings.Trim(fmt.Sprint(k.Secret[:4]), "[]"),
	}
	type wrapper struct {
		Name string
		K    envelope.Key
		P    *envelope.Key
	}
	opened := envelope.Opened{Claims: []byte(`{}`), Form: envelope.FormClaims, Key: k}
	var outs []string
	for _, v := range []any{k, &k, []envelope.Key{k}, map[string]envelope.Key{"a": k}, wrapper{"w", k, &k}, opened} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
			outs = append(outs, fmt.Sprintf(verb, v))
		}
	}
	outs = append(outs, k.String(), k.GoString(), fmt.Sprint(k), fmt.Sprintln(k))
	for _, v := range []any{k, &k, []envelope.Key{k}, wrapper{"w", k, &k}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(j))
	}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		l := slog.New(h)
		l.Info("key", "key", k, "ptr", &k, "keys", []envelope.Key{k})
		l.Info("key", slog.Any("key", k))
	}
	outs = append(outs, buf.String())
	for _, out := range outs {
		for _, f := range forbidden {
			if strings.Contains(out, f) {
				t.Fatalf("output %q contains the secret (as %q)", out, f)
			}
		}
	}
	// And they do say which key it is.
	if !strings.Contains(fmt.Sprint(k), k.Fingerprint()) || !strings.Contains(buf.String(), k.Fingerprint()) {
		t.Fatal("fingerprint missing from the printed key")
	}
	j, _ := json.Marshal(k)
	var m map[string]string
	if err := json.Unmarshal(j, &m); err != nil || m["id"] != k.ID || m["fingerprint"] != k.Fingerprint() || len(m) != 2 {
		t.Fatalf("MarshalJSON = %s", j)
	}
	j, _ = json.Marshal(envelope.Key{ID: "a\"<b>\n"})
	if !json.Valid(j) {
		t.Fatalf("MarshalJSON with odd ID = %s", j)
	}
}
