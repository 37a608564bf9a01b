// Package claims is the wire vocabulary of the ledger callbacks (contract
// §2.1 to 2.6): the endpoint names, the registered claims (exp, iat, typ,
// service), and the business claims of each endpoint, decoded and checked
// in one pass into the typed request its decision takes
// (holds.AuthorizeRequest, holds.CaptureRequest, holds.ReleaseRequest,
// ledger.CreditRequest). It also builds the claims of a request (the
// service's side: BuildRequest with the service object of a typed request,
// AuthorizeService, CaptureService, ReleaseService or CreditService, which
// Decode reads back as that request) and of an answer (ours: Answer and
// BuildResponse).
//
// Package envelope ends at a decrypted, verified JSON claims object; this
// package starts there. It imports no database or HTTP code, so the
// callback server (package callbacks) and the service's side (package
// callbacks/caller) speak it alike.
//
// # One pass
//
// [Decode] walks the claims once, with internal/strictjson's exact
// checker, and picks what the endpoint needs on its way:
//
//   - every string, member names included, at any depth, is exact: a \u
//     escape of a lone or reversed UTF-16 surrogate, or bytes that are not
//     UTF-8, are refused (ErrInexactString), never decoded as U+FFFD;
//   - no object, at any depth, names a member twice (ErrDuplicateMember);
//   - exp and iat are JSON numbers whose exact value is an integer in
//     int64 range (1700000000, 1.7e9 and 1700000000.0 are the same; 1.5,
//     "1700000000", 1e19 and null are refused), typ a string, service an
//     object; then exp and iat against the clock with a leeway, typ
//     against the route, service present;
//   - the endpoint's business claims, each reported with a JSON Pointer
//     into the claims (/service/payoutID, /service/amount/value), Money
//     by ledger.DecodeMoney (ISO 4217, contract §2.2);
//   - a providerID naming another provider is ErrWrongProvider (403).
//
// Errors never hold claim values: a pointer holds member names only.
package claims
