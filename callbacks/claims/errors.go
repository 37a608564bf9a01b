package claims

import (
	"errors"
	"fmt"

	"github.com/provider-ledger/adapter/internal/problem"
)

// Errors of Parse, Decode and Header.Validate about the registered claims,
// each wrapped in a *ClaimError naming the claim.
var (
	// ErrMalformedClaims: not a JSON object, or exp/iat missing or not
	// integers, typ not a string, service not an object, a duplicated claim.
	ErrMalformedClaims = errors.New("claims: malformed claims")
	// ErrExpired: exp + leeway is before now.
	ErrExpired = errors.New("claims: claims expired")
	// ErrNotYetValid: iat - leeway is after now.
	ErrNotYetValid = errors.New("claims: claims issued in the future")
	// ErrLifetimeInverted: exp is before iat.
	ErrLifetimeInverted = errors.New("claims: exp is before iat")
	// ErrLifetimeTooLong: exp - iat is over the longest lifetime accepted
	// (Options.MaxLifetime).
	ErrLifetimeTooLong = errors.New("claims: exp - iat is over the longest request lifetime accepted")
	// ErrWrongType: typ differs from the expected endpoint.
	ErrWrongType = errors.New("claims: wrong claims typ")
	// ErrMissingService: the object claim service is absent.
	ErrMissingService = errors.New("claims: missing service claim")
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

// The builders (BuildRequest, BuildResponse) return envelope.ErrInvalidClaims,
// the error of sealing claims that are not an object, in a *ClaimError
// naming the claim: service when it is not a JSON object, typ when a
// request has none.

// ErrWrongProvider: the business claims name another provider (403).
// Decode returns it, unwrapped, with the request decoded as far as it
// could be.
var ErrWrongProvider = errors.New("claims: the callback names another provider")

// ClaimError locates an error of the registered claims. Claim is the
// top-level claim name ("exp", "iat", "typ", "service", or "" for the whole
// object); Path, when set, is the RFC 6901 pointer of the offending value
// inside the claims ("/service/payoutID"); Err is one of the sentinel
// errors above. It never holds the claim's value.
type ClaimError struct {
	Claim string
	Path  string
	Err   error
}

// Error implements error: the message of a ClaimError.
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

// FieldErrors are the business claims that are missing or malformed, each
// with a JSON Pointer into the claims, in the endpoint's order of claims.
type FieldErrors []problem.FieldError

// Error implements error: the message of a FieldErrors.
func (e FieldErrors) Error() string {
	return fmt.Sprintf("claims: %d business claims are missing or malformed", len(e))
}
