package envelope

import (
	"errors"
	"fmt"
)

// Errors of Open and KeySet.Open, in the order the checks run. Each maps to a
// 400 of the callback; none carries header values, claims or key material.
var (
	// ErrMalformedJWE: the input is not a compact JWE of the expected shape
	// (segment count, Base64url, header JSON, wrapped-key/IV/tag lengths).
	ErrMalformedJWE = errors.New("envelope: malformed compact JWE")
	// ErrUnsupportedHeader: the protected header asks for anything but
	// A256KW/A256GCM without compression or critical extensions.
	ErrUnsupportedHeader = errors.New("envelope: unsupported JWE protected header")
	// ErrUndecryptable: no key of the set opens the JWE.
	ErrUndecryptable = errors.New("envelope: JWE cannot be decrypted with any active key")
	// ErrMalformedJWT: the decrypted content is not an accepted inner JWT
	// (not a JSON object, a JWS with a bad signature or an alg other than
	// HS256 or none).
	ErrMalformedJWT = errors.New("envelope: malformed inner JWT")
)

// Errors of keys and sealing.
var (
	// ErrInvalidSecret: a secret that is not Base64 of exactly 32 bytes, or a
	// Key whose Secret is not 32 bytes.
	ErrInvalidSecret = errors.New("envelope: invalid signing secret")
	// ErrInvalidForm: Seal was given a Form that is not one of the constants.
	ErrInvalidForm = errors.New("envelope: invalid inner form")
	// ErrInvalidClaims: Seal or a claims builder was given something that is
	// not a JSON object.
	ErrInvalidClaims = errors.New("envelope: claims are not a JSON object")
)

// Errors of ParseClaims and Header.Validate, each wrapped in a *ClaimError
// naming the claim.
var (
	// ErrMalformedClaims: not a JSON object, or exp/iat missing or not
	// integers, typ not a string, service not an object, a duplicated claim.
	ErrMalformedClaims = errors.New("envelope: malformed claims")
	// ErrExpired: exp + leeway is before now.
	ErrExpired = errors.New("envelope: claims expired")
	// ErrNotYetValid: iat - leeway is after now.
	ErrNotYetValid = errors.New("envelope: claims issued in the future")
	// ErrWrongType: typ differs from the expected operation.
	ErrWrongType = errors.New("envelope: wrong claims typ")
	// ErrMissingService: the object claim service is absent.
	ErrMissingService = errors.New("envelope: missing service claim")
	// ErrInexactString: a string of the claims, at any depth, member names
	// included, holds a \u escape of a lone or reversed UTF-16 surrogate or
	// bytes that are not UTF-8, which encoding/json would silently decode
	// as U+FFFD ("p-\ud800" and "p-\udc00" would become one payoutID). It
	// wraps ErrMalformedClaims.
	ErrInexactString = fmt.Errorf("%w: a string has an invalid escape or is not UTF-8", ErrMalformedClaims)
	// ErrDuplicateMember: an object of the claims, at any depth, names a
	// member twice (after decoding escapes), which encoding/json would
	// resolve silently. It wraps ErrMalformedClaims.
	ErrDuplicateMember = fmt.Errorf("%w: a member name appears twice", ErrMalformedClaims)
)

// ClaimError locates a claims error. Claim is the top-level claim name
// ("exp", "iat", "typ", "service", or "" for the whole object); Path, when
// set, is the RFC 6901 pointer of the offending value inside the claims
// ("/service/payoutID"); Err is one of the sentinel errors above. It never
// holds the claim's value.
type ClaimError struct {
	Claim string
	Path  string
	Err   error
}

func (e *ClaimError) Error() string {
	switch {
	case e.Path != "":
		return e.Err.Error() + ": " + e.Path
	case e.Claim == "":
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Claim
}

// Unwrap returns the sentinel error.
func (e *ClaimError) Unwrap() error { return e.Err }

// Pointer is the RFC 6901 JSON pointer of the claim, for problem details.
func (e *ClaimError) Pointer() string {
	switch {
	case e.Path != "":
		return e.Path
	case e.Claim == "":
		return ""
	}
	return "/" + e.Claim
}

func claimErr(claim string, err error) error { return &ClaimError{Claim: claim, Err: err} }
