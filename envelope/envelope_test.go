package envelope_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/provider-ledger/adapter/envelope"
)

// TestRoundTripEveryFormBothDirections: a request sealed in every inner
// form opens with its claims, form and key, and the reply opens in the
// request's form.
func TestRoundTripEveryFormBothDirections(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	for _, form := range forms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			req := requestClaims(t, "rt-"+form.String())
			// Service side seals the request; the adapter opens it.
			token := seal(t, key, form, req)
			got, err := envelope.Open(token, keys)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(got.Claims, req) || got.Form != form || got.Key.ID != key.ID {
				t.Fatalf("Open = %s %v %v, want %s %v %v", got.Claims, got.Form, got.Key, req, form, key)
			}
			// The adapter replies; the service side opens the response.
			resp := claimsJSON(t, "", map[string]string{"outcome": "approved"})
			reply, err := got.Reply(resp)
			if err != nil {
				t.Fatalf("Reply: %v", err)
			}
			back, err := envelope.Open(reply, []envelope.Key{key})
			if err != nil {
				t.Fatalf("Open reply: %v", err)
			}
			if !bytes.Equal(back.Claims, resp) {
				t.Fatalf("reply claims = %s, want %s", back.Claims, resp)
			}
			if back.Form != form {
				t.Fatalf("reply form = %v, want the request's %v", back.Form, form)
			}
		})
	}
}

// TestSealWritesTheSpecHeader: Seal writes exactly the header the interface
// specifies.
func TestSealWritesTheSpecHeader(t *testing.T) {
	t.Parallel()
	key := testKey(0)
	for _, form := range forms {
		h := decodeHeader(t, seal(t, key, form, requestClaims(t, "h")))
		want := map[string]any{"alg": "A256KW", "enc": "A256GCM", "typ": "JWT", "cty": "JWT"}
		if len(h) != len(want) {
			t.Fatalf("%v header = %v, want %v", form, h, want)
		}
		for k, v := range want {
			if h[k] != v {
				t.Fatalf("%v header = %v, want %v", form, h, want)
			}
		}
	}
}

// TestSealIsRandomised: two seals of the same claims differ.
func TestSealIsRandomised(t *testing.T) {
	t.Parallel()
	key := testKey(0)
	c := requestClaims(t, "r")
	if seal(t, key, envelope.FormClaims, c) == seal(t, key, envelope.FormClaims, c) {
		t.Fatal("two seals of the same claims are identical")
	}
}

