// Package admin serves the adapter's admin API (contract §4) on the
// admin listener: accounts, adjustments, instruments and holds; the ledger
// read back (accounts a page at a time, the journal as transactions and
// entries, statements as CSV or camt.053); signing secrets and
// reconciliation when configured; and the API's OpenAPI 3.1 description
// at /openapi.json (openapi.yaml, held to the routes by TestOpenAPI).
//
// Bodies are JSON objects decoded strictly: unknown fields, wrong JSON
// types, trailing data, a member given twice, strings that encoding/json
// would decode inexactly (a lone or reversed surrogate escape, bytes that
// are not UTF-8) or that hold NUL, and bodies over 64 KiB are refused with
// 400 and a problem+json body whose errors point at the field. Path and
// query values are checked the same way before any handler runs. Amounts are decimal
// strings in the account's currency, formatted with its minor units.
// Every error is application/problem+json; nothing is half-applied,
// because each write is one store transaction.
//
// Every /v1 route needs "Authorization: Bearer <token>" whose token has
// the scope routes.go's route table gives the route: a named token
// (/v1/tokens, looked up by its SHA-256 on every request) or
// Config.Token, the break-glass token with every scope; without
// Config.Token a request without a token is the anonymous actor. /metrics
// needs the scope metrics unless Config.PublicMetrics is set; /healthz,
// /readyz and /openapi.json stay open.
//
// Every write, applied or refused, and every 401 and 403 is a record of
// the audit trail (audit.go): a write of one transaction has its record
// appended in that transaction (AuditTrail.Audited), so that the effect
// and its record commit together. Adjustments over Config.ApprovalOver
// wait for a second actor (adjustments.go; the decision is the database's
// ledger_adjustment_decide).
package admin
