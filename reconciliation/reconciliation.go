package reconciliation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/loop"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
)

// Severities of a finding.
const (
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Statuses of a run: the worst severity among its unfixed findings.
const (
	StatusClean    = "clean"
	StatusWarning  = "warning"
	StatusCritical = "critical"
)

// Finding kinds this package produces besides ledger.CheckInvariants'
// (balance_drift, held_drift, negative_available, unbalanced_transaction,
// hold_journal_mismatch, duplicate_effect, duplicate_credit,
// currency_imbalance).
const (
	KindStaleHold              = "stale_hold"
	KindOrphanCapture          = "orphan_capture"
	KindOrphanRelease          = "orphan_release"
	KindDuplicateCreditAttempt = "duplicate_credit_attempt"
	KindMissedRelease          = "missed_release"
	KindMissedCapture          = "missed_capture"
	KindCaptureReleaseConflict = "capture_release_conflict"
	// KindCaptureCancelConflict: the hold was captured here (the sender
	// debited) while the service says the payout was cancelled, expired,
	// denied or failed: money left the account for a payout that did not
	// happen.
	KindCaptureCancelConflict = "capture_cancel_conflict"
	// KindMissingCredit: the service says a request for payment to this
	// ledger's customer completed, and the ledger has no credit of it: the
	// payer paid and the requester was never credited.
	KindMissingCredit       = "missing_credit"
	KindProviderUnreachable = "provider_unreachable"
	// KindPayoutNotDebited: the service reports a payout completed (or
	// being claimed) and there is no hold of it here: the recipient is
	// paid money the sender was never debited.
	KindPayoutNotDebited = "payout_not_debited"
	// KindPayoutNotHeld: the service reports a payout authorized,
	// accepted, claiming or payout_failed (money reserved for it) and its
	// hold here is missing or released.
	KindPayoutNotHeld = "payout_not_held"
	// KindPayoutAmountMismatch: a payout's amount at the service is not
	// its hold's here.
	KindPayoutAmountMismatch = "payout_amount_mismatch"
	// KindAuditChainBroken: a record of the admin API's audit trail was
	// edited or deleted (its hash chain no longer verifies): someone
	// changed the database behind the adapter's back.
	KindAuditChainBroken = "audit_chain_broken"
	// KindCreditAmountMismatch: the service asked for a request for
	// payment credited here to be credited again for another amount or
	// currency (answered 422 credit-amount-mismatch): it may believe the
	// other amount reached the customer.
	KindCreditAmountMismatch = "credit_amount_mismatch"
)

// warningKinds are the kinds of severity warning; every other kind, the
// invariant kinds and any kind the invariant checks may add later, is
// critical. An orphan capture is critical: the ledger never held or debited
// that money, yet the service may have paid it out (holds are never
// purged here, so a capture of an unknown hold is never one of a hold
// captured and purged). A missed capture is critical too: the service
// paid the payout out and the sender's account was never debited (a
// capture lost in a failover looks exactly so); a capture still on its way
// when the run read the hold is resolved by the next run.
var warningKinds = map[string]bool{
	KindStaleHold: true, KindOrphanRelease: true,
	KindDuplicateCreditAttempt: true, KindMissedRelease: true,
	KindProviderUnreachable: true,
}

// databaseKinds are the kinds every run checks in full from the database:
// an issue of these kinds that a run does not see is resolved.
var databaseKinds = []string{"balance_drift", "journal_account_mismatch", "held_drift", "negative_available",
	"unbalanced_transaction", "hold_journal_mismatch", "duplicate_effect", "duplicate_credit", "currency_imbalance",
	KindStaleHold, KindOrphanCapture, KindOrphanRelease, KindDuplicateCreditAttempt, KindAuditChainBroken,
	KindCreditAmountMismatch}

// invariantKinds are the kinds of the invariant checks: while an issue of
// one is open, every run is full (an incremental run could not see it
// again, nor resolve it).
var invariantKinds = databaseKinds[:9]

// incrementalKinds are the kinds an incremental run checks in full (from
// tables that do not grow with history): their issues it does not see
// are resolved. Issues of the other kinds stay open until a full run, and
// an incremental run reports them again as last found.
var incrementalKinds = []string{KindStaleHold, KindOrphanCapture, KindOrphanRelease, KindAuditChainBroken,
	KindCreditAmountMismatch}

// providerKinds are the kinds of the comparison with the service: resolved
// only by a run that compared every participant.
var providerKinds = []string{KindMissedCapture, KindMissedRelease, KindCaptureReleaseConflict,
	KindCaptureCancelConflict, KindMissingCredit, KindPayoutNotDebited, KindPayoutNotHeld, KindPayoutAmountMismatch,
	KindProviderUnreachable}

// Kinds returns every kind of finding a run reports, each once: the
// invariant checks' and the other checks' (databaseKinds), then the
// comparison's with the service (providerKinds). SeverityOf gives each
// its severity.
func Kinds() []string { return slices.Concat(databaseKinds, providerKinds) }

// SeverityOf returns the severity of a finding kind.
func SeverityOf(kind string) string {
	if warningKinds[kind] {
		return SeverityWarning
	}
	return SeverityCritical
}

// Report is the outcome of one run (contract §5).
type Report struct {
	RunID      string    `json:"runID"`
	StartedOn  time.Time `json:"startedOn"`
	FinishedOn time.Time `json:"finishedOn"`
	// Status is StatusOf(Findings).
	Status   string           `json:"status"`
	Findings []ledger.Finding `json:"findings"`
	// Stages is how long each stage of the run took, in order (logged by
	// scheduled runs; neither stored nor on the wire).
	Stages []Stage `json:"-"`
	// Mode is ModeFull or ModeIncremental.
	Mode string `json:"mode"`
	// FromCheckpoint is the checkpoint an incremental run started from.
	FromCheckpoint string `json:"fromCheckpoint,omitempty"`
	// Checkpoint is the checkpoint this run wrote: none when its invariant
	// checks found anything.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Modes of a run (contract §5).
const (
	// ModeFull: the run read all of history.
	ModeFull = "full"
	// ModeIncremental: the run read what is new since its checkpoint.
	ModeIncremental = "incremental"
)

// RunOptions shape one run.
type RunOptions struct {
	// Fix applies missed_capture and missed_release.
	Fix bool
	// Full reads all of history, whatever the checkpoints.
	Full bool
}

// Stage is how long one stage of a run took.
type Stage struct {
	// Name is one of the Stage… constants.
	Name string
	Took time.Duration
}

// The stages of a run, in order. The snapshot is StageInvariants and
// StageChecks; StageCompare and StageFix happen only with a provider (and
// fix).
const (
	StageInvariants = "invariants" // I1 to I6
	StageChecks     = "checks"     // stale holds, orphans, duplicate credit attempts, the comparison's candidates (a full run's: the stale ones)
	StageCompare    = "compare"    // the payments lists of the service (and a full run's candidates, a page at a time)
	StageFix        = "fix"
	StageStore      = "store" // the findings, as issues
)

// MarshalJSON writes findings as [] when there are none, never null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	if r.Findings == nil {
		r.Findings = []ledger.Finding{}
	}
	return json.Marshal(plain(r))
}

