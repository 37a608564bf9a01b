package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/ledger"
)

// Checkpoints of reconciliation (tables reconciliation_checkpoints and
// reconciliation_account_states; docs/reconciliation.md, "Checkpoints").
// A checkpoint records the snapshot of the run that wrote it (pg_snapshot):
// a row is new since the checkpoint when the transaction that inserted it
// (recorded_xid) is not visible in that snapshot, which no commit order,
// clock or sequence can fool. Every such transaction's ID is at least the
// snapshot's xmin: the index on recorded_xid finds them from there.
const (
	// $1 the checkpoint's snapshot, $2 its xmin.
	isNew = `recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(recorded_xid, $1::pg_snapshot)`

	checkpointSnapshotSQL = `SELECT snapshot::text, pg_snapshot_xmin(snapshot)::text FROM reconciliation_checkpoints WHERE checkpoint_id = $1`

	currentSnapshotSQL = `SELECT pg_current_snapshot()::text`

	// The accounts a run from a checkpoint reads, with what the journal
	// moved on each since (sum), and the holds placed and settled: those whose row changed
	// since (a balance or held update, a creation, or a change behind the
	// adapter's back: every update gives the row its transaction's ID,
	// xmin, which no trigger can withhold) and those named by a journal
	// entry, hold or settlement since. xmin is 32 bits: widened to the
	// 64-bit ID within 2^31 below the current snapshot's xmax (an older,
	// frozen row may come out in range: read for nothing, never missed).
	// Cost: one pass over accounts (a few dozen bytes a row, no join), and
	// the rows since the checkpoint.
	touchedAccountsSQL = `WITH c AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS m),
changed AS (
    SELECT a.account_id, (c.m - ((c.m - a.xmin::text::bigint) % 4294967296 + 4294967296) % 4294967296) AS x
    FROM accounts a, c),
moved AS (
    SELECT account_id, 0::numeric AS j, 0::numeric AS placed, 0::numeric AS settled FROM changed
    WHERE x >= 0 AND x::text::xid8 >= $2::xid8 AND NOT pg_visible_in_snapshot(x::text::xid8, $1::pg_snapshot)
    UNION ALL
    SELECT account_id, amount, 0, 0 FROM journal WHERE ` + isNew + `
    UNION ALL
    SELECT account_id, 0, amount, 0 FROM holds WHERE ` + isNew + `
    UNION ALL
    SELECT h.account_id, 0, 0, h.amount FROM hold_settlements s
    CROSS JOIN LATERAL (SELECT h.account_id, h.amount FROM holds h WHERE h.hold_reference = s.hold_reference LIMIT 1) h
    WHERE s.recorded_xid >= $2::xid8 AND NOT pg_visible_in_snapshot(s.recorded_xid, $1::pg_snapshot))
SELECT account_id, sum(j)::text, sum(placed)::text, sum(settled)::text FROM moved GROUP BY account_id ORDER BY account_id`

	insertCheckpointSQL = `INSERT INTO reconciliation_checkpoints (checkpoint_id, run_id, taken_on, snapshot, full_run, from_checkpoint, accounts)
VALUES ($1, $2, $3, $4::pg_snapshot, $5, $6, $7)`

	// $1 checkpoint; $2 the accounts (NULL: every account).
	writeStatesSQL = `INSERT INTO reconciliation_account_states AS s (account_id, checkpoint_id, balance, held)
SELECT account_id, $1, balance, held FROM accounts WHERE $2::text[] IS NULL OR account_id = ANY ($2::text[])
ON CONFLICT (account_id) DO UPDATE SET checkpoint_id = $1, balance = excluded.balance, held = excluded.held`

	lastCheckpointSQL = `SELECT checkpoint_id, run_id, taken_on, full_run, coalesce(from_checkpoint, ''), accounts
FROM reconciliation_checkpoints ORDER BY seq DESC LIMIT 1`

	lastFullCheckpointSQL = `SELECT max(taken_on) FROM reconciliation_checkpoints WHERE full_run`

	// The checkpoints kept ($1 the retention cutoff): the latest full
	// one and every one after it (the last of them is where the next run
	// starts; the account states name only these, as a full run rewrites
	// every account's), every one taken since $1, and, with a checkpoint
	// kept, the one it was run from (its from_checkpoint names it), back
	// to its full run.
	keptHead = `WITH RECURSIVE full_run AS (
    SELECT coalesce(max(seq), 0) AS seq FROM reconciliation_checkpoints WHERE full_run),
kept AS (
    SELECT c.checkpoint_id, c.from_checkpoint FROM reconciliation_checkpoints c, full_run f
    WHERE c.seq >= f.seq OR c.taken_on >= $1`
	keptTail = `
    UNION
    SELECT c.checkpoint_id, c.from_checkpoint FROM reconciliation_checkpoints c JOIN kept k ON c.checkpoint_id = k.from_checkpoint)
`

	// Whether any checkpoint is to go: the checkpoints alone (a few a day).
	prunableSQL = keptHead + keptTail + `SELECT EXISTS (SELECT 1 FROM reconciliation_checkpoints c
WHERE c.checkpoint_id NOT IN (SELECT checkpoint_id FROM kept))`

	// $2 how many at most. A checkpoint the account states name stays
	// too, whatever the rule says (a full run rewrites every account's, so
	// they name none of those due): one pass over them. The newest of
	// those due go first: a checkpoint that stays for a later batch names
	// (from_checkpoint) only older ones, so no batch leaves a reference to
	// a deleted row.
	pruneCheckpointsSQL = keptHead + `
       OR c.checkpoint_id IN (SELECT checkpoint_id FROM reconciliation_account_states)` + keptTail + `,
doomed AS (
    SELECT c.checkpoint_id FROM reconciliation_checkpoints c
    WHERE c.checkpoint_id NOT IN (SELECT checkpoint_id FROM kept)
    ORDER BY c.seq DESC LIMIT $2)
DELETE FROM reconciliation_checkpoints c USING doomed d WHERE c.checkpoint_id = d.checkpoint_id`

	// $1 the invariant kinds.
	openInvariantIssuesSQL = `SELECT EXISTS (SELECT 1 FROM reconciliation_issues WHERE resolved_on IS NULL AND kind = ANY ($1::text[]))`

	// $1 kinds: their open issues, as the run that saw them last found
	// them (unfixed).
	openIssuesSQL = `SELECT i.kind, f.severity, i.subject, f.detail
FROM reconciliation_issues i
JOIN reconciliation_findings f ON f.run_id = i.last_run_id AND f.finding_id = i.finding_id
WHERE i.resolved_on IS NULL AND i.kind = ANY ($1::text[]) AND NOT f.fixed
ORDER BY i.kind, i.subject`
)

