package envelope

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// Form is the inner form of the JWT inside the JWE (contract §2.1 step 4).
type Form int

// The inner forms. The zero Form is invalid so a forgotten field fails Seal.
const (
	// FormClaims: the plaintext is the JSON claims object itself.
	FormClaims Form = iota + 1
	// FormJWS: the plaintext is a compact JWS, HS256 with the same secret.
	FormJWS
	// FormUnsecured: the plaintext is an unsecured JWT, header alg "none",
	// serialised "header.payload." with an empty signature.
	FormUnsecured
)

// String names the form for logs and metric labels.
func (f Form) String() string {
	switch f {
	case FormClaims:
		return "claims"
	case FormJWS:
		return "jws"
	case FormUnsecured:
		return "unsecured"
	}
	return "invalid"
}

// The allowed-algorithm lists, explicit: the JWE header check accepts these
// values and nothing else, and sigAlgs is handed to go-jose for the inner JWS.
var (
	keyAlgs     = []jose.KeyAlgorithm{jose.A256KW}
	contentEncs = []jose.ContentEncryption{jose.A256GCM}
	sigAlgs     = []jose.SignatureAlgorithm{jose.HS256}
)

// sealHeader is the Base64url protected header of every sealed envelope; as
// ASCII it is also the AAD of the content encryption (RFC 7516 §5.1 step 14).
var sealHeader = b64.EncodeToString([]byte(`{"alg":"A256KW","cty":"JWT","enc":"A256GCM","typ":"JWT"}`))

const (
	wrappedKeySize = SecretSize + 8 // RFC 3394: n+1 64-bit blocks
	ivSize         = 12
	tagSize        = 16
	// unsecuredHeader is Base64url of {"alg":"none","typ":"JWT"}.
	unsecuredHeader = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"
)

var b64 = base64.RawURLEncoding

// b64Strict decodes segments: unpadded Base64url with zero unused bits. Go's
// decoders also skip CR and LF, so segments are checked against the
// alphabet first (isB64URL): a segment is read only in its one canonical
// spelling.
var b64Strict = base64.RawURLEncoding.Strict()

// isB64URL reports whether s holds only characters of the Base64url
// alphabet (no padding, no white space, no line breaks). b64Strict refuses
// every other byte but CR and LF, which it skips: those are looked for
// here, with the vectorised byte search (the segments are a kilobyte).
func isB64URL(s string) bool {
	return strings.IndexByte(s, '\n') < 0 && strings.IndexByte(s, '\r') < 0
}

// decodeSegment decodes one segment of a compact serialization exactly.
func decodeSegment(s string) ([]byte, bool) {
	if !isB64URL(s) {
		return nil, false
	}
	b, err := b64Strict.DecodeString(s)
	return b, err == nil
}

// isObject reports whether b is valid JSON whose top-level value is an
// object. strictjson.EachMember walks such an object's top level without
// allocating and without folding the case of member names, as
// encoding/json's struct decoding would.
func isObject(b []byte) bool {
	i := strictjson.SkipSpace(b, 0)
	return i < len(b) && b[i] == '{' && json.Valid(b)
}

// Opened is an opened envelope: the claims (a valid JSON object), the inner
// form the sender used, and the key that opened it, which seals the reply.
// Claims is owned by the caller; Key.Secret is shared and must not be
// modified.
type Opened struct {
	Claims []byte
	Form   Form
	Key    Key
}

// Reply seals response claims with the key and in the inner form of the
// request, as contract §2.1 requires of every answer.
func (o Opened) Reply(claims []byte) (string, error) {
	return Seal(o.Key, o.Form, claims)
}

// AppendReply is Reply appending the compact JWE to dst (AppendSeal).
func (o Opened) AppendReply(dst, claims []byte) ([]byte, error) {
	return AppendSeal(dst, o.Key, o.Form, claims)
}

// Seal encrypts claims, a JSON object, into a compact JWE for key, wrapping
// them first in the inner form. The protected header is
// {"alg":"A256KW","cty":"JWT","enc":"A256GCM","typ":"JWT"}.
func Seal(key Key, form Form, claims []byte) (string, error) {
	out, err := AppendSeal(nil, key, form, claims)
	return string(out), err
}

