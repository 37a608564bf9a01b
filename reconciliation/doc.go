// Package reconciliation checks the ledger from outside (contract §5):
// the invariants I1 to I6 over the committed tables, the holds and orphans
// that need a human, and, when the service's provider API is configured,
// every hold against the service's own view of its payout. A run writes a
// Report and stores it; with fix it also applies the two findings that have
// one safe remedy.
//
//	r, _ := reconciliation.New(reconciliation.Config{DB: db, Provider: client})
//	report, err := r.Run(ctx, false) // from the last checkpoint, if any
//	report, err = r.RunWith(ctx, reconciliation.RunOptions{Full: true})
//
// # Findings
//
// Every finding has a kind, a severity, a subject (the account, hold,
// transaction, requestID or participant it is about), a detail for the
// operator, and fixed (true only when this run repaired it).
//
//	kind                      severity  found when
//	balance_drift             critical  I1: stored balance is not the sum of the journal
//	held_drift                critical  I1: stored held is not the sum of held holds
//	negative_available        critical  I1: a customer account's balance - held < 0
//	unbalanced_transaction    critical  I2: a journal transaction does not sum to zero
//	hold_journal_mismatch     critical  I3: a captured hold without exactly one capture entry
//	duplicate_effect          critical  I4: an adjustment transaction not matched one to one
//	duplicate_credit          critical  I5: a requestID credited more than once
//	currency_imbalance        critical  I6: a currency's balances do not sum to zero
//	capture_release_conflict  critical  the payout completed at the service, the hold is released
//	capture_cancel_conflict   critical  the payout is cancelled, expired, denied or failed, the hold captured
//	missing_credit            critical  a request for payment completed at the service, never credited here
//	payout_not_debited        critical  a payout completed or claiming at the service, no hold of it here
//	payout_not_held           critical  a payout authorized, accepted, claiming or payout_failed, its hold missing or released
//	payout_amount_mismatch    critical  a payout's amount at the service is not its hold's
//	credit_amount_mismatch    critical  a requestID credited for one amount, asked again for another (credit row 2a)
//	missed_capture            critical  the payout completed, the hold is still held (the sender not debited)
//	missed_release            warning   the payout is cancelled, expired, denied or failed, the hold is held
//	stale_hold                warning   a hold held longer than HoldMaxAge
//	orphan_capture            critical  a capture of a holdReference never issued (table orphans)
//	orphan_release            warning   a release of a holdReference never issued
//	duplicate_credit_attempt  warning   one requestID sent under several idempotency keys (credited once)
//	provider_unreachable      warning   a sender's payments list could not be read: not compared
//
// A run's status is the worst severity among its unfixed findings: clean,
// warning or critical (ledgerctl reconcile exits 0, 1 or 2 on it).
//
// # Comparison with the service
//
// Both directions: every customer of the ledger (the owners of customer
// accounts, read a page at a time) has its payments list read back to
// Config.PayoutLookback, and every payout listed is matched to its hold
// here by payoutID (HoldsByPayout): no hold for a completed or claiming
// payout is payout_not_debited, none (or a released one) for an
// authorized, accepted, claiming or payout_failed payout is
// payout_not_held, another amount is payout_amount_mismatch. The hold's
// status compared is the snapshot's; a hold placed since is left to the
// next run. A participant the service does not know (404) with no hold
// and no destination has nothing to compare.
//
// The candidates are every held hold, and every captured or released hold
// placed within HoldMaxAge (a payout completes within its 10-day expiry of
// the authorize, so an older settled hold cannot meet a new completion).
// Each customer's payments list (the account's ownerExternalID as the
// participant) is read once per run, page after page, back to the payout
// lookback or a day before the sender's oldest candidate hold, whichever
// is older; a recipient's (an owner of a destination instrument) to the
// end of the credit lookback. Up to ProviderConcurrency lists are read at a time; findings
// come out in the participants' order all the same. A payout absent from
// the list yields no finding. payout_failed is not a release: a failed
// claim keeps the hold. A participant whose list cannot be read yields
// provider_unreachable and the run goes on; a cancelled context ends the
// run with its error.
//
// # Checkpoints
//
// A run whose invariant checks find nothing writes a checkpoint (its
// snapshot, and the balance and held of every account it proved), and the
// next run starts from the last one: an incremental run (ModeIncremental)
// reads only the rows whose inserting transaction that snapshot did not
// see (recorded_xid, pg_visible_in_snapshot: a transaction that commits
// late is never skipped) and the accounts touched since, and compares with
// the service the holds held now or placed or settled since and the lists
// of their senders and of the customers credited since. A run is full
// (ModeFull) when RunOptions.Full asks, when there is no checkpoint (the
// first run), while an invariant issue is open, and when the last full
// checkpoint is older than Config.FullEvery. An incremental run resolves
// the issues of incrementalKinds only and reports the other open issues
// as last found (carry). docs/reconciliation.md, "Checkpoints", says what
// only a full run sees. After each run the checkpoints older than
// CheckpointRetention are pruned, but for the latest full one and those
// after it (the next run starts from the last) and those the kept ones
// were run from.
//
// # Cost
//
// A full run reads all of history; an incremental run costs the activity
// since its checkpoint (store's TestIncrementalQueriesReadOnlyWhatIsNew:
// no query of it scans a history table) and one pass over the accounts.
// BenchmarkReconcileFromCheckpoint measures both. Every query of a full
// run's snapshot is a sequential scan or a hash join of whole
// tables, never a subquery per row or a loop that scans a table per row
// (store's TestReconciliationQueriesAreLinear), and the comparison keys
// everything by map: a run costs a constant time per hold. It reads one
// payments page per 100 payouts of a sender, and at least one per
// participant. In memory a full run holds the candidates of one page of
// owners at a time (a hold reference and a payout ID each, owners and
// statuses shared: about 100 bytes a hold; customersPage customers a
// page), the stale holds, the recipients, the findings and the lists
// being read, and reads the holds of each list's payouts. Its snapshot
// reads only the held holds placed before HoldMaxAge (the stale ones);
// the others are read a page of owners at a time by Store.CandidatesPage,
// as the snapshot saw them (holds and settlements are append-only and
// record the transaction that inserted them, and the snapshot which
// transactions it saw), so that no transaction stays open while the
// service's lists are read: a hold placed after the snapshot is left to
// the next run, one settled after it is compared as held. That query is
// driven by the page's owners through indexes (store's
// TestCandidatesPageReadsOnlyItsOwners). A run from a checkpoint reads
// its candidates with its snapshot, all at once: the holds held now and
// those placed or settled since, bounded by the activity since.
// BenchmarkReconcile measures it (see the README for the figures); Report
// Stages says where a run's time went.
//
// # Fixes
//
// Run with fix applies missed_capture (holds.Capture) and missed_release
// (holds.Release, release_reason "reconciliation"), each in a transaction of
// its own that first locks the account row and the hold row (the ledger's
// lock order), decides on the locked state, applies, and writes a row of
// reconciliation_fixes naming the run, the hold, the reference and the
// capture's journal transaction: the journal entry of a fix is told from a
// callback's by that row. A hold that is no longer held by then (a late
// callback, a concurrent run) is left alone and the finding stays unfixed
// with the state it found; reconciliation_fixes_pkey allows one fix per
// hold ever. So fixing is idempotent and concurrent runs never apply twice.
// No other finding is ever fixed: they need a human.
//
// # Storage and schedule
//
// A run is stored in reconciliation_runs when it starts and completed,
// with its findings, its mode and the checkpoint it started from, in one
// transaction when it ends (the tables in schema/schema.sql); its
// checkpoint (reconciliation_checkpoints, reconciliation_account_states)
// by its snapshot's transaction.
//
// Start runs a reconciliation every Config.Every (0: never) until Stop.
// One run at a time across replicas, scheduled or not: a run takes the
// lease (a row of reconciliation_lease, renewed while it runs); Run
// answers *RunningError naming the run in progress, and a scheduled tick
// that finds the lease taken is skipped.
package reconciliation
