package reconciliation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/provider-ledger/adapter/internal/loop"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/store"
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
	KindProviderUnreachable    = "provider_unreachable"
)

// warningKinds are the kinds of severity warning; every other kind, the
// invariant kinds and any kind CheckInvariants may add later, is critical.
var warningKinds = map[string]bool{
	KindStaleHold: true, KindOrphanCapture: true, KindOrphanRelease: true,
	KindDuplicateCreditAttempt: true, KindMissedRelease: true, KindMissedCapture: true,
	KindProviderUnreachable: true,
}

// SeverityOf returns the severity of a finding kind.
func SeverityOf(kind string) string {
	if warningKinds[kind] {
		return SeverityWarning
	}
	return SeverityCritical
}

// Finding is one discrepancy a run found.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	// Subject is what the finding is about: an account, a hold reference,
	// a journal transaction, a requestID, a currency or a participant.
	Subject string `json:"subject"`
	Detail  string `json:"detail"`
	// Fixed is true when this run repaired it (missed_capture and
	// missed_release with fix only).
	Fixed bool `json:"fixed"`
}

// Report is the outcome of one run (design section 5).
type Report struct {
	RunID      string    `json:"runID"`
	StartedOn  time.Time `json:"startedOn"`
	FinishedOn time.Time `json:"finishedOn"`
	// Status is StatusOf(Findings).
	Status   string    `json:"status"`
	Findings []Finding `json:"findings"`
}

// MarshalJSON writes findings as [] when there are none, never null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return json.Marshal(plain(r))
}

// StatusOf returns the worst severity among the unfixed findings:
// StatusCritical, StatusWarning, or StatusClean when there is none.
func StatusOf(findings []Finding) string {
	status := StatusClean
	for _, f := range findings {
		if f.Fixed {
			continue
		}
		if f.Severity == SeverityCritical {
			return StatusCritical
		}
		status = StatusWarning
	}
	return status
}

// Config configures a Reconciler.
type Config struct {
	// DB is the ledger's database. Required.
	DB *store.DB
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
	// FixOnSchedule makes scheduled runs fix (default: they only report).
	FixOnSchedule bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger gets one line per scheduled run and its errors (default:
	// discard).
	Logger *slog.Logger
}

// DefaultHoldMaxAge is HoldMaxAge when unset: the 10-day payout expiry plus
// a day.
const DefaultHoldMaxAge = 264 * time.Hour

// Reconciler runs reconciliations. It is safe for concurrent use.
type Reconciler struct {
	cfg  Config
	log  *slog.Logger
	loop loop.Loop
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
	if cfg.HoldMaxAge == 0 {
		cfg.HoldMaxAge = DefaultHoldMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reconciler{cfg: cfg, log: log}, nil
}

// Run runs one reconciliation, stores it and returns its report. With fix
// it applies missed_capture and missed_release (see the package doc). It
// fails only when the database fails or ctx ends; an unreachable provider
// API is a finding.
func (r *Reconciler) Run(ctx context.Context, fix bool) (Report, error) {
	rep := Report{RunID: ledger.NewReference("rec_"), StartedOn: r.now(), Findings: []Finding{}}
	if err := r.cfg.DB.InsertRun(ctx, rep.RunID, rep.StartedOn, fix); err != nil {
		return Report{}, fmt.Errorf("reconciliation: store run: %w", err)
	}
	snap, err := r.snapshot(ctx, rep.StartedOn)
	if err != nil {
		return Report{}, err
	}
	rep.Findings = append(rep.Findings, snap.findings...)
	if r.cfg.Provider != nil {
		found, err := r.compare(ctx, snap.candidates)
		if err != nil {
			return Report{}, err
		}
		if fix {
			if err := r.fix(ctx, rep.RunID, found); err != nil {
				return Report{}, err
			}
		}
		for _, d := range found {
			rep.Findings = append(rep.Findings, d.finding)
		}
	}
	rep.FinishedOn = r.now()
	if rep.FinishedOn.Before(rep.StartedOn) {
		rep.FinishedOn = rep.StartedOn // a clock that stepped back
	}
	rep.Status = StatusOf(rep.Findings)
	if err := r.store(ctx, rep); err != nil {
		return Report{}, err
	}
	return rep, nil
}

func (r *Reconciler) now() time.Time { return r.cfg.Now().UTC().Truncate(time.Microsecond) }

// store completes the run row and writes its findings, in one transaction.
func (r *Reconciler) store(ctx context.Context, rep Report) error {
	rows := make([]store.Finding, len(rep.Findings))
	for i, f := range rep.Findings {
		rows[i] = store.Finding{Kind: f.Kind, Severity: f.Severity, Subject: f.Subject, Detail: f.Detail, Fixed: f.Fixed}
	}
	if err := r.cfg.DB.FinishRun(ctx, rep.RunID, rep.FinishedOn, rep.Status, rows); err != nil {
		return fmt.Errorf("reconciliation: store findings: %w", err)
	}
	return nil
}

// candidate is a hold to compare with the service.
type candidate = store.Candidate

type snapshot struct {
	findings   []Finding
	candidates []candidate
}

// snapshot reads every database check and the comparison's candidates from
// one consistent, read-only snapshot.
func (r *Reconciler) snapshot(ctx context.Context, now time.Time) (snapshot, error) {
	var s snapshot
	snap, err := r.cfg.DB.Reconcile(ctx, now, now.Add(-r.cfg.HoldMaxAge), now.Add(-r.cfg.HoldMaxAge), r.cfg.Provider != nil)
	if err != nil {
		return snapshot{}, fmt.Errorf("reconciliation: check: %w", err)
	}
	for _, v := range snap.Violations {
		s.findings = append(s.findings, newFinding(v.Kind, v.Subject, v.Invariant+": "+v.Detail))
	}
	for _, q := range []struct {
		kind string
		rows []store.Subject
	}{
		{KindStaleHold, snap.StaleHolds},
		{KindOrphanCapture, snap.OrphanCaptures},
		{KindOrphanRelease, snap.OrphanReleases},
		{KindDuplicateCreditAttempt, snap.DuplicateCreditAttempts},
	} {
		for _, x := range q.rows {
			s.findings = append(s.findings, newFinding(q.kind, x.Subject, x.Detail))
		}
	}
	s.candidates = snap.Candidates
	return s, nil
}

func newFinding(kind, subject, detail string) Finding {
	return Finding{Kind: kind, Severity: SeverityOf(kind), Subject: subject, Detail: detail}
}
