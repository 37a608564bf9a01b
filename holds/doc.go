// Package holds is the two-phase part of the ledger: a hold reserves funds
// on a sender's account for a payout (authorize), and then ends in exactly
// one of two ways: capture (the reserved funds leave the account for
// settlement) or release (the reservation is dropped).
//
//	none --Place--> held --Capture--> captured
//	                 \---Release--> released
//
// Place, Capture and Release decide design sections 2.3 to 2.5 (every row
// after the idempotency row, which belongs to the callbacks package) and
// apply the effect, each as one statement running a server-side function
// (schema/migrations/002_ledger_functions.sql). They take a ledger.DBTX and
// never commit, so the callbacks package composes "claim the idempotency
// key, decide, apply, store the answer" into one transaction.
//
// # Constraints
//
//   - One hold per payoutID (holds_payout_id_key).
//   - A hold's amount is positive, in its account's currency
//     (holds_amount_positive, holds_account_fkey).
//   - Only held -> captured and held -> released; a hold's identity never
//     changes and a hold is never deleted (trigger holds_transition).
//   - Placing a hold never takes available below zero: the account row is
//     locked and checked before held grows (accounts_available_nonnegative
//     backs it up).
//   - Locks are taken in one order: the account row, then the hold row,
//     then system-account shard rows; concurrent operations on the same
//     account or hold queue instead of deadlocking.
//
// # Example
//
// An account with balance 100.00 and held 0.00:
//
//	Place 30.00      balance 100.00  held 30.00  available 70.00
//	Place 80.00      denied insufficient_funds (available 70.00)
//	Capture the 30   balance  70.00  held  0.00  available 70.00; journal: account -30.00, settlement +30.00
//	Release it       failed hold_captured
package holds
