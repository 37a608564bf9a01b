// Package providertest is an in-memory fake of the payments service's
// provider API, for tests and the servicesim sandbox, in the manner of
// net/http/httptest: a small real implementation served over real HTTP.
//
//	srv := providertest.NewServer(providertest.WithClock(clock))
//	defer srv.Close()
//	id, secret := srv.APIKey()
//	c, _ := provider.NewClient(srv.URL, provider.WithProviderID(srv.ProviderID()), provider.WithAPIKey(id, secret))
//
// Service is the http.Handler (mount it anywhere); Server serves one on a
// loopback listener. Both are safe for concurrent use. Under a ManualClock
// the fake is deterministic: every time rule reads the clock and IDs are
// sequential.
//
// # What it implements
//
// Every endpoint of the spec's "Endpoints" section, with its rules:
// pagination (limit 1 to 100, default 25, opaque cursors, nextCursor absent
// on the last page, hasMore always, empty lists as []) and its 400s; HTTP
// Basic API keys scoped to one provider (401 bodiless for bad or missing
// credentials, 403 bodiless when the path names another provider);
// participants (Idempotency-Key, 409 on a registered externalID, pending
// then active or denied by the signup check, disabled by an operator call,
// participantID or externalID in paths); sender tokens (Basic only, the
// transfers.write scope, bodiless 400/401/403/404, Cache-Control: no-store
// and Pragma: no-cache, expires_in 3600, no refresh_token); limit groups
// (versions, 409 version_conflict, absent/null/value PATCH, idempotent
// membership); overrides (absent/null/value PUT, support overrides, version
// claims); the provider policy and the resolution order (EffectiveLimits);
// reviews (newest first, status filter, 404 across providers, 409 on
// re-resolving, rejecting the last pending review of an authorized or
// accepted payout cancels it and records a release callback); the payments
// list; funding sources (idempotent create that reactivates, immutable
// fields, 404 across providers, 422 validation); signing secrets (the body
// by version, X-Idempotency-Key echoed, 400 when missing or malformed, 409
// idempotency-key-reused within 24 hours without the plaintext, 409
// idempotency-request-in-progress, a new secret after 24 hours, several
// active); shortName validation; X-Service-Version.
//
// # Test controls
//
//   - Seeding: AddProvider, AddAPIKey (e.g. without the scope),
//     SetParticipantStatus, ParticipantLogin, SetPolicy, DisableLimitGroup,
//     SeedPayout, SetPayoutStatus, SeedReview, SeedPayment,
//     RemoveFundingSource, RevokeSigningSecret.
//   - Inspection: Participant, Tokens, LimitGroup, Override, EffectiveLimits,
//     Payout, Review, Releases, FundingSource, SigningSecrets (with values),
//     ShortName, Requests and LastRequest (method, path, headers, exact body).
//   - Injected failures: InjectFailure answers the next requests of a route
//     with a status (and Retry-After) or drops the connection.
//   - Clock: WithClock(NewManualClock(t)); Advance moves the signup check,
//     override expiry and the 24-hour key window.
//   - GateSigningSecretCreates holds creates in flight to observe the
//     in-progress rule.
//   - WithReleaseHook reports release callbacks as they happen (servicesim's
//     driver can forward them to ledgerd).
//
// # Where the spec says "not shown"
//
// The fake makes these choices; a real service may differ, and the client
// reads tolerantly where it can:
//
//   - Participant create answers 201 {participantID, status: pending}; GET
//     answers {participantID, externalID, status}. A replayed Idempotency-Key
//     with the same body answers the first 201; with another body 400; a
//     key that is not a UUID 400; a request without the header is served
//     (with no replay protection). Registration validation failures are 400
//     with pointers.
//   - Token minting for an externalID registered only with another provider
//     is 403, per Authentication rule 7 ("a participant belonging to
//     another provider" returns 403); 404 is for an externalID no provider
//     has registered. Token errors carry no body, 400 included (a
//     malformed X-Service-Version aside, which is a problem on every route).
//   - The signup check is a SignupCheck option; the default clears at once
//     and denies externalIDs starting "deny-".
//   - Disabling a participant is SetParticipantStatus(..., StatusDisabled).
//   - A participant login is HTTP Basic with credentials from
//     ParticipantLogin; bearer tokens are not accepted on provider endpoints.
//   - Limit group PATCH and override PUT without expectedVersionID update
//     unconditionally (the override PUT creates the override if there is
//     none). With one, a stale version, or any version when there is no
//     override yet, is 409 version_conflict.
//   - A support override is one carrying reason or reference: it needs both,
//     and expiresOn after now and within 24 hours (else 422).
//   - Override DELETE answers 204, also when there is none. The policy is
//     404 until SetPolicy. Several groups combine by taking the tightest
//     ceiling per dimension; an expired override or disabled group does not
//     count. The platform maximum is WithPlatformMaximum (none by default).
//   - Limit amounts must be USD with 2 decimal places and a plain
//     non-negative decimal; dailySendCount must not be negative (else 422).
//   - Review GET answers {review} with the full payout inline; resolve answers
//     200 {review}; an unknown resolution is 400.
//   - Payment list items of seeded payouts have type "payout" and direction
//     "sent"; requests for payment exist only through SeedPayment. A page
//     costs its own items, not every payout the fake holds (each list is
//     kept sorted until a seed changes it), so a benchmark can list
//     hundreds of thousands of payouts page by page as a client would.
//   - Funding source create answers 201 also on a resend (display fields are
//     not changed by it); the same fundingType and providerSourceID on
//     another participant of the provider is 409. Removal is
//     RemoveFundingSource.
//   - Before v2026.10.00 X-Idempotency-Key is optional on signing-secret
//     create; when sent it is honored as from v2026.10.00. A key is 1 to 255
//     visible ASCII characters. The default version is DefaultVersion.
//     Revocation is RevokeSigningSecret.
//   - A malformed X-Service-Version is 400. Every problem body carries type
//     ({base_url}/errors#<slug>), title, status and detail; validation
//     problems (400 of registration and shortName, 422 elsewhere) add
//     errors[{pointer, detail}]. 401 and 403 of every endpoint, and 404 of
//     participant reads, have no body. shortName updates reject other
//     fields.
//
// # Conformance
//
// RunConformance runs the same raw-HTTP scenarios against any Target: the
// fake (Server.Target, all hooks wired) in CI, and a real sandbox given
// credentials, skipping what needs hooks a sandbox lacks.
package providertest
