// Package ledger is the adapter's double-entry ledger on Postgres: money,
// accounts, instruments, adjustments from the core banking system, credits
// of paid requests, and the journal that records every movement of a
// balance. Holds (reserve, then capture or release) are in package holds,
// on top of this one.
//
// # Model
//
// An account belongs to a customer (ownerExternalID, the service's
// externalID of its owner) and has one currency. It carries:
//
//	balance    the money in it: the sum of its journal entries
//	held       the money reserved by holds that are still held
//	available  balance - held: what a new hold or a debit may take
//
// Every currency has two system accounts, created with its first customer
// account: settlement:<CUR> (the other side of every capture and credit:
// money owed to or by the payments service) and core:<CUR> (the other side
// of adjustments: money that entered or left through the core banking
// system). Their balances are split over shard rows (table account_shards)
// so that captures and credits from many senders do not queue on one row.
//
// A journal transaction is a set of entries, each an amount on one
// account (positive raises its balance). Movements:
//
//	adjustment +x   core:<CUR> -x   account +x
//	capture of x    account -x      settlement:<CUR> +x   (and held -x)
//	credit of x     settlement -x   account +x
//	hold of x       no entry; held +x (release: held -x)
//
// Example: open an account, adjust in 100.00, place a hold of 30.00 and
// capture it:
//
//	                    balance   held   available   settlement   core
//	adjust +100.00       100.00   0.00      100.00         0.00  -100.00
//	hold 30.00           100.00  30.00       70.00         0.00  -100.00
//	capture              70.00    0.00       70.00        30.00  -100.00
//
// Money is decimal.Decimal from the wire to NUMERIC and back; amounts are
// parsed and validated by ParseMoney and ParseAmount against the ISO 4217
// minor units of their currency (design 2.2); never a float.
//
// # Invariants
//
// Each holds after every committed transaction. Each is enforced in the
// database, backed by the Go code, and checked a third time, from the
// committed tables alone, by CheckInvariants (run by tests after every
// concurrent workload, and by reconciliation).
//
// I1. An account's balance equals the sum of its journal entries; its held
// equals the sum of its held holds; a customer account's available
// (balance - held) is never negative.
// Enforced by: the functions of schema/migrations/002 move balance only
// together with a journal pair, and held only together with a hold's
// status; CHECK accounts_available_nonnegative and
// accounts_held_nonnegative; hold_place checks available on the locked
// account row before it grows held. Tested by holds
// TestConcurrentPlaceNeverOvercommits and ledger TestDatabaseGuards;
// checked by balance_drift, held_drift, negative_available.
//
// I2. Every journal transaction's entries sum to zero, per currency.
// Enforced by: the deferred constraint trigger journal_transaction_balanced
// (checked at commit); the foreign key journal_entries_account_fkey ties
// an entry's currency to its account's; the triggers journal_*_append_only
// forbid changing or deleting entries after the fact. Tested by
// TestDatabaseGuards; checked by unbalanced_transaction.
//
// I3. A hold ends in at most one of captured or released and never leaves
// it; a captured hold has exactly one capture transaction.
// Enforced by: the trigger holds_transition (only held -> captured and
// held -> released; identity immutable; no delete); CHECK holds_state_check;
// hold_capture and hold_release lock the hold row before deciding. Tested
// by TestConcurrentCaptureAndRelease and TestDatabaseGuards; checked by
// hold_journal_mismatch.
//
// I4. One effect per idempotency key per endpoint.
// Enforced by: primary keys of the idempotency tables (adjustments here;
// one table per callback endpoint in package callbacks), claimed with
// INSERT … ON CONFLICT DO NOTHING in the transaction of the effect; one
// hold per payoutID (holds_payout_id_key). Checked by duplicate_effect.
//
// I5. A requestID is credited at most once.
// Enforced by: the primary key credits_pkey, claimed before the journal is
// written; ledger_credit answers the first creditReference to any later
// credit of the same requestID. Tested by TestCredit; checked by
// duplicate_credit.
//
// I6. All balances of a currency sum to zero.
// Follows from I2 and I1 (every entry has its opposite in the same
// currency, and balances are sums of entries); checked directly by
// currency_imbalance over both the journal and the stored balances.
//
// # Transactions
//
// Each exported Store method is one transaction (InTx: READ COMMITTED,
// bounded retry of serialization failures and deadlocks). Functions that
// take a DBTX (Credit, GetAccount, CheckInvariants) never begin or commit,
// so a caller composes them into its own transaction. Locks are taken in
// one order: the customer account row, then the hold row, then system
// shard rows.
package ledger