// StatusOf returns the worst severity among the unfixed, unacknowledged
// findings: StatusCritical, StatusWarning, or StatusClean when there is
// none.
func StatusOf(findings []ledger.Finding) string {
	status := StatusClean
	for _, f := range findings {
		if f.Fixed || f.Acknowledged {
			continue
		}
		if f.Severity == SeverityCritical {
			return StatusCritical
		}
		status = StatusWarning
	}
	return status
}

// Store is what a reconciliation needs of the ledger's database: the one
// snapshot of its checks, its customers, the candidates of a page of them
// as of the snapshot and the holds of the payouts the service lists, the
// lease of the one run in progress, the run and its findings, fixes and
// acknowledgements, and its checkpoints (*store.DB implements it).
type Store interface {
	Reconcile(ctx context.Context, p ledger.ReconcileParams) (ledger.ReconcileSnapshot, error)
	Customers(ctx context.Context, after string, limit int) ([]string, error)
	CandidatesPage(ctx context.Context, p ledger.CandidatesPage) ([]ledger.Candidate, error)
	HoldsByPayout(ctx context.Context, payoutIDs []string) (map[string]holds.Hold, error)
	AcquireLease(ctx context.Context, runID, holder string, ttl time.Duration) (ok bool, current string, err error)
	RenewLease(ctx context.Context, runID string, ttl time.Duration) error
	ReleaseLease(ctx context.Context, runID string) error
	InsertRun(ctx context.Context, runID string, startedOn time.Time, fix bool) error
	FinishRun(ctx context.Context, p ledger.FinishParams) ([]ledger.Finding, string, error)
	FixHold(ctx context.Context, p holds.FixParams) (holds.FixResult, error)
	LastCheckpoint(ctx context.Context, invariantKinds []string) (ledger.CheckpointState, error)
	PruneCheckpoints(ctx context.Context, before time.Time, limit int) (int64, error)
	OpenIssues(ctx context.Context, kinds []string) ([]ledger.Finding, error)
	AcknowledgeFinding(ctx context.Context, findingID, note string, now time.Time) (ledger.Issue, error)
}

