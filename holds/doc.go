// Package holds is the hold model: the two-phase part of the ledger. A hold
// reserves funds on a sender's account for a payout (authorize), and then
// ends in exactly one of two ways: capture (the reserved funds leave the
// account for settlement) or release (the reservation is dropped).
//
//	none --authorize--> held --capture--> captured
//	                     \---release--> released
//
// This package holds the hold model and its decisions' vocabulary,
// declared once: the states and transitions, the reasons of the decision
// tables (contract §2.3 to 2.5), the typed request of each decision as a
// callback's claims decode into it (AuthorizeRequest, CaptureRequest,
// ReleaseRequest, each with its fingerprint), the arguments each decision
// takes (AuthorizeParams, CaptureParams, ReleaseParams, and FixParams for
// a reconciliation's fix), and the Hold a reader sees, with its listing.
// The decisions themselves are made in one place each, in the database,
// one file per function: cb_authorize (rows 1 to 12) in
// schema/functions/cb_authorize.sql, and cb_capture and cb_release (row 1,
// schema/functions/cb_capture.sql and cb_release.sql) with hold_settle
// (rows 2 to 6, schema/functions/hold_settle.sql), called through package
// store. The tests of this package are the decision tables, row by row,
// against those functions without HTTP (authorize_test.go,
// settle_test.go), each row alone on a database of its own, asserting the
// answer and the balance, held and available amounts it leaves.
//
// # Constraints
//
//   - One hold per payoutID (holds_payout_id_key).
//   - A hold's amount is positive (holds_amount_positive), in its
//     account's currency (checked when it is placed).
//   - A hold is written once (trigger holds_append_only) and settled once:
//     one row of hold_settlements per hold (hold_settlements_pkey), itself
//     append-only. So only held -> captured and held -> released, and never
//     back (I3).
//   - Placing a hold never takes available below zero: the account row is
//     locked and checked before held grows (accounts_available_nonnegative
//     backs it up).
//   - Locks are taken in one order: advisory locks of the key and payout,
//     the account row, then the settlement's key; concurrent operations on
//     the same account or hold queue instead of deadlocking.
//
// # Example
//
// An account with balance 100.00 and held 0.00:
//
//	authorize 30.00    balance 100.00  held 30.00  available 70.00
//	authorize 80.00    denied insufficient_funds (available 70.00)
//	capture the 30     balance  70.00  held  0.00  available 70.00; journal: account -30.00, settlement +30.00
//	release it         failed hold_captured
package holds
