package reconciliation

import (
	"context"
	"fmt"
	"slices"

	"github.com/provider-ledger/adapter/ledger"
)

// start decides where a run starts: the last checkpoint, or (a zero
// Checkpoint) all of history. A run is full when asked (full), when no
// run has written a checkpoint yet (the first run), when an issue of an
// invariant kind is open (only a full run sees it again, or resolves
// it), or when the last full run's checkpoint is older than
// Config.FullEvery.
func (r *Reconciler) start(ctx context.Context, full bool) (ledger.Checkpoint, error) {
	if full {
		return ledger.Checkpoint{}, nil
	}
	st, err := r.cfg.DB.LastCheckpoint(ctx, invariantKinds)
	if err != nil {
		return ledger.Checkpoint{}, fmt.Errorf("reconciliation: read the last checkpoint: %w", err)
	}
	switch {
	case st.Last.CheckpointID == "", st.OpenInvariantIssues, st.LastFullOn.IsZero(),
		r.now().Sub(st.LastFullOn) >= r.cfg.FullEvery:
		return ledger.Checkpoint{}, nil
	}
	return st.Last, nil
}

// carry adds to an incremental run's findings the open issues of the
// kinds it does not check in full that it did not find itself, as they
// were last found: the run cannot see them again, nor resolve them, and
// its status must not say clean while they are open.
func (r *Reconciler) carry(ctx context.Context, rep *Report) error {
	var kinds []string
	for _, k := range Kinds() {
		if !slices.Contains(incrementalKinds, k) {
			kinds = append(kinds, k)
		}
	}
	open, err := r.cfg.DB.OpenIssues(ctx, kinds)
	if err != nil {
		return fmt.Errorf("reconciliation: read the open issues: %w", err)
	}
	type key struct{ kind, subject string }
	seen := make(map[key]bool, len(rep.Findings))
	for _, f := range rep.Findings {
		seen[key{f.Kind, f.Subject}] = true
	}
	for _, f := range open {
		if !seen[key{f.Kind, f.Subject}] {
			seen[key{f.Kind, f.Subject}] = true
			rep.Findings = append(rep.Findings, f)
		}
	}
	return nil
}
