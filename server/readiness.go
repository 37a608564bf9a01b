package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/store"
)

// Reasons /readyz names when not ready (docs/contract.md): stable names
// for probes, dashboards and runbooks.
const (
	// ReasonDatabaseUnreachable: no new connection to the database could
	// be made and used.
	ReasonDatabaseUnreachable = "database-unreachable"
	// ReasonDatabaseReadOnly: a new session is read-only (a standby, a
	// replica URL, or default_transaction_read_only).
	ReasonDatabaseReadOnly = "database-read-only"
	// ReasonStatementsTimingOut: a primary-key read of the ledger's tables
	// did not finish within store.HealthStatementTimeout.
	ReasonStatementsTimingOut = "statements-timing-out"
	// ReasonSplitBrain: a second server answered read-write within
	// store.SplitBrainWindow; no single primary is known.
	ReasonSplitBrain = "split-brain"
	// ReasonKeyringStale: the keyring has not been reloaded for
	// keyringMaxAge; callbacks answer 503 keyring-stale meanwhile.
	ReasonKeyringStale = "keyring-stale"
	// ReasonNoActiveSecret: no signing secret is active; no callback opens.
	ReasonNoActiveSecret = "no-active-signing-secret"
)

// ReadyTimeout bounds one readiness probe.
const ReadyTimeout = 2 * time.Second

// readiness lists why a replica is not ready, from what the database probe
// found, the number of active signing secrets and the keyring's age; none
// when ready. Only the database probe's unreachable hides its other
// findings (nothing else could be asked).
func readiness(h store.Health, activeKeys int, keyringAge time.Duration) []admin.ReadyReason {
	var out []admin.ReadyReason
	add := func(reason, detail string) { out = append(out, admin.ReadyReason{Reason: reason, Detail: detail}) }
	if h.Unreachable != nil {
		add(ReasonDatabaseUnreachable, "no new connection to the database could be made and used (the log says why)")
	}
	if h.ReadOnly != nil {
		add(ReasonDatabaseReadOnly, h.ReadOnly.Error())
	}
	if h.Slow != nil {
		add(ReasonStatementsTimingOut, fmt.Sprintf("a primary-key read of the ledger's tables did not finish within %s: a lock held on a table, or the database overloaded or stalled", store.HealthStatementTimeout))
	}
	if h.SplitBrain != nil {
		add(ReasonSplitBrain, h.SplitBrain.Error())
	}
	if activeKeys == 0 {
		add(ReasonNoActiveSecret, "no signing secret is active: no callback can be opened; add one (ledgerctl secrets add)")
	}
	if keyringAge > keyringMaxAge {
		add(ReasonKeyringStale, fmt.Sprintf("the keyring was last loaded %s ago (over %s): callbacks are refused 503 keyring-stale until a load succeeds", keyringAge.Round(time.Second), keyringMaxAge))
	}
	return out
}

// readyLog logs readiness when it changes: one line when the replica
// becomes unready or its reasons change (with the database's errors,
// which /readyz does not show), one when it is ready again.
type readyLog struct {
	mu   sync.Mutex
	last string // the reasons' names, joined; "" when ready
}

func (l *readyLog) note(d *daemon, reasons []admin.ReadyReason, h store.Health) {
	names := make([]string, len(reasons))
	for i, r := range reasons {
		names[i] = r.Reason
	}
	key := strings.Join(names, ",")
	l.mu.Lock()
	changed, was := key != l.last, l.last
	l.last = key
	l.mu.Unlock()
	switch {
	case !changed:
	case key == "":
		d.log.Info("ready", "was", was)
	default:
		attrs := []any{"reasons", names}
		for _, e := range []struct {
			name string
			err  error
		}{{"unreachable", h.Unreachable}, {"readOnly", h.ReadOnly}, {"slow", h.Slow}, {"splitBrain", h.SplitBrain}} {
			if e.err != nil {
				attrs = append(attrs, e.name, e.err.Error())
			}
		}
		d.log.Warn("not ready", attrs...)
	}
}

// ready is /readyz: ready when a new database connection answers
// read-write and reads the ledger's tables in time, a single primary is
// known, a signing secret is active and the keyring is fresh. The database
// probe uses a connection of its own, so a pool busy with callbacks does
// not make the replica unready.
func (d *daemon) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	h := d.db.Health(ctx)
	reasons := readiness(h, d.keys.Len(), d.loader.Age())
	if n := d.secrets.Undecryptable(); n > 0 {
		for i := range reasons {
			if reasons[i].Reason == ReasonNoActiveSecret {
				reasons[i].Detail = fmt.Sprintf("no active signing secret opens callbacks here: %d skipped (ledgerd_keyring_undecryptable_secrets, and the log, say why: a KEK this replica was not given?)", n)
			}
		}
	}
	d.readyLog.note(d, reasons, h)
	if len(reasons) == 0 {
		return nil
	}
	return &admin.NotReadyError{Reasons: slices.Clip(reasons)}
}