// LastCheckpoint reads where the next reconciliation run may start: the
// last checkpoint, when the last full run's was taken, and whether an
// issue of one of invariantKinds is unresolved (then the next run must
// read all of history to see it again or resolve it).
func (db *DB) LastCheckpoint(ctx context.Context, invariantKinds []string) (ledger.CheckpointState, error) {
	var st ledger.CheckpointState
	c := &st.Last
	err := db.pool.QueryRow(ctx, lastCheckpointSQL).Scan(&c.CheckpointID, &c.RunID, &c.TakenOn, &c.Full, &c.From, &c.Accounts)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return st, interpret(err)
	}
	var full *time.Time
	if err := db.pool.QueryRow(ctx, lastFullCheckpointSQL).Scan(&full); err != nil {
		return st, interpret(err)
	}
	if full != nil {
		st.LastFullOn = *full
	}
	if err := db.pool.QueryRow(ctx, openInvariantIssuesSQL, invariantKinds).Scan(&st.OpenInvariantIssues); err != nil {
		return st, interpret(err)
	}
	return st, nil
}

// OpenIssues returns the unresolved, unfixed issues of the given kinds as
// last found: an incremental run reports them again, since it does not
// check them in full and so can neither see nor resolve them.
func (db *DB) OpenIssues(ctx context.Context, kinds []string) ([]ledger.Finding, error) {
	rows, err := db.pool.Query(ctx, openIssuesSQL, kinds)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) {
		var f ledger.Finding
		return f, r.Scan(&f.Kind, &f.Severity, &f.Subject, &f.Detail)
	})
	return out, interpret(err)
}

