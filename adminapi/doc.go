// Package adminapi is the admin API of ledgerd (contract §4): its wire
// types, declared once and shared by the server (package admin) and every
// client, and a Client shaped like go-github's.
//
// # Wire types
//
// Every request and answer body of the /v1 routes is a struct here:
// Account, AccountCreateRequest, AccountUpdateRequest, AccountList,
// AdjustmentRequest, Adjustment, Instrument, Hold, HoldList, JournalEntry,
// JournalTransaction, JournalEntryList, JournalTransactionList,
// SigningSecret, SigningSecretList, SigningSecretRequest,
// SigningSecretCreated, KeyringRekeyRequest, KeyringRekey,
// RemainingSecret, ReconciliationRunRequest, ReconciliationRun,
// TokenCreateRequest, Token, TokenCreated, TokenList, AuditRecord,
// AuditList, PendingAdjustment, PendingAdjustmentList,
// AdjustmentDecisionRequest, and the problem body, Error; a run's findings are ledger.Finding, the one
// declaration of a finding. A statement (CSV or camt.053 XML) is written as
// it comes to an io.Writer (Accounts.Statement). Amounts are Amount: a
// JSON string written with the account currency's minor units ("100.00",
// "-5.25", "100" for JPY), read as a decimal.Decimal through
// Amount.Decimal. Hold times are Timestamp (UTC, microseconds).
//
// The package imports no database code (of this module only package
// ledger, the domain), so a client of the admin API does not link pgx.
//
// # Client
//
// NewClient(baseURL, opts...) returns a Client whose services hang off it:
//
//	c, err := adminapi.NewClient("http://127.0.0.1:8081", adminapi.WithToken(token))
//	acct, resp, err := c.Accounts.Get(ctx, "acc-alice")
//	for h, err := range c.Holds.ListIter(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld}) { … }
//
// Every method takes a context and returns the decoded answer, the
// *Response and an error. The base URL may carry a path prefix
// (https://ops.example/ledger/); IDs are path-escaped. The client never
// retries: admin writes are either idempotent by key (adjustments) or
// answer a conflict when repeated, and the caller knows which it wants.
//
// # Errors
//
// A non-2xx answer is an *Error carrying the problem+json body (RFC 9457):
// Status, Type, Title, Detail and Errors (each with a JSON Pointer into the
// request). Test it with errors.Is against a status sentinel
// (ErrUnauthorized, ErrNotFound, …) or a problem-type sentinel
// (ErrAccountNotFound, ErrAccountExists, …), or take it with errors.As.
// CheckResponse does the decoding for callers with their own requests.
package adminapi
