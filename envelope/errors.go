package envelope

import (
	"errors"
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
	// ErrInvalidClaims: Seal was given claims that are not a JSON object.
	// The claims builders of package callbacks/claims return it too, in a
	// ClaimError naming the claim: a service that is not a JSON object, or
	// a request without a typ.
	ErrInvalidClaims = errors.New("envelope: invalid claims")
)