// since is the checkpoint a run starts from, as the queries take it.
type since struct {
	snapshot, xmin string
	// accounts: those touched since (touchedAccountsSQL), with the
	// journal's movement on each since, and the holds placed and settled
	// (decimal strings).
	accounts, journal, placed, settled []string
}

// readSince reads checkpoint id's snapshot and the accounts touched since.
func readSince(ctx context.Context, tx pgx.Tx, id string) (since, error) {
	var s since
	if err := tx.QueryRow(ctx, checkpointSnapshotSQL, id).Scan(&s.snapshot, &s.xmin); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return s, errors.New("checkpoint " + id + " does not exist")
		}
		return s, err
	}
	rows, err := tx.Query(ctx, touchedAccountsSQL, s.snapshot, s.xmin)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	s.accounts, s.journal, s.placed, s.settled = []string{}, []string{}, []string{}, []string{}
	for rows.Next() {
		var a, j, p, st string
		if err := rows.Scan(&a, &j, &p, &st); err != nil {
			return s, err
		}
		s.accounts, s.journal, s.placed, s.settled = append(s.accounts, a), append(s.journal, j), append(s.placed, p), append(s.settled, st)
	}
	return s, rows.Err()
}

// writeCheckpoint records the checkpoint of a run's snapshot (taken: its
// pg_snapshot), in the snapshot's own transaction: the account states are
// the snapshot's. accounts nil: every account (a full run).
func writeCheckpoint(ctx context.Context, tx pgx.Tx, p ledger.ReconcileParams, taken string, accounts []string) (ledger.Checkpoint, error) {
	c := ledger.Checkpoint{CheckpointID: ledger.NewReference("chk_"), RunID: p.RunID, TakenOn: p.Now, Full: p.From == "", From: p.From}
	var from *string
	if p.From != "" {
		from = &p.From
	}
	// The run row exists (InsertRun) and the states refer to the
	// checkpoint: the checkpoint first.
	if _, err := tx.Exec(ctx, insertCheckpointSQL, c.CheckpointID, c.RunID, c.TakenOn, taken, c.Full, from, 0); err != nil {
		return c, err
	}
	tag, err := tx.Exec(ctx, writeStatesSQL, c.CheckpointID, accounts)
	if err != nil {
		return c, err
	}
	c.Accounts = tag.RowsAffected()
	_, err = tx.Exec(ctx, `UPDATE reconciliation_checkpoints SET accounts = $2 WHERE checkpoint_id = $1`, c.CheckpointID, c.Accounts)
	return c, err
}

// PruneCheckpoints deletes the checkpoints no run will start from again
// and older than before, at most limit of them, in one transaction, and
// returns how many it deleted. It keeps the latest full checkpoint and
// every one after it (the last is where the next run starts), every one
// taken since before, and the checkpoints those were run from, back to
// their full run (docs/reconciliation.md, "Checkpoints"). Deleting a
// checkpoint makes Postgres read the account states for a reference to it
// (the foreign key has no index: an index would be rewritten for every
// account by each full run): one pass over them per checkpoint deleted, so
// at most limit passes, and none when nothing is due.
func (db *DB) PruneCheckpoints(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := db.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		var due bool
		if err := tx.QueryRow(ctx, prunableSQL, before).Scan(&due); err != nil || !due {
			return err
		}
		tag, err := tx.Exec(ctx, pruneCheckpointsSQL, before, limit)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