// TestInnerFormsOnTheWire: what each inner form puts inside the JWE: the
// claims, an HS256 JWS, an unsecured JWT.
func TestInnerFormsOnTheWire(t *testing.T) {
	t.Parallel()
	key := testKey(0)
	claims := requestClaims(t, "wire")
	for _, tc := range []struct {
		form  envelope.Form
		check func(pt string) bool
	}{
		{envelope.FormClaims, func(pt string) bool { return pt == string(claims) }},
		{envelope.FormJWS, func(pt string) bool {
			jws, err := jose.ParseSignedCompact(pt, []jose.SignatureAlgorithm{jose.HS256})
			if err != nil {
				return false
			}
			p, err := jws.Verify(key.Secret)
			return err == nil && bytes.Equal(p, claims)
		}},
		{envelope.FormUnsecured, func(pt string) bool {
			return pt == b64(`{"alg":"none","typ":"JWT"}`)+"."+b64(string(claims))+"."
		}},
	} {
		jwe, err := jose.ParseEncryptedCompact(seal(t, key, tc.form, claims),
			[]jose.KeyAlgorithm{jose.A256KW}, []jose.ContentEncryption{jose.A256GCM})
		if err != nil {
			t.Fatal(err)
		}
		pt, err := jwe.Decrypt(key.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if !tc.check(string(pt)) {
			t.Fatalf("%v: unexpected plaintext %q", tc.form, pt)
		}
	}
}

// TestHeaderRejectedBeforeDecryption: a header other than A256KW/A256GCM
// without zip or crit is refused before any decryption; typ and cty are
// tolerated.
func TestHeaderRejectedBeforeDecryption(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	good := seal(t, key, envelope.FormClaims, requestClaims(t, "hdr"))
	for _, tc := range []struct {
		name, header string
		want         error
	}{
		{"AlgRSAOAEP", `{"alg":"RSA-OAEP","enc":"A256GCM","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"AlgDir", `{"alg":"dir","enc":"A256GCM","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"AlgA128KW", `{"alg":"A128KW","enc":"A256GCM","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"AlgLowerCase", `{"alg":"a256kw","enc":"A256GCM"}`, envelope.ErrUnsupportedHeader},
		{"AlgNotString", `{"alg":1,"enc":"A256GCM"}`, envelope.ErrUnsupportedHeader},
		{"AlgMissing", `{"enc":"A256GCM","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"AlgDuplicated", `{"alg":"A256KW","alg":"dir","enc":"A256GCM"}`, envelope.ErrUnsupportedHeader},
		{"AlgDuplicatedSameValue", `{"alg":"A256KW","alg":"A256KW","enc":"A256GCM"}`, envelope.ErrUnsupportedHeader},
		{"EncA128GCM", `{"alg":"A256KW","enc":"A128GCM","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"EncA256CBCHS512", `{"alg":"A256KW","enc":"A256CBC-HS512","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"EncMissing", `{"alg":"A256KW","typ":"JWT","cty":"JWT"}`, envelope.ErrUnsupportedHeader},
		{"ZipDEF", `{"alg":"A256KW","enc":"A256GCM","typ":"JWT","cty":"JWT","zip":"DEF"}`, envelope.ErrUnsupportedHeader},
		{"ZipNull", `{"alg":"A256KW","enc":"A256GCM","zip":null}`, envelope.ErrUnsupportedHeader},
		{"ZipEmpty", `{"alg":"A256KW","enc":"A256GCM","zip":""}`, envelope.ErrUnsupportedHeader},
		{"ZipEscapedName", `{"alg":"A256KW","enc":"A256GCM","\u007aip":"DEF"}`, envelope.ErrUnsupportedHeader},
		{"Crit", `{"alg":"A256KW","enc":"A256GCM","crit":["exp"],"exp":1}`, envelope.ErrUnsupportedHeader},
		{"TypNotString", `{"alg":"A256KW","enc":"A256GCM","typ":true}`, envelope.ErrUnsupportedHeader},
		{"NotJSON", `{"alg":"A256KW","enc":"A256GCM"`, envelope.ErrMalformedJWE},
		{"NotObject", `["A256KW","A256GCM"]`, envelope.ErrMalformedJWE},
		// Accepted headers go on to decryption, which fails because the
		// header is the AAD and changed: ErrUndecryptable proves the
		// header check let them through.
		{"TypCtyMissingTolerated", `{"alg":"A256KW","enc":"A256GCM"}`, envelope.ErrUndecryptable},
		{"TypLowerCaseTolerated", `{"alg":"A256KW","enc":"A256GCM","typ":"jwt","cty":"jwt"}`, envelope.ErrUndecryptable},
		{"TypJOSETolerated", `{"alg":"A256KW","enc":"A256GCM","typ":"JOSE","cty":"JWT"}`, envelope.ErrUndecryptable},
		{"CtyJSONTolerated", `{"alg":"A256KW","enc":"A256GCM","typ":"JWT","cty":"json"}`, envelope.ErrUndecryptable},
		{"UnknownParamIgnored", `{"alg":"A256KW","enc":"A256GCM","typ":"JWT","cty":"JWT","kid":"x"}`, envelope.ErrUndecryptable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := envelope.Open(withHeader(good, tc.header), keys)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestDecryptableButForbiddenHeaders: tokens that go-jose itself would
// decrypt with the key, refused by the header check: the refusal cannot
// come from a failed decryption.
func TestDecryptableButForbiddenHeaders(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	claims := requestClaims(t, "forbidden")
	for _, tc := range []struct {
		name string
		alg  jose.KeyAlgorithm
		enc  jose.ContentEncryption
		key  []byte
		opts *jose.EncrypterOptions
	}{
		{"ZipDEF", jose.A256KW, jose.A256GCM, key.Secret, &jose.EncrypterOptions{Compression: jose.DEFLATE}},
		{"Dir", jose.DIRECT, jose.A256GCM, key.Secret, nil},
		{"A128KW", jose.A128KW, jose.A256GCM, key.Secret[:16], nil},
		{"A256GCMKW", jose.A256GCMKW, jose.A256GCM, key.Secret, nil},
		{"A256CBCHS512", jose.A256KW, jose.A256CBC_HS512, key.Secret, nil},
		{"A128GCM", jose.A256KW, jose.A128GCM, key.Secret, nil},
	} {
		enc, err := jose.NewEncrypter(tc.enc, jose.Recipient{Algorithm: tc.alg, Key: tc.key}, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := enc.Encrypt(claims)
		if err != nil {
			t.Fatal(err)
		}
		token, err := obj.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := jose.ParseEncryptedCompact(token, []jose.KeyAlgorithm{tc.alg}, []jose.ContentEncryption{tc.enc})
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := parsed.Decrypt(tc.key); err != nil || !bytes.Equal(pt, claims) {
			t.Fatalf("%s: control decryption failed: %v", tc.name, err)
		}
		if _, err = envelope.Open(token, keys); !errors.Is(err, envelope.ErrUnsupportedHeader) {
			t.Fatalf("%s: Open = %v, want ErrUnsupportedHeader", tc.name, err)
		}
	}
}

// TestTypAndCtyMissingAccepted: a token without typ and cty opens.
func TestTypAndCtyMissingAccepted(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	claims := requestClaims(t, "notyp")
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.A256KW, Key: key.Secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := enc.Encrypt(claims)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := obj.CompactSerialize()
	if _, ok := decodeHeader(t, token)["typ"]; ok {
		t.Fatal("control token has typ")
	}
	got, err := envelope.Open(token, keys)
	if err != nil || !bytes.Equal(got.Claims, claims) {
		t.Fatalf("Open = %s, %v", got.Claims, err)
	}
}

// TestMalformedCompact: what is not a five-segment compact JWE of canonical
// Base64url is malformed.
func TestMalformedCompact(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	good := seal(t, key, envelope.FormClaims, requestClaims(t, "mal"))
	s := segments(t, good)
	for name, token := range map[string]string{
		"Empty":         "",
		"FourSegments":  strings.Join(s[:4], "."),
		"SixSegments":   good + ".x",
		"HeaderPadded":  s[0] + "=." + strings.Join(s[1:], "."),
		"HeaderStdB64":  strings.NewReplacer("-", "+", "_", "/").Replace(s[0]) + "+/." + strings.Join(s[1:], "."),
		"ShortIV":       strings.Join([]string{s[0], s[1], s[2][:10], s[3], s[4]}, "."),
		"ShortTag":      strings.Join([]string{s[0], s[1], s[2], s[3], s[4][:10]}, "."),
		"NoWrappedKey":  strings.Join([]string{s[0], "", s[2], s[3], s[4]}, "."),
		"BadCiphertext": strings.Join([]string{s[0], s[1], s[2], "!!!", s[4]}, "."),
		"JSONSerial":    `{"protected":"` + s[0] + `"}`,
	} {
		if _, err := envelope.Open(token, keys); !errors.Is(err, envelope.ErrMalformedJWE) {
			t.Errorf("%s: Open = %v, want ErrMalformedJWE", name, err)
		}
	}
}

// TestOnlyTheBase64urlAlphabet: a segment with a character outside unpadded
// Base64url, or a non-zero trailing bit, is malformed, in the JWE and in
// the JWT inside it.
func TestOnlyTheBase64urlAlphabet(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	// Go's Base64 decoders skip CR and LF and ignore non-zero trailing
	// bits: a segment with a line break, or encoded another way, would
	// open as if it were the canonical one.
	good := seal(t, key, envelope.FormClaims, requestClaims(t, "alphabet"))
	if _, err := envelope.Open(good, keys); err != nil {
		t.Fatal(err)
	}
	s := segments(t, good)
	for i := range s {
		for _, bad := range []string{"\n", "\r", "\r\n", " ", "\t", "=", "+", "/", "*", "\x00", "\u00e9"} {
			seg := append([]string{}, s...)
			seg[i] = seg[i][:len(seg[i])/2] + bad + seg[i][len(seg[i])/2:]
			if _, err := envelope.Open(strings.Join(seg, "."), keys); !errors.Is(err, envelope.ErrMalformedJWE) {
				t.Errorf("segment %d with %q: Open = %v, want ErrMalformedJWE", i, bad, err)
			}
		}
		seg := append([]string{}, s...)
		seg[i] += "\n"
		if _, err := envelope.Open(strings.Join(seg, "."), keys); !errors.Is(err, envelope.ErrMalformedJWE) {
			t.Errorf("segment %d with a trailing newline: Open = %v, want ErrMalformedJWE", i, err)
		}
	}
	// The tag (16 bytes) ends in a character with 4 unused bits.
	tag, _ := base64.RawURLEncoding.DecodeString(s[4])
	seg := append([]string{}, s...)
	seg[4] = trailBitSet(tag)
	if _, err := envelope.Open(strings.Join(seg, "."), keys); !errors.Is(err, envelope.ErrMalformedJWE) {
		t.Errorf("tag with a non-zero trailing bit: Open = %v, want ErrMalformedJWE", err)
	}
	// The same holds inside: the segments of an inner JWS or unsecured JWT.
	claims := requestClaims(t, "alphabet")
	p := b64(string(claims))
	for name, plaintext := range map[string]string{
		"UnsecuredPayloadNewline": b64(`{"alg":"none"}`) + "." + p[:10] + "\n" + p[10:] + ".",
		"UnsecuredHeaderNewline":  b64(`{"alg":"none"}`)[:4] + "\r\n" + b64(`{"alg":"none"}`)[4:] + "." + p + ".",
		"UnsecuredPayloadPadded":  b64(`{"alg":"none"}`) + "." + base64.URLEncoding.EncodeToString(padTo(claims, 1)) + ".",
		"UnsecuredTrailingBit":    b64(`{"alg":"none"}`) + "." + trailBitSet(padTo(claims, 1)) + ".",
	} {
		token, err := envelope.SealRaw(key, []byte(plaintext))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := envelope.Open(token, keys); !errors.Is(err, envelope.ErrMalformedJWT) {
			t.Errorf("%s: Open = %v, want ErrMalformedJWT", name, err)
		}
	}
}

// TestWrongKeyUndecryptable: a token of another key is undecryptable, and
// the error names no key.
func TestWrongKeyUndecryptable(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	token := seal(t, testKey(9), envelope.FormClaims, requestClaims(t, "wrong"))
	_, err := envelope.Open(token, keys)
	if !errors.Is(err, envelope.ErrUndecryptable) {
		t.Fatalf("Open = %v, want ErrUndecryptable", err)
	}
	for _, k := range keys {
		if strings.Contains(err.Error(), k.ID) || strings.Contains(err.Error(), k.Fingerprint()) {
			t.Fatalf("error %q names a key", err)
		}
	}
	if _, err := envelope.Open(token, nil); !errors.Is(err, envelope.ErrUndecryptable) {
		t.Fatalf("Open with no keys = %v", err)
	}
}

// TestTamperedCiphertextUndecryptable: a changed ciphertext is
// undecryptable.
func TestTamperedCiphertextUndecryptable(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	s := segments(t, seal(t, key, envelope.FormClaims, requestClaims(t, "tamper")))
	// Change the first character to another valid one: the first six
	// bits of the ciphertext change, the encoding stays valid.
	c := []byte(s[3])
	if c[0] == 'A' {
		c[0] = 'B'
	} else {
		c[0] = 'A'
	}
	s[3] = string(c)
	if _, err := envelope.Open(strings.Join(s, "."), keys); !errors.Is(err, envelope.ErrUndecryptable) {
		t.Fatalf("Open = %v, want ErrUndecryptable", err)
	}
}

// TestRightKeyLastOfThree: Open tries every key: the last of three opens
// its token.
func TestRightKeyLastOfThree(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	for _, form := range forms {
		token := seal(t, keys[2], form, requestClaims(t, "last"))
		got, err := envelope.Open(token, keys)
		if err != nil || got.Key.ID != keys[2].ID || got.Form != form {
			t.Fatalf("%v: Open = %v %v, %v", form, got.Key, got.Form, err)
		}
	}
}

// TestInvalidKeysSkipped: keys too short or empty are skipped, not fatal.
func TestInvalidKeysSkipped(t *testing.T) {
	t.Parallel()
	key := testKey(0)
	token := seal(t, key, envelope.FormClaims, requestClaims(t, "skip"))
	ks := []envelope.Key{{ID: "short", Secret: key.Secret[:16]}, {ID: "nil"}, key}
	got, err := envelope.Open(token, ks)
	if err != nil || got.Key.ID != key.ID {
		t.Fatalf("Open = %v, %v", got.Key, err)
	}
}

// TestInnerContent: what a decrypted plaintext may be (claims, an HS256 JWS
// of the same key, an unsecured JWT) and what it may not; a refusal never
// quotes the claims.
func TestInnerContent(t *testing.T) {
	t.Parallel()
	keys := testKeys(3)
	key := keys[0]
	claims := requestClaims(t, "inner")
	jws := func(alg jose.SignatureAlgorithm, k []byte, payload []byte) string { return signJWS(t, alg, k, payload) }
	good := jws(jose.HS256, key.Secret, claims)
	gs := strings.Split(good, ".")
	long := append(append([]byte{}, key.Secret...), key.Secret[:16]...)
	p := b64(string(claims))
	for _, tc := range []struct {
		name      string
		plaintext string
		want      error // nil: opens with wantForm
		wantForm  envelope.Form
	}{
		{"ClaimsObject", string(claims), nil, envelope.FormClaims},
		{"ClaimsWithLeadingSpace", " \n" + string(claims), nil, envelope.FormClaims},
		{"JWSHS256", good, nil, envelope.FormJWS},
		{"UnsecuredMinimalHeader", b64(`{"alg":"none"}`) + "." + p + ".", nil, envelope.FormUnsecured},
		{"Garbage", "hello world", envelope.ErrMalformedJWT, 0},
		{"Empty", "", envelope.ErrMalformedJWT, 0},
		{"ClaimsInvalidJSON", `{"exp":1`, envelope.ErrMalformedJWT, 0},
		{"ClaimsArray", `[1,2]`, envelope.ErrMalformedJWT, 0},
		{"ClaimsTrailingGarbage", string(claims) + "x", envelope.ErrMalformedJWT, 0},
		{"JWSWrongKey", jws(jose.HS256, testKey(7).Secret, claims), envelope.ErrMalformedJWT, 0},
		{"JWSTamperedPayload", gs[0] + "." + b64(`{"exp":1,"iat":1,"service":{}}`) + "." + gs[2], envelope.ErrMalformedJWT, 0},
		{"JWSEmptySignature", gs[0] + "." + gs[1] + ".", envelope.ErrMalformedJWT, 0},
		{"JWSHS384", jws(jose.HS384, long, claims), envelope.ErrMalformedJWT, 0},
		{"JWSHS512", jws(jose.HS512, append(long, long...), claims), envelope.ErrMalformedJWT, 0},
		{"JWSPayloadNotObject", jws(jose.HS256, key.Secret, []byte(`"x"`)), envelope.ErrMalformedJWT, 0},
		{"JWSFourSegments", good + ".x", envelope.ErrMalformedJWT, 0},
		{"JWSAlgMissing", b64(`{"typ":"JWT"}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"JWSAlgDuplicated", b64(`{"alg":"none","alg":"HS256"}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"NoneWithSignature", b64(`{"alg":"none"}`) + "." + p + "." + gs[2], envelope.ErrMalformedJWT, 0},
		{"NoneCapitalised", b64(`{"alg":"None"}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"NoneUpperCase", b64(`{"alg":"NONE"}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"NoneWithCrit", b64(`{"alg":"none","crit":["x"],"x":1}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"NoneHeaderPayloadGarbage", b64(`{"alg":"none"}`) + ".!!!.", envelope.ErrMalformedJWT, 0},
		{"NonePayloadNotObject", b64(`{"alg":"none"}`) + "." + b64(`[]`) + ".", envelope.ErrMalformedJWT, 0},
		{"NoneHeaderNotJSON", b64(`{alg:none}`) + "." + p + ".", envelope.ErrMalformedJWT, 0},
		{"AlgRS256", b64(`{"alg":"RS256"}`) + "." + p + "." + gs[2], envelope.ErrMalformedJWT, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantInner(t, keys, tc.plaintext, tc.want, tc.wantForm, claims)
		})
	}
}

// TestSealRefusesBadInput: Seal refuses an unknown form, a short key and
// claims that are not one JSON object.
func TestSealRefusesBadInput(t *testing.T) {
	t.Parallel()
	key := testKey(0)
	claims := requestClaims(t, "bad")
	for name, tc := range map[string]struct {
		key    envelope.Key
		form   envelope.Form
		claims []byte
		want   error
	}{
		"ZeroForm":       {key, 0, claims, envelope.ErrInvalidForm},
		"UnknownForm":    {key, 42, claims, envelope.ErrInvalidForm},
		"ShortKey":       {envelope.Key{Secret: key.Secret[:31]}, envelope.FormClaims, claims, envelope.ErrInvalidSecret},
		"NoKey":          {envelope.Key{}, envelope.FormJWS, claims, envelope.ErrInvalidSecret},
		"ClaimsArray":    {key, envelope.FormClaims, []byte(`[]`), envelope.ErrInvalidClaims},
		"ClaimsInvalid":  {key, envelope.FormJWS, []byte(`{"a":`), envelope.ErrInvalidClaims},
		"ClaimsNil":      {key, envelope.FormUnsecured, nil, envelope.ErrInvalidClaims},
		"ClaimsTrailing": {key, envelope.FormClaims, []byte(`{} {}`), envelope.ErrInvalidClaims},
	} {
		if _, err := envelope.Seal(tc.key, tc.form, tc.claims); !errors.Is(err, tc.want) {
			t.Errorf("%s: Seal = %v, want %v", name, err, tc.want)
		}
	}
	if _, err := envelope.SealRaw(envelope.Key{}, claims); !errors.Is(err, envelope.ErrInvalidSecret) {
		t.Errorf("SealRaw without key = %v", err)
	}
}

// TestFormString: each form's name.
func TestFormString(t *testing.T) {
	t.Parallel()
	for f, want := range map[envelope.Form]string{
		envelope.FormClaims: "claims", envelope.FormJWS: "jws", envelope.FormUnsecured: "unsecured", 0: "invalid",
	} {
		if f.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(f), f.String(), want)
		}
	}
}

// signJWS is payload signed with k as a compact JWS of alg.
func signJWS(t *testing.T, alg jose.SignatureAlgorithm, k []byte, payload []byte) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantInner seals plaintext with keys[0] and opens it: refused with want
// (without quoting the claims), or, want nil, opened in form with claims
// equal (as JSON) to claims.
func wantInner(t *testing.T, keys []envelope.Key, plaintext string, want error, form envelope.Form, claims []byte) {
	t.Helper()
	token, err := envelope.SealRaw(keys[0], []byte(plaintext))
	if err != nil {
		t.Fatal(err)
	}
	got, err := envelope.Open(token, keys)
	if want != nil {
		if !errors.Is(err, want) {
			t.Fatalf("Open = %v, want %v", err, want)
		}
		if strings.Contains(err.Error(), "idempotencyKey") || strings.Contains(err.Error(), plaintext) && plaintext != "" {
			t.Fatalf("error leaks claims: %v", err)
		}
		return
	}
	if err != nil || got.Form != form || !json.Valid(got.Claims) {
		t.Fatalf("Open = %q %v, %v", got.Claims, got.Form, err)
	}
	var a, b any
	_ = json.Unmarshal(got.Claims, &a)
	_ = json.Unmarshal(claims, &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("claims = %s, want %s", got.Claims, claims)
	}
}

// padTo appends spaces to JSON b until its length is rem modulo 3, so that
// its Base64 ends in a partial group.
func padTo(b []byte, rem int) []byte {
	b = append([]byte{}, b...)
	for len(b)%3 != rem {
		b = append(b, ' ')
	}
	return b
}

// trailBitSet encodes b in unpadded Base64url with a non-zero unused bit in
// its last character (len(b) must not be a multiple of 3).
func trailBitSet(b []byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	c := base64.RawURLEncoding.EncodeToString(b)
	return c[:len(c)-1] + string(alphabet[strings.IndexByte(alphabet, c[len(c)-1])^1])
}
