// Package provider is a client of the payments service's provider API: the
// endpoints a bank calls to register participants, mint sender tokens,
// manage limits, work the review queue, register funding sources, rotate
// signing secrets and set its short name.
//
// # Shape
//
// The client follows go-github. NewClient builds a Client for one provider
// account (WithProviderID) and API key (WithAPIKey, sent as HTTP Basic on
// every request); each resource is a service on it:
//
//	c.Participants    register, read, Ensure, Await the signup check
//	c.Tokens          mint sender tokens (API key or participant login)
//	c.LimitGroups     groups, their versions and members
//	c.Limits          participant overrides and the provider policy
//	c.Reviews         the manual review queue
//	c.Payments        a participant's payments
//	c.FundingSources  cards and bank accounts of participants
//	c.SigningSecrets  the secrets that encrypt ledger callbacks
//	c.Provider        the provider record (short name)
//
// Every method is (ctx, …) (*T, *Response, error). Response wraps the
// http.Response (body read and closed) with NextCursor and HasMore of list
// calls, the IdempotencyKey a call sent, and how many Attempts it took. Path
// IDs are escaped; wherever a path takes a participant, its participantID or
// the bank's externalID works.
//
// # Versions
//
// Every request carries X-Service-Version: DefaultVersion (v2026.10.00)
// unless WithVersion says otherwise; WithRequestVersion overrides one call.
// SigningSecrets.Create reads both bodies: {signingSecret} from v2026.10.00,
// the bare secret before.
//
// # Errors
//
// Any non-2xx answer is an *Error: the RFC 9457 problem (Type, Title,
// Status, Detail, Errors with JSON Pointers, and Code), or just the Status
// when the service sends no body (401, 403 and 404 of registration and
// minting). Test errors with errors.Is against the sentinels: ErrNotFound,
// ErrForbidden, ErrUnauthorized, ErrBadRequest, ErrValidation, ErrConflict,
// ErrRateLimited, ErrServer, and for 409 codes ErrVersionConflict,
// ErrIdempotencyKeyReused and ErrIdempotencyRequestInProgress. Registering an
// externalID twice is *AlreadyRegisteredError (ErrAlreadyRegistered).
//
// # Updates with absent, null and value
//
// LimitGroupUpdate and OverrideUpdate use Field[T] (oapi-codegen's
// nullable.Nullable): the zero value is left out of the JSON (the service
// keeps the field), Null[T]() sends null (clear, inherit), Value(v) sends v.
//
// # Pages
//
// List methods return one page (ListOptions: Cursor, Limit 1 to 100, checked
// before sending); ListIter methods return an iter.Seq2 over every item of
// every page, following nextCursor while hasMore:
//
//	for g, err := range c.LimitGroups.ListIter(ctx, nil) { … }
//
// # Retries
//
// A call is retried only when sending it twice cannot act twice: GET, and
// the writes that carry an idempotency key (participant registration with
// Idempotency-Key, signing-secret creation with X-Idempotency-Key; the key is
// generated as a UUID unless WithIdempotencyKey gives one and is reused on
// every attempt). Signing-secret creation is retried only from v2026.10.00:
// before it (or with no X-Service-Version) the service is not bound to honor
// X-Idempotency-Key, so the key is sent but the call is not repeated.
// Retries happen on 429, 5xx and transport errors, at most
// RetryPolicy.MaxAttempts in all, after a full-jitter exponential backoff or
// the server's Retry-After, and stop when the context ends.
//
// # Money
//
// Money is decimal.Decimal with its currency, sent as a string with the
// currency's decimal places ("12.50"), never a float. An amount with more
// places than its currency has fails to encode rather than being rounded.
//
// # Testing
//
// Package provider/providertest is an in-memory fake of the API, served over
// real HTTP, with a conformance suite that also runs against a real sandbox.
package provider
