// Package envelope seals and opens the JWE envelope of the ledger callbacks,
// from either side of the wire.
//
// The adapter opens requests ([KeySet.Open]) and seals responses
// ([Opened.Reply]); the service side (load tester, sandbox, tests) seals
// requests ([Seal]) and opens responses ([Open]). Nothing here knows about
// routes, providers or business claims: the package ends at a verified,
// syntactically valid JSON claims object, after the checks of contract §2.1
// steps 2 to 4.
//
// # Wire format
//
// A callback body carries a compact-serialized JWE (RFC 7516), five
// Base64url segments: header, wrapped content key, IV, ciphertext, tag.
//
//  1. The key is a signing secret: Base64 of 32 random bytes ([ParseSecret]).
//     The 32 raw bytes are the A256KW key-wrapping key (RFC 3394); the content
//     is encrypted with A256GCM under a fresh random 256-bit key per message.
//  2. The protected header is exactly what [Seal] writes:
//     {"alg":"A256KW","cty":"JWT","enc":"A256GCM","typ":"JWT"}.
//  3. The plaintext is a JWT in one of three inner forms ([Form]): a JSON
//     claims object ([FormClaims]), a compact JWS signed HS256 with the same
//     32-byte secret ([FormJWS]), or an unsecured JWT, alg "none", with an empty
//     signature ([FormUnsecured]). The JWE's authenticated encryption already
//     proves the sender, so the unsecured form is accepted. A response is
//     sealed in the form of the request it answers ([Opened.Reply]).
//
// # Order of checks in Open
//
// Cheap, key-independent checks run before any cryptography, so a malformed or
// downgraded token never costs a key unwrap and is reported with its own error:
//
//  1. Five segments, each only characters of the Base64url alphabet (no
//     padding, white space or line breaks, which Go's decoders would skip)
//     and decoded strictly (unused trailing bits zero), so a segment has one
//     spelling; the header segment decodes to a JSON object. Else
//     [ErrMalformedJWE]. The segments of an inner JWS or unsecured JWT are
//     held to the same rule ([ErrMalformedJWT]).
//  2. Header: alg in the allowed list {"A256KW"}, enc in {"A256GCM"}, both
//     present; no "zip" (whatever its value, even null), no "crit". "typ" and
//     "cty", when present, must be strings; the service sends "JWT", but any
//     value is tolerated (and a missing one too): they carry no security
//     meaning, since the inner form is detected from the plaintext, and a
//     media-type spelling must not turn a valid, authenticated request into a
//     terminal 400. A duplicated alg, enc, typ or cty is rejected rather than
//     resolved (RFC 7515 §4). Unknown parameters (kid, ...) are ignored.
//     Else [ErrUnsupportedHeader].
//  3. Wrapped key 40 bytes, IV 12 bytes, tag 16 bytes, ciphertext unpadded
//     Base64url. Else [ErrMalformedJWE].
//  4. Each key in order: the RFC 3394 unwrap (its integrity check,
//     compared in constant time, rejects a wrong key) then AES-256-GCM with the received header segment
//     as AAD. None succeeds: [ErrUndecryptable], which never says which or
//     how many keys were tried. The first key that succeeds opens it.
//  5. Inner form: a plaintext starting with "{" is [FormClaims]; otherwise it
//     must be a three-segment compact JWS whose header alg is "HS256" (verified
//     by go-jose with the same secret, allowed list {HS256}) or "none" (empty
//     signature, no "crit"). The claims must be a valid JSON object. Else
//     [ErrMalformedJWT].
//
// # Claims
//
// The package ends at the decrypted claims object: package callbacks/claims
// checks and decodes the claims (exp, iat, typ, service and the business
// claims) in one pass, and builds the claims of requests and answers.
//
// # At rest
//
// [StoredSecret] is a signing secret as the keyring keeps it, encrypted
// under a KEK (package keyring encrypts, package store stores), and
// [SecretRekey] its re-encryption under another KEK.
//
// # Keys and logs
//
// A [Key] prints, logs (slog) and marshals to JSON as its ID and
// [Key.Fingerprint] only, the first 8 bytes of SHA-256 of the secret in hex,
// which is safe in logs and as a metric label. Errors of this package never
// contain claim contents, header values or key material; they are sentinel
// errors for errors.Is, sometimes wrapped with a fixed reason.
//
// # Performance
//
// [KeySet.Open] reads an atomically published, immutable key order, so the
// common case (the first key opens) takes no lock. A success with another key
// moves it to the front by copy-on-write under a TryLock: concurrent winners
// never wait, and a skipped promotion only costs a later retry.
package envelope
