package reconciliation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

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
	// Pool is the ledger's database. Required.
	Pool *pgxpool.Pool
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
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc
	stopped chan struct{}
}

// New validates cfg, applies its defaults and returns a Reconciler.
func New(cfg Config) (*Reconciler, error) {
	if cfg.Pool == nil {
		return nil, errors.New("reconciliation: Config.Pool is required")
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
	if _, err := r.cfg.Pool.Exec(ctx, insertRunSQL, rep.RunID, rep.StartedOn, fix); err != nil {
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
	err := ledger.InTx(ctx, r.cfg.Pool, func(tx pgx.Tx) error {
		var id string
		if err := tx.QueryRow(ctx, finishRunSQL, rep.RunID, rep.FinishedOn, rep.Status).Scan(&id); err != nil {
			return err // pgx.ErrNoRows: the run row is gone or finished already
		}
		if len(rep.Findings) == 0 {
			return nil
		}
		n := len(rep.Findings)
		seq, kind, sev, subj, detail, fixed := make([]int32, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]bool, n)
		for i, f := range rep.Findings {
			seq[i], kind[i], sev[i], subj[i], detail[i], fixed[i] = int32(i), f.Kind, f.Severity, f.Subject, f.Detail, f.Fixed
		}
		_, err := tx.Exec(ctx, insertFindingsSQL, rep.RunID, seq, kind, sev, subj, detail, fixed)
		return err
	})
	if err != nil {
		return fmt.Errorf("reconciliation: store findings: %w", err)
	}
	return nil
}

// candidate is a hold to compare with the service.
type candidate struct {
	HoldReference string
	PayoutID      string
	AccountID     string
	Owner         string
	Status        string
	Currency      string
	Amount        decimal.Decimal
	PlacedAt      time.Time
}

type snapshot struct {
	findings   []Finding
	candidates []candidate
}

// snapshot reads every database check and the comparison's candidates from
// one consistent, read-only snapshot.
func (r *Reconciler) snapshot(ctx context.Context, now time.Time) (snapshot, error) {
	var s snapshot
	err := pgx.BeginTxFunc(ctx, r.cfg.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			vs, err := ledger.CheckInvariants(ctx, tx)
			if err != nil {
				return err
			}
			for _, v := range vs {
				s.findings = append(s.findings, newFinding(v.Kind, v.Subject, v.Invariant+": "+v.Detail))
			}
			for _, q := range []struct {
				kind, sql string
				args      []any
			}{
				{KindStaleHold, staleHoldsSQL, []any{now.Add(-r.cfg.HoldMaxAge), now}},
				{KindOrphanCapture, orphansSQL, []any{"capture"}},
				{KindOrphanRelease, orphansSQL, []any{"release"}},
				{KindDuplicateCreditAttempt, duplicateCreditAttemptsSQL, nil},
			} {
				rows, err := tx.Query(ctx, q.sql, q.args...)
				if err != nil {
					return fmt.Errorf("%s: %w", q.kind, err)
				}
				fs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Finding, error) {
					var subject, detail string
					err := row.Scan(&subject, &detail)
					return newFinding(q.kind, subject, detail), err
				})
				if err != nil {
					return fmt.Errorf("%s: %w", q.kind, err)
				}
				s.findings = append(s.findings, fs...)
			}
			if r.cfg.Provider == nil {
				return nil
			}
			rows, err := tx.Query(ctx, candidatesSQL, now.Add(-r.cfg.HoldMaxAge))
			if err != nil {
				return fmt.Errorf("candidates: %w", err)
			}
			s.candidates, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (candidate, error) {
				var c candidate
				err := row.Scan(&c.HoldReference, &c.PayoutID, &c.AccountID, &c.Owner, &c.Status, &c.Currency, &c.Amount, &c.PlacedAt)
				return c, err
			})
			if err != nil {
				return fmt.Errorf("candidates: %w", err)
			}
			return nil
		})
	if err != nil {
		return snapshot{}, fmt.Errorf("reconciliation: check: %w", err)
	}
	return s, nil
}

func newFinding(kind, subject, detail string) Finding {
	return Finding{Kind: kind, Severity: SeverityOf(kind), Subject: subject, Detail: detail}
}