// Config configures a Reconciler.
type Config struct {
	// DB is the ledger's database. Required.
	DB Store
	// Provider is the service's provider API; nil: holds are not compared
	// with the service.
	Provider *provider.Client
	// HoldMaxAge: a hold held longer is a stale_hold finding; released
	// holds placed within it are checked for capture_release_conflict.
	// Default 264h (LEDGER_HOLD_MAX_AGE).
	HoldMaxAge time.Duration
	// Every is the schedule of Start; 0 turns it off
	// (LEDGER_RECONCILE_EVERY). Negative is invalid.
	Every time.Duration
	// FullEvery: a run not asked to be full is full anyway when the last
	// full run's checkpoint is older (default DefaultFullEvery). Negative
	// is invalid.
	FullEvery time.Duration
	// FixOnSchedule makes scheduled runs fix (default: they only report).
	FixOnSchedule bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger gets one line per scheduled run and its errors (default:
	// discard).
	Logger *slog.Logger
	// SnapshotTimeout bounds each statement of a run's snapshot (default
	// DefaultSnapshotTimeout).
	SnapshotTimeout time.Duration
	// CreditLookback is how far back the comparison looks for completed
	// requests for payment (default 31 days: the 30-day request expiry
	// and a day).
	CreditLookback time.Duration
	// PayoutLookback is how far back the comparison reads every
	// customer's payouts (further for a held hold: to its placing);
	// default DefaultPayoutLookback. A finding about a payout older than
	// it is no longer seen, and resolved.
	PayoutLookback time.Duration
	// Holder names this replica in the lease of a run (default host:pid).
	Holder string
	// ProviderConcurrency is how many payments lists the comparison reads
	// at a time (default DefaultProviderConcurrency). A run reads one list
	// per participant with a candidate hold or a destination: at 200,000
	// payouts of 9,000 senders, 9,220 pages; at 50 ms a page, 7.7 minutes
	// one at a time.
	ProviderConcurrency int
}

// DefaultFullEvery is Config.FullEvery when unset: a full run a day.
const DefaultFullEvery = 24 * time.Hour

// DefaultProviderConcurrency is Config.ProviderConcurrency when unset. The
// provider client waits out 429s (Retry-After) on its own.
const DefaultProviderConcurrency = 4

// DefaultSnapshotTimeout bounds each statement of a run's snapshot.
const DefaultSnapshotTimeout = 5 * time.Minute

// LeaseTTL is how long a run's lease lasts without renewal; a run renews
// it every LeaseTTL/3, so a replica that dies mid-run frees it after at
// most LeaseTTL.
const LeaseTTL = 60 * time.Second

// RunningError is returned by Run while another run, on any replica,
// holds the lease: one run at a time.
type RunningError struct{ RunID string }

// Error implements error: the message of a RunningError.
func (e *RunningError) Error() string {
	return "reconciliation run " + e.RunID + " is in progress; one run at a time"
}

// DefaultPayoutLookback is Config.PayoutLookback when unset: 31 days, as
// the credits' lookback, so that a payout's finding stays in view a month.
const DefaultPayoutLookback = 31 * 24 * time.Hour

// DefaultHoldMaxAge is HoldMaxAge when unset: the 10-day payout expiry plus
// a day.
const DefaultHoldMaxAge = 264 * time.Hour

// Reconciler runs reconciliations. It is safe for concurrent use.
type Reconciler struct {
	cfg  Config
	log  *slog.Logger
	loop loop.Loop
	// page is how many customers a run compares at a time (customersPage;
	// tests shrink it).
	page int
}

// New validates cfg, applies its defaults and returns a Reconciler.
func New(cfg Config) (*Reconciler, error) {
	if cfg.DB == nil {
		return nil, errors.New("reconciliation: Config.DB is required")
	}
	if cfg.HoldMaxAge < 0 {
		return nil, fmt.Errorf("reconciliation: Config.HoldMaxAge %s is negative", cfg.HoldMaxAge)
	}
	if cfg.Every < 0 {
		return nil, fmt.Errorf("reconciliation: Config.Every %s is negative (0 turns the schedule off)", cfg.Every)
	}
	if cfg.ProviderConcurrency < 0 {
		return nil, fmt.Errorf("reconciliation: Config.ProviderConcurrency %d is negative", cfg.ProviderConcurrency)
	}
	if cfg.FullEvery < 0 {
		return nil, fmt.Errorf("reconciliation: Config.FullEvery %s is negative", cfg.FullEvery)
	}
	if cfg.FullEvery == 0 {
		cfg.FullEvery = DefaultFullEvery
	}
	if cfg.ProviderConcurrency == 0 {
		cfg.ProviderConcurrency = DefaultProviderConcurrency
	}
	if cfg.HoldMaxAge == 0 {
		cfg.HoldMaxAge = DefaultHoldMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SnapshotTimeout <= 0 {
		cfg.SnapshotTimeout = DefaultSnapshotTimeout
	}
	if cfg.CreditLookback <= 0 {
		cfg.CreditLookback = 31 * 24 * time.Hour
	}
	if cfg.PayoutLookback <= 0 {
		cfg.PayoutLookback = DefaultPayoutLookback
	}
	if cfg.Holder == "" {
		host, _ := os.Hostname()
		cfg.Holder = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reconciler{cfg: cfg, log: log, page: customersPage}, nil
}

// Run runs one reconciliation, full or from the last checkpoint as
// RunWith decides, with fix as RunOptions.Fix.
func (r *Reconciler) Run(ctx context.Context, fix bool) (Report, error) {
	return r.RunWith(ctx, RunOptions{Fix: fix})
}

// RunWith runs one reconciliation, stores it and returns its report. It
// is full when asked (o.Full), when there is no checkpoint yet, when an
// invariant issue is open, or when the last full run is older than
// Config.FullEvery; otherwise it starts from the last checkpoint. With
// o.Fix it applies missed_capture and missed_release (see the package
// doc). One run at a time across replicas: while another holds the lease,
// RunWith returns a *RunningError naming it. It fails only when the
// database fails or ctx ends; an unreachable provider API is a finding.
func (r *Reconciler) RunWith(ctx context.Context, o RunOptions) (Report, error) {
	rep := Report{RunID: ledger.NewReference("rec_"), StartedOn: r.now(), Findings: []ledger.Finding{}, Mode: ModeFull}
	ok, current, err := r.cfg.DB.AcquireLease(ctx, rep.RunID, r.cfg.Holder, LeaseTTL)
	if err != nil {
		return Report{}, fmt.Errorf("reconciliation: lease: %w", err)
	}
	if !ok {
		return Report{}, &RunningError{RunID: current}
	}
	stop := r.renew(ctx, rep.RunID)
	defer func() {
		stop()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := r.cfg.DB.ReleaseLease(rctx, rep.RunID); err != nil {
			r.log.Warn("reconciliation: lease not released; it expires by itself", "runID", rep.RunID, "err", err)
		}
	}()
	if err := r.cfg.DB.InsertRun(ctx, rep.RunID, rep.StartedOn, o.Fix); err != nil {
		return Report{}, fmt.Errorf("reconciliation: store run: %w", err)
	}
	from, err := r.start(ctx, o.Full)
	if err != nil {
		return Report{}, err
	}
	if from.CheckpointID != "" {
		rep.Mode, rep.FromCheckpoint = ModeIncremental, from.CheckpointID
	}
	resolve, err := r.check(ctx, &rep, o.Fix, from)
	if err != nil {
		return Report{}, err
	}
	rep.FinishedOn = r.now()
	if rep.FinishedOn.Before(rep.StartedOn) {
		rep.FinishedOn = rep.StartedOn // a clock that stepped back
	}
	start := time.Now()
	if err := r.store(ctx, &rep, resolve); err != nil {
		return Report{}, err
	}
	rep.Stages = append(rep.Stages, Stage{StageStore, time.Since(start)})
	r.prune(ctx)
	return rep, nil
}

// CheckpointRetention is how long a checkpoint is kept: every checkpoint
// taken within it stays, with the ones it was run from, and so do the
// latest full checkpoint and every one after it (the last of them is where
// the next run starts), whatever their age (docs/reconciliation.md,
// "Checkpoints").
const CheckpointRetention = 30 * 24 * time.Hour

// pruneBatch bounds the checkpoints one run deletes (each costs Postgres a
// pass over the account states); older ones go with the next runs.
const pruneBatch = 50

// prune deletes the checkpoints past CheckpointRetention that no run will
// start from, after a run is stored: a failure is logged, and the next
// run tries again.
func (r *Reconciler) prune(ctx context.Context) {
	n, err := r.cfg.DB.PruneCheckpoints(ctx, r.now().Add(-CheckpointRetention), pruneBatch)
	if err != nil {
		r.log.Warn("reconciliation: old checkpoints not pruned; the next run tries again", "err", err)
		return
	}
	if n > 0 {
		r.log.Info("reconciliation: old checkpoints pruned", "deleted", n)
	}
}

// check runs the stages of a run before its findings are stored: the
// snapshot and, with a provider, the comparison and the fixes. It adds the
// findings and stages to rep and returns the kinds checked in full (their
// issues that this run did not see are resolved).
func (r *Reconciler) check(ctx context.Context, rep *Report, fix bool, from ledger.Checkpoint) (resolve []string, err error) {
	snap, err := r.snapshot(ctx, rep.RunID, rep.StartedOn, from)
	if err != nil {
		return nil, err
	}
	rep.Checkpoint = snap.checkpoint
	rep.Stages = append(rep.Stages, snap.stages...)
	rep.Findings = append(rep.Findings, snap.findings...)
	if from.CheckpointID != "" {
		defer func() {
			if err == nil {
				resolve, err = incrementalKinds, r.carry(ctx, rep)
			}
		}()
	}
	if r.cfg.Provider == nil {
		return databaseKinds, nil
	}
	start := time.Now()
	found, complete, err := r.compare(ctx, snap, from)
	if err != nil {
		return nil, err
	}
	rep.Stages = append(rep.Stages, Stage{StageCompare, time.Since(start)})
	if fix {
		start = time.Now()
		if err := r.fix(ctx, rep.RunID, found); err != nil {
			return nil, err
		}
		rep.Stages = append(rep.Stages, Stage{StageFix, time.Since(start)})
	}
	for _, d := range found {
		rep.Findings = append(rep.Findings, d.finding)
	}
	if !complete {
		return databaseKinds, nil
	}
	return append(slices.Clone(databaseKinds), providerKinds...), nil
}

// renew renews the lease of runID every LeaseTTL/3 until the returned
// function is called.
func (r *Reconciler) renew(ctx context.Context, runID string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.cfg.DB.RenewLease(ctx, runID, LeaseTTL); err != nil && ctx.Err() == nil {
					r.log.Warn("reconciliation: lease not renewed", "runID", runID, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (r *Reconciler) now() time.Time { return r.cfg.Now().UTC().Truncate(time.Microsecond) }

// store records the findings as issues, completes the run row with its
// status and writes its findings, in one transaction; rep's findings get
// their issue's identity and state, and rep its status.
func (r *Reconciler) store(ctx context.Context, rep *Report, resolve []string) error {
	stored, status, err := r.cfg.DB.FinishRun(ctx, ledger.FinishParams{RunID: rep.RunID, FinishedOn: rep.FinishedOn,
		Findings: rep.Findings, Resolve: resolve, Status: StatusOf, Full: rep.Mode == ModeFull, From: rep.FromCheckpoint})
	if err != nil {
		return fmt.Errorf("reconciliation: store findings: %w", err)
	}
	rep.Findings, rep.Status = stored, status
	return nil
}

// Acknowledge acknowledges the finding (its issue) findingID with a note:
// later runs report it acknowledged, and it no longer counts towards their
// status, until it is resolved.
func (r *Reconciler) Acknowledge(ctx context.Context, findingID, note string) (ledger.Issue, error) {
	return r.cfg.DB.AcknowledgeFinding(ctx, findingID, note, r.now())
}

// candidate is a hold to compare with the service.
type candidate = ledger.Candidate

type snapshot struct {
	// at is when it was taken.
	at       time.Time
	findings []ledger.Finding
	// candidates: every candidate from a checkpoint; of a full run, the
	// held holds placed before comparedSince (the others are read a page
	// at a time, as of token).
	candidates    []candidate
	token         string
	comparedSince time.Time
	// recipients are the owners of destination instruments, with the
	// requests credited to them since the credit lookback.
	recipients map[string]map[string]bool
	// stages: StageInvariants and StageChecks.
	stages []Stage
	// checkpoint is the checkpoint it wrote ("": none).
	checkpoint string
}

// snapshot reads every database check and the comparison's candidates from
// one consistent, read-only snapshot.
func (r *Reconciler) snapshot(ctx context.Context, runID string, now time.Time, from ledger.Checkpoint) (snapshot, error) {
	s := snapshot{at: now, comparedSince: now.Add(-r.cfg.HoldMaxAge)}
	start := time.Now()
	snap, err := r.cfg.DB.Reconcile(ctx, ledger.ReconcileParams{Now: now, StaleBefore: now.Add(-r.cfg.HoldMaxAge),
		ComparedSince: s.comparedSince, CreditsSince: now.Add(-r.cfg.CreditLookback),
		WithProvider: r.cfg.Provider != nil, Timeout: r.cfg.SnapshotTimeout,
		From: from.CheckpointID, RunID: runID, Checkpoint: true})
	if err != nil {
		return snapshot{}, fmt.Errorf("reconciliation: check: %w", err)
	}
	var invariants time.Duration
	for _, t := range snap.Timings {
		if t.Invariant != "" {
			invariants += t.Took
		}
	}
	s.stages = []Stage{{StageInvariants, invariants}, {StageChecks, time.Since(start) - invariants}}
	for _, v := range snap.Violations {
		s.findings = append(s.findings, newFinding(v.Kind, v.Subject, v.Invariant+": "+v.Detail))
	}
	for _, q := range []struct {
		kind string
		rows []ledger.Subject
	}{
		{KindStaleHold, snap.StaleHolds},
		{KindOrphanCapture, snap.OrphanCaptures},
		{KindOrphanRelease, snap.OrphanReleases},
		{KindDuplicateCreditAttempt, snap.DuplicateCreditAttempts},
		{KindAuditChainBroken, snap.AuditChain},
		{KindCreditAmountMismatch, snap.CreditConflicts},
	} {
		for _, x := range q.rows {
			s.findings = append(s.findings, newFinding(q.kind, x.Subject, x.Detail))
		}
	}
	s.candidates, s.token = snap.Candidates, snap.Snapshot
	s.recipients = snap.Recipients
	s.checkpoint = snap.Checkpoint.CheckpointID
	return s, nil
}

func newFinding(kind, subject, detail string) ledger.Finding {
	return ledger.Finding{Kind: kind, Severity: SeverityOf(kind), Subject: subject, Detail: detail}
}
