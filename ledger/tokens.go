package ledger

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Admin tokens (table admin_tokens): who may call the admin API, and
// with which scopes. Only a token's SHA-256 is stored.

// The scopes of the admin API: each route needs one (admin's route
// table says which).
const (
	ScopeRead    = "read"    // accounts, holds, the journal, statements, adjustments awaiting approval
	ScopeOperate = "operate" // accounts, instruments, reconciliation runs and acknowledgements
	ScopeAdjust  = "adjust"  // adjustments
	ScopeApprove = "approve" // approving and rejecting adjustments under dual control
	ScopeSecrets = "secrets" // signing secrets, the KEK rekey
	ScopeAdmin   = "admin"   // tokens
	ScopeAudit   = "audit"   // reading the audit trail
	ScopeMetrics = "metrics" // /metrics, where it needs a token
)

// Scopes returns every scope, in the order of the documentation.
func Scopes() []string {
	return []string{ScopeRead, ScopeOperate, ScopeAdjust, ScopeApprove, ScopeSecrets, ScopeAdmin, ScopeAudit, ScopeMetrics}
}

// The actors that are no token of admin_tokens.
const (
	// BreakGlassID is the actor of LEDGER_ADMIN_TOKEN, which has every
	// scope; BreakGlassName is its name in the audit trail.
	BreakGlassID   = "break-glass"
	BreakGlassName = "LEDGER_ADMIN_TOKEN"
	// AnonymousID is the actor of a request without a token to an admin
	// API that requires none (a loopback listener without
	// LEDGER_ADMIN_TOKEN).
	AnonymousID = "anonymous"
	// UnauthenticatedID is the actor of a refused request whose token (if
	// any) named no one.
	UnauthenticatedID = "unauthenticated"
)

// Actor is who makes an admin request.
type Actor struct {
	ID, Name string
	Scopes   []string
}

// Can reports whether the actor has the scope.
func (a Actor) Can(scope string) bool { return scope == "" || slices.Contains(a.Scopes, scope) }

// TokenPrefix starts every admin token, so that a secret scanner (or a
// person) recognises one in a log or a commit.
const TokenPrefix = "lat_"

// NewToken returns a fresh admin token: TokenPrefix and 256 random bits,
// base64url.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// TokenHash is what admin_tokens keeps of a token: its SHA-256. A token
// is 256 random bits, so the hash needs neither salt nor stretching, and a
// lookup by hash needs no constant-time compare.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// AdminToken is a named token, without its value.
type AdminToken struct {
	TokenID   string
	Name      string
	Scopes    []string
	CreatedOn time.Time
	CreatedBy string
	ExpiresOn *time.Time
	RevokedOn *time.Time
}

// NewAdminToken is what creating a token stores.
type NewAdminToken struct {
	TokenID   string // tok_ and 128 random bits (NewReference)
	Name      string
	Scopes    []string
	Hash      []byte // TokenHash of the token
	CreatedBy string // the actor's ID
	CreatedOn time.Time
	ExpiresOn *time.Time
}

var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// ValidateNewAdminToken checks a new token's name, scopes and expiry.
func ValidateNewAdminToken(t NewAdminToken) error {
	switch {
	case !tokenName.MatchString(t.Name):
		return Invalid("/name", "name must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
	case t.Name == BreakGlassName || t.Name == AnonymousID || t.Name == UnauthenticatedID || t.Name == BreakGlassID:
		return Invalid("/name", "name %s is reserved", t.Name)
	case len(t.Scopes) == 0:
		return Invalid("/scopes", "scopes must list at least one of %v", Scopes())
	case t.ExpiresOn != nil && !t.ExpiresOn.After(t.CreatedOn):
		return Invalid("/expiresOn", "expiresOn must be in the future")
	}
	for i, s := range t.Scopes {
		if !slices.Contains(Scopes(), s) {
			return Invalid("/scopes/"+strconv.Itoa(i), "unknown scope %q (known: %v)", s, Scopes())
		}
		if slices.Contains(t.Scopes[:i], s) {
			return Invalid("/scopes/"+strconv.Itoa(i), "scope %s is given twice", s)
		}
	}
	return nil
}

// Token errors.
var (
	ErrTokenNotFound  = &Error{Code: CodeNotFound, Slug: "token-not-found", Message: "admin token not found"}
	ErrTokenNameTaken = &Error{Code: CodeConflict, Slug: "token-name-taken", Message: "a live admin token has this name: revoke it first, or choose another"}
)
