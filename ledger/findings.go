package ledger

import "time"

// What reconciliation finds and keeps (tables reconciliation_runs,
// reconciliation_findings, reconciliation_issues): the findings of a run,
// each tied to an issue that lives across runs until a run no longer sees
// it, and what one run reads from one consistent snapshot.

// Finding is one discrepancy a reconciliation run found: an invariant
// breach (I1 to I6, from the committed tables), a stale or orphaned hold,
// or a disagreement with the payments service. It is the one declaration
// of a finding: reconciliation produces it, the store records it, and the
// admin API and the command line show it as it is.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"` // "warning" or "critical"
	// Subject is what the finding is about: an account, a hold reference,
	// a journal transaction, a requestID, a currency or a participant.
	Subject string `json:"subject"`
	Detail  string `json:"detail"`
	// Fixed is true when this run repaired it (missed_capture and
	// missed_release with fix only).
	Fixed bool `json:"fixed"`
	// FindingID identifies the issue (kind and subject) across runs: the
	// ID to acknowledge it by. New: this run is the first to see it since
	// it was last resolved. Acknowledged: an operator acknowledged it; it
	// no longer counts towards the run's status.
	FindingID    string `json:"findingID,omitempty"`
	New          bool   `json:"new"`
	Acknowledged bool   `json:"acknowledged"`
}

// Issue is a finding's state across runs.
type Issue struct {
	FindingID, Kind, Subject string
	FirstRunID, LastRunID    string
	FirstSeenOn, LastSeenOn  time.Time
	AcknowledgedOn           *time.Time
	AckNote                  string
}

// Subject is one row a reconciliation check returns (a stale hold, an
// orphaned capture or release, a duplicate credit attempt): Subject is
// what the row is about, as Finding.Subject is, and Detail what was found.
type Subject struct {
	Subject, Detail string
}

// ReconcileSnapshot is what one reconciliation reads, from one consistent
// snapshot.
type ReconcileSnapshot struct {
	Violations              []Violation
	StaleHolds              []Subject
	OrphanCaptures          []Subject
	OrphanReleases          []Subject
	DuplicateCreditAttempts []Subject
	// AuditChain: the breaks of the audit trail's hash chain.
	AuditChain []Subject
	// CreditConflicts: the requests for payment credited for one amount
	// and asked again for another (credit row 2a), by requestID.
	CreditConflicts []Subject
	// Candidates: every held hold, and captured and released holds placed
	// since the cutoff, ordered by owner (when asked for). Of a full run,
	// only the held holds placed before the cutoff: the others are read a
	// page of owners at a time, as of Snapshot (CandidatesPage).
	Candidates []Candidate
	// Snapshot names the snapshot read (opaque): a CandidatesPage of it
	// reads the candidates as this snapshot saw them.
	Snapshot string
	// Recipients: the owners of destination instruments, each with the
	// requestIDs credited to their accounts since the credit cutoff (when
	// asked for).
	Recipients map[string]map[string]bool
	// Timings: how long each query of the snapshot took, in the order
	// run (the invariants by kind, then the other checks).
	Timings []Timing
	// Checkpoint is the checkpoint written (CheckpointID empty: none).
	Checkpoint Checkpoint
}

// Timing is how long one query of a reconciliation took.
type Timing struct {
	// Query is the invariant's kind (Invariant set) or the check's name.
	Query, Invariant string
	Took             time.Duration
}

// ReconcileParams shape one reconciliation's snapshot.
type ReconcileParams struct {
	Now time.Time
	// StaleBefore: a hold held since before it is stale.
	StaleBefore time.Time
	// ComparedSince: captured and released holds placed since it are
	// compared with the service (held holds always are).
	ComparedSince time.Time
	// CreditsSince: credits since it are compared with the service's
	// completed requests for payment.
	CreditsSince time.Time
	// WithProvider reads the candidates and recipients.
	WithProvider bool
	// Timeout bounds each statement (0: no bound).
	Timeout time.Duration
	// From is the checkpoint an incremental run starts from: the checks
	// read only what its snapshot did not see. Empty: a full run.
	From string
	// RunID names the run; with Checkpoint set, the snapshot writes a
	// checkpoint of it when its invariant checks find nothing.
	RunID      string
	Checkpoint bool
}

// Checkpoint is what a reconciliation run proved at its snapshot: every
// account's balance and held (contract §5).
type Checkpoint struct {
	CheckpointID string
	RunID        string
	TakenOn      time.Time
	// Full: written by a full run; otherwise From is the checkpoint the
	// run started from.
	Full bool
	From string
	// Accounts is how many account states it wrote.
	Accounts int64
}

// CheckpointState is where the next reconciliation run may start.
type CheckpointState struct {
	// Last is the last checkpoint (CheckpointID empty: none).
	Last Checkpoint
	// LastFullOn is when the last full run's checkpoint was taken (zero:
	// none).
	LastFullOn time.Time
	// OpenInvariantIssues: an issue of an invariant kind is unresolved.
	OpenInvariantIssues bool
}

// FinishParams complete a run.
type FinishParams struct {
	RunID      string
	FinishedOn time.Time
	Findings   []Finding
	// Resolve lists the kinds this run checked in full: their issues that
	// it did not see are resolved.
	Resolve []string
	// Status computes the run's status from its findings, once their
	// issues' state (New, Acknowledged) is known.
	Status func([]Finding) string
	// Full: the run read all of history; otherwise it started from
	// checkpoint From.
	Full bool
	From string
}

// LastRun sums up the last finished reconciliation run, for the
// reconciliation metrics.
type LastRun struct {
	// FinishedOn is when it finished; zero when no run has finished.
	FinishedOn time.Time
	// Open counts its findings by severity that are neither fixed nor
	// acknowledged (as of now: an acknowledgement after the run counts).
	Open map[string]int
}

// CandidatesPage asks for the candidates of one page of owners, as a
// reconciliation's snapshot saw them: the holds placed since Since of the
// owners after After (every owner from the first when First) up to and
// including Through (to the last when empty), with their status then.
type CandidatesPage struct {
	// Snapshot is ReconcileSnapshot.Snapshot.
	Snapshot string
	After    string
	First    bool
	Through  string
	Since    time.Time
}

// Candidate is a hold to compare with the service's view of its payout:
// only what the comparison needs, since a run holds a page of owners'
// candidates at a time (a run from a checkpoint, every one; a list's
// payouts' holds are read again, HoldsByPayout). Owner and
// Status share one string per value.
type Candidate struct {
	HoldReference string
	PayoutID      string
	Owner         string
	Status        string
	PlacedAt      time.Time
}