// AppendSeal is Seal appending the compact JWE to dst: a caller that puts
// the token in a body of its own saves a copy. claims must not share
// memory with dst's spare capacity.
func AppendSeal(dst []byte, key Key, form Form, claims []byte) ([]byte, error) {
	if !isObject(claims) {
		return dst, ErrInvalidClaims
	}
	if !key.valid() {
		return dst, ErrInvalidSecret
	}
	var plaintext []byte
	switch form {
	case FormClaims:
		plaintext = claims
	case FormJWS:
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key.Secret},
			(&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			return dst, fmt.Errorf("envelope: signer: %w", err)
		}
		jws, err := signer.Sign(claims)
		if err != nil {
			return dst, fmt.Errorf("envelope: sign: %w", err)
		}
		s, err := jws.CompactSerialize()
		if err != nil {
			return dst, fmt.Errorf("envelope: sign: %w", err)
		}
		plaintext = []byte(s)
	case FormUnsecured:
		plaintext = make([]byte, 0, len(unsecuredHeader)+2+b64.EncodedLen(len(claims)))
		plaintext = append(plaintext, unsecuredHeader...)
		plaintext = append(plaintext, '.')
		plaintext = b64.AppendEncode(plaintext, claims)
		plaintext = append(plaintext, '.')
	default:
		return dst, ErrInvalidForm
	}
	return appendSealRaw(dst, key, plaintext)
}

// SealRaw encrypts an arbitrary plaintext into a compact JWE for key, with
// the same header as Seal and no check of the content. It exists for
// negative tests of either side: an envelope around garbage must be
// refused with ErrMalformedJWT (this package's tests), and an answer
// sealed around garbage must not be trusted (callbacks/caller's tests);
// production code uses Seal.
//
// The JWE is assembled here rather than by go-jose's Encrypter, whose
// generic header handling costs about a hundred allocations per message: the
// header is a constant, the key wrap is RFC 3394 for a 256-bit key
// (keywrap.go, held to go-jose's implementation by the tests) and the
// content encryption is the standard library's AES-GCM. Tests check that
// go-jose decrypts the result.
func SealRaw(key Key, plaintext []byte) (string, error) {
	out, err := appendSealRaw(nil, key, plaintext)
	return string(out), err
}

// appendSealRaw is SealRaw appending to dst.
func appendSealRaw(dst []byte, key Key, plaintext []byte) ([]byte, error) {
	if !key.valid() {
		return dst, ErrInvalidSecret
	}
	var fresh [SecretSize + ivSize]byte
	_, _ = rand.Read(fresh[:]) // never fails (crypto/rand, Go 1.24+)
	cek, iv := fresh[:SecretSize], fresh[SecretSize:]
	defer clear(fresh[:])
	kek, err := key.kek()
	if err != nil {
		return dst, ErrInvalidSecret
	}
	var wrapped [wrappedKeySize]byte
	keyWrap(kek, &wrapped, (*[SecretSize]byte)(cek))
	gcm, err := newGCM(cek)
	if err != nil {
		return dst, err
	}
	ctLen := len(plaintext)
	dst = slices.Grow(dst, len(sealHeader)+4+b64.EncodedLen(wrappedKeySize)+b64.EncodedLen(ivSize)+
		b64.EncodedLen(ctLen)+b64.EncodedLen(tagSize)+ctLen+tagSize)
	dst = append(dst, sealHeader...)
	dst = append(dst, '.')
	dst = b64.AppendEncode(dst, wrapped[:])
	dst = append(dst, '.')
	dst = b64.AppendEncode(dst, iv)
	dst = append(dst, '.')
	// The ciphertext and tag are made in the spare capacity past the
	// encoded segments' room, then encoded in place before it: one buffer.
	room := len(dst) + b64.EncodedLen(ctLen) + 1 + b64.EncodedLen(tagSize)
	sealed := gcm.Seal(dst[room:room], iv, plaintext, []byte(sealHeader))
	ct, tag := sealed[:ctLen], sealed[ctLen:]
	dst = b64.AppendEncode(dst, ct)
	dst = append(dst, '.')
	return b64.AppendEncode(dst, tag), nil
}

func newGCM(cek []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, fmt.Errorf("envelope: content key: %w", err)
	}
	return cipher.NewGCM(block) // standard 12-byte nonce, 16-byte tag
}

// Open checks the header of compact, tries each key in order and decodes the
// inner form; see the package documentation for the order of checks and the
// errors. keys with a Secret that is not 32 bytes are skipped. An empty keys
// gives ErrUndecryptable after the header checks.
func Open(compact string, keys []Key) (Opened, error) {
	o, _, err := open(compact, keys)
	return o, err
}

