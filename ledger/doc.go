// Package ledger is the adapter's domain: money, accounts, instruments,
// adjustments from the core banking system, credits of paid requests
// (CreditRequest, CreditParams), the journal that records every movement
// of a balance and its read types, the answers of the decision tables
// (Answer, Decision, the outcome and reason constants), reconciliation's
// findings (Finding, the one declaration of a finding), the error codes
// every layer speaks, and the invariants below. It imports no database
// driver: package store is the boundary that reads and writes these types
// in Postgres, and the decisions themselves run there, one server-side
// function per file: schema/functions/cb_credit.sql (contract §2.6) and
// schema/functions/ledger_adjust.sql here; cb_authorize.sql,
// cb_capture.sql, cb_release.sql and hold_settle.sql for holds (reserve,
// then capture or release), described in package holds.
//
// # Model
//
// An account belongs to a customer (ownerExternalID, the service's
// externalID of its owner) and has one currency. It carries:
//
//	balance    the money in it: the sum of its journal rows
//	held       the money reserved by holds that are still held
//	available  balance - held: what a new hold or a debit may take
//
// Every currency has two system accounts, created with its first customer
// account: settlement:<CUR> (the other side of every capture and credit:
// money owed to or by the payments service) and core:<CUR> (the other side
// of adjustments: money that entered or left through the core banking
// system). A system account stores no balance: its balance is derived from
// the journal (view account_balances), so captures and credits of many
// senders never queue on one hot row.
//
// The journal is one row per transfer (table journal): a customer account,
// the system account on the other side (contra_account_id), one currency
// and one signed amount, positive when the customer account is credited.
// Its two entries (views journal_entries and journal_transactions) are the
// two sides of that row, so a transaction sums to zero by construction.
// Movements:
//
//	adjustment +x   account +x   core:<CUR> -x
//	capture of x    account -x   settlement:<CUR> +x   (and held -x)
//	credit of x     account +x   settlement:<CUR> -x
//	hold of x       no row; held +x (release: held -x)
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
// parsed and validated (Money.UnmarshalJSON, ParseAmount) against the ISO 4217
// minor units of their currency (contract §2.2); never a float.
//
// # Invariants
//
// Each holds after every committed transaction. Each is enforced by the
// database itself (a raw SQL statement that would break it fails: ledger
// TestDatabaseGuards tries them), and checked a second time, from the
// committed tables alone, by the set-based queries of store's
// CheckInvariants, which tests run after every concurrent workload and
// reconciliation runs on every pass.
//
// I1. A customer account's balance equals the sum of its journal rows; its
// held equals the sum of its holds that are still held; its available
// (balance - held) is never negative. A system account stores no balance.
// Enforced by: the functions move balance only in the statement that
// writes the journal row, and held only with a hold or its settlement;
// CHECK accounts_available_nonnegative, accounts_held_nonnegative and
// accounts_system_balance_check; cb_authorize locks the account row and
// checks available before held grows. The holds still held are also
// listed in open_holds (written by the statements that place and settle a
// hold), which the metrics and the listing of held holds read instead of
// all of history. Checked by balance_drift, held_drift (which also
// compares open_holds with the holds without a settlement),
// journal_account_mismatch, negative_available. Tested by holds
// TestConcurrentPlaceNeverOvercommits and TestRandomizedWorkload.
//
// I2. Every journal transaction sums to zero, per currency.
// Enforced by construction: a row is both entries; CHECK
// journal_contra_check makes the other side the system account of the
// row's own currency (core for adjustments, settlement for the rest) and
// journal_amount_nonzero refuses empty rows; the journal is append-only
// (triggers journal_append_only, journal_no_truncate) and the entry views
// cannot be written. Checked by unbalanced_transaction. Tested by ledger
// TestDatabaseGuards (UnbalancedTransactionCannotBeWritten,
// JournalIsAppendOnly) and reconciliation
// TestReconcilerInvariantBreachesAreCritical (UnbalancedTransaction: with
// journal_contra_check dropped, the check reports the row).
//
// I3. A hold ends in at most one of captured or released and never leaves
// it; a captured hold has exactly one capture transaction, and every
// capture transaction belongs to exactly one captured hold.
// Enforced by: holds and hold_settlements are append-only
// (holds_append_only, hold_settlements_append_only, no truncate); the
// primary key hold_settlements_pkey lets a hold end once;
// hold_settlements_state_check ties a capture to its journal transaction
// and a release to none; a second settlement of one hold waits on the
// first's entry of that key and then finds it (schema/functions/hold_settle.sql).
// Checked by hold_journal_mismatch. Tested by holds
// TestConcurrentCaptureAndRelease.
//
// I4. One effect per idempotency key per endpoint, and one hold per
// payoutID.
// Enforced by: the primary keys of the four callback tables (scope, key)
// and of adjustments, written once with the answer in the transaction of
// the effect, behind a transaction-scoped advisory lock of the key so
// that a concurrent duplicate waits and then reads the first's answer;
// holds_payout_id_key. Checked by duplicate_effect. Tested by callbacks
// TestConcurrentSameKeys and holds TestConcurrentSameKey.
//
// I5. A payment request (requestID) is credited at most once.
// Enforced by: credits_pkey, behind the advisory lock of the request;
// cb_credit answers the first creditReference to any later credit of the
// same requestID (contract §2.6 row 2). Checked by duplicate_credit. Tested by
// ledger TestCreditTable and TestSameRequestOtherKeyWhileFirstUncommitted.
//
// I6. All balances of a currency sum to zero.
// Follows from I1 and I2; checked directly by currency_imbalance over both
// the journal and the stored customer balances. Tested by ledger
// TestInvariantChecksDetect (a balance raised behind the functions' backs
// is reported as currency_imbalance) and holds TestRandomizedWorkload
// (after the concurrent workload, no check reports anything).
//
// Links between tables (a hold's account, a journal row's account) are not
// foreign keys on the hot tables: each cost a trigger, a lookup and a row
// lock per write. The functions write only rows they have read, accounts
// are never deleted (accounts_no_delete) and their identity never changes
// (accounts_immutable); journal_account_mismatch, held_drift and
// hold_journal_mismatch check every link from the outside.
//
// # Transactions
//
// Each callback is one statement, committed on its own (store.DB): READ
// COMMITTED, bounded by the request's deadline. At the deadline the driver
// sends the server a cancel request and waits for its answer, so a 408
// ("nothing was applied") is given only when the server confirms the
// statement was cancelled and rolled back; when it does not answer in
// time the outcome is unknown and the answer is 503 (the retry reads the
// stored answer). Serialization failures and deadlocks are retried by one
// bounded policy. Locks are taken in one order: advisory locks (key
// scope, then payout or payment request), then the customer account row,
// then the settlement's key.
package ledger