// open is Open that also returns the index of the key that opened.
func open(compact string, keys []Key) (Opened, int, error) {
	jwe, err := parseCompact(compact)
	if err != nil {
		return Opened{}, -1, err
	}
	for i, k := range keys {
		if !k.valid() {
			continue
		}
		plaintext, ok := jwe.decrypt(k)
		if !ok {
			continue
		}
		claims, form, err := decodeInner(plaintext, k)
		if err != nil {
			return Opened{}, -1, err
		}
		return Opened{Claims: claims, Form: form, Key: k}, i, nil
	}
	return Opened{}, -1, ErrUndecryptable
}

// compactJWE is a compact JWE that passed the key-independent checks.
type compactJWE struct {
	aad     []byte // ASCII of the encoded protected header, as received
	wrapped [wrappedKeySize]byte
	iv      [ivSize]byte
	sealed  []byte // ciphertext || tag, as crypto/cipher wants them
}

// parseCompact runs the key-independent checks of steps 1 and 2.
func parseCompact(compact string) (*compactJWE, error) {
	var seg [5]string
	rest := compact
	for i := range 4 {
		var ok bool
		seg[i], rest, ok = strings.Cut(rest, ".")
		if !ok {
			return nil, fmt.Errorf("%w: not five segments", ErrMalformedJWE)
		}
	}
	if strings.IndexByte(rest, '.') >= 0 {
		return nil, fmt.Errorf("%w: not five segments", ErrMalformedJWE)
	}
	seg[4] = rest
	for _, sg := range seg {
		if !isB64URL(sg) {
			return nil, fmt.Errorf("%w: a segment holds a character outside the Base64url alphabet", ErrMalformedJWE)
		}
	}
	if len(seg[0]) > 1024 {
		return nil, fmt.Errorf("%w: header too large", ErrMalformedJWE)
	}
	aad := []byte(seg[0])
	var hbuf [768]byte
	n, err := b64Strict.Decode(hbuf[:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: header encoding", ErrMalformedJWE)
	}
	if err := checkHeader(hbuf[:n]); err != nil {
		return nil, err
	}
	j := &compactJWE{aad: aad}
	if !decodeExact(j.wrapped[:], seg[1]) || !decodeExact(j.iv[:], seg[2]) {
		return nil, fmt.Errorf("%w: wrapped key or IV", ErrMalformedJWE)
	}
	j.sealed = make([]byte, b64.DecodedLen(len(seg[3]))+tagSize)
	ctLen, err := b64Strict.Decode(j.sealed, []byte(seg[3]))
	if err != nil {
		return nil, fmt.Errorf("%w: ciphertext encoding", ErrMalformedJWE)
	}
	if !decodeExact(j.sealed[ctLen:ctLen+tagSize], seg[4]) {
		return nil, fmt.Errorf("%w: tag", ErrMalformedJWE)
	}
	j.sealed = j.sealed[:ctLen+tagSize]
	return j, nil
}

// decodeExact decodes s into dst, which it must fill exactly.
func decodeExact(dst []byte, s string) bool {
	if b64.DecodedLen(len(s)) != len(dst) {
		return false
	}
	n, err := b64Strict.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}

// decrypt unwraps the content key with k (RFC 3394 integrity check) and
// opens the content; ok is false if either fails.
func (j *compactJWE) decrypt(k Key) ([]byte, bool) {
	kek, err := k.kek()
	if err != nil {
		return nil, false
	}
	var cek [SecretSize]byte
	defer clear(cek[:])
	if !keyUnwrap(kek, &cek, &j.wrapped) {
		return nil, false
	}
	gcm, err := newGCM(cek[:])
	if err != nil {
		return nil, false
	}
	plaintext, err := gcm.Open(nil, j.iv[:], j.sealed, j.aad)
	return plaintext, err == nil
}

// checkHeader enforces the protected header rules on the decoded header.
func checkHeader(h []byte) error {
	if !isObject(h) {
		return fmt.Errorf("%w: header is not a JSON object", ErrMalformedJWE)
	}
	const (
		seenAlg = 1 << iota
		seenEnc
		seenTyp
		seenCty
	)
	var seen int
	err := strictjson.EachMember(h, func(rawName, value []byte) error {
		name, ok := strictjson.UnquoteBytes(rawName)
		if !ok {
			return fmt.Errorf("%w: header member name", ErrMalformedJWE)
		}
		var bit int
		switch string(name) {
		case "zip":
			return fmt.Errorf("%w: zip is not allowed", ErrUnsupportedHeader)
		case "crit":
			return fmt.Errorf("%w: crit is not supported", ErrUnsupportedHeader)
		case "alg":
			bit = seenAlg
			if v, ok := strictjson.UnquoteBytes(value); !ok || !slices.Contains(keyAlgs, jose.KeyAlgorithm(v)) {
				return fmt.Errorf("%w: alg must be A256KW", ErrUnsupportedHeader)
			}
		case "enc":
			bit = seenEnc
			if v, ok := strictjson.UnquoteBytes(value); !ok || !slices.Contains(contentEncs, jose.ContentEncryption(v)) {
				return fmt.Errorf("%w: enc must be A256GCM", ErrUnsupportedHeader)
			}
		case "typ", "cty":
			bit = seenTyp
			if name[0] == 'c' {
				bit = seenCty
			}
			// The service sends JWT; another media type carries no
			// security meaning (the inner form is detected from the
			// plaintext), so it is tolerated, but it must be a string.
			if _, ok := strictjson.UnquoteBytes(value); !ok {
				return fmt.Errorf("%w: typ and cty must be strings", ErrUnsupportedHeader)
			}
		default:
			return nil
		}
		if seen&bit != 0 {
			return fmt.Errorf("%w: duplicate header parameter", ErrUnsupportedHeader)
		}
		seen |= bit
		return nil
	})
	if err != nil {
		return err
	}
	if seen&seenAlg == 0 || seen&seenEnc == 0 {
		return fmt.Errorf("%w: alg and enc are required", ErrUnsupportedHeader)
	}
	return nil
}

// decodeInner identifies and checks the inner form of a decrypted plaintext.
func decodeInner(plaintext []byte, k Key) ([]byte, Form, error) {
	i := strictjson.SkipSpace(plaintext, 0)
	if i < len(plaintext) && plaintext[i] == '{' {
		if !isObject(plaintext) {
			return nil, 0, fmt.Errorf("%w: claims are not a JSON object", ErrMalformedJWT)
		}
		return plaintext, FormClaims, nil
	}
	hdr, rest, ok1 := strings.Cut(string(plaintext), ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.IndexByte(sig, '.') >= 0 {
		return nil, 0, fmt.Errorf("%w: not a JSON object or a compact JWS", ErrMalformedJWT)
	}
	if !isB64URL(hdr) || !isB64URL(payload) || !isB64URL(sig) {
		return nil, 0, fmt.Errorf("%w: a JWS segment holds a character outside the Base64url alphabet", ErrMalformedJWT)
	}
	h, ok := decodeSegment(hdr)
	if !ok || !isObject(h) {
		return nil, 0, fmt.Errorf("%w: JWS header", ErrMalformedJWT)
	}
	var alg []byte
	var algs int
	var crit bool
	_ = strictjson.EachMember(h, func(rawName, value []byte) error {
		name, _ := strictjson.UnquoteBytes(rawName)
		switch string(name) {
		case "alg":
			algs++
			alg, _ = strictjson.UnquoteBytes(value)
		case "crit":
			crit = true
		}
		return nil
	})
	if algs != 1 {
		return nil, 0, fmt.Errorf("%w: JWS alg", ErrMalformedJWT)
	}
	var claims []byte
	var form Form
	switch string(alg) {
	case "none":
		if sig != "" || crit {
			return nil, 0, fmt.Errorf("%w: unsecured JWT with a signature or crit", ErrMalformedJWT)
		}
		var ok bool
		if claims, ok = decodeSegment(payload); !ok {
			return nil, 0, fmt.Errorf("%w: JWT payload encoding", ErrMalformedJWT)
		}
		form = FormUnsecured
	case string(jose.HS256):
		// go-jose decodes the segments itself; they must be canonical here
		// as everywhere else.
		if _, ok := decodeSegment(payload); !ok {
			return nil, 0, fmt.Errorf("%w: JWS payload encoding", ErrMalformedJWT)
		}
		if _, ok := decodeSegment(sig); !ok {
			return nil, 0, fmt.Errorf("%w: JWS signature encoding", ErrMalformedJWT)
		}
		jws, err := jose.ParseSignedCompact(string(plaintext), sigAlgs)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: JWS", ErrMalformedJWT)
		}
		if claims, err = jws.Verify(k.Secret); err != nil {
			return nil, 0, fmt.Errorf("%w: JWS signature", ErrMalformedJWT)
		}
		form = FormJWS
	default:
		return nil, 0, fmt.Errorf("%w: JWS alg must be HS256 or none", ErrMalformedJWT)
	}
	if !isObject(claims) {
		return nil, 0, fmt.Errorf("%w: claims are not a JSON object", ErrMalformedJWT)
	}
	return claims, form, nil
}
