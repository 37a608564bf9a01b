-- Reconciliation from a checkpoint (docs/reconciliation.md, "Checkpoints").
--
-- A run whose invariant checks passed records a checkpoint: the snapshot it
-- read (pg_snapshot: which transactions it saw), and the balance and held of
-- every account as proven then. The next run reads only what that snapshot
-- did not see. "Not seen" is decided by transaction, not by time or by a
-- sequence: a row inserted by a transaction still in progress when the
-- checkpoint was taken, and committed after it, is not seen by the
-- checkpoint whatever its timestamps, so it cannot be skipped.
--
-- Each history table records the transaction that inserted a row
-- (recorded_xid, the top-level transaction's 64-bit ID, never wrapping).
-- Every transaction the checkpoint's snapshot did not see has an ID at or
-- above the snapshot's xmin, so the rows new since a checkpoint are found
-- through the index from that xmin, then filtered by
-- pg_visible_in_snapshot: the cost of a run is the rows since the
-- checkpoint (and the transactions that were in progress then), not
-- history. NULL for the rows inserted before this migration: every
-- checkpoint is taken after it and sees them all. The column is filled by
-- its default; the functions that insert the rows name their columns and
-- are unchanged.
ALTER TABLE journal ADD COLUMN recorded_xid xid8;
ALTER TABLE journal ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX journal_recorded_idx ON journal (recorded_xid);

ALTER TABLE holds ADD COLUMN recorded_xid xid8;
ALTER TABLE holds ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX holds_recorded_idx ON holds (recorded_xid);

ALTER TABLE hold_settlements ADD COLUMN recorded_xid xid8;
ALTER TABLE hold_settlements ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX hold_settlements_recorded_idx ON hold_settlements (recorded_xid);

ALTER TABLE credits ADD COLUMN recorded_xid xid8;
ALTER TABLE credits ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX credits_recorded_idx ON credits (recorded_xid);

ALTER TABLE adjustments ADD COLUMN recorded_xid xid8;
ALTER TABLE adjustments ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX adjustments_recorded_idx ON adjustments (recorded_xid);

ALTER TABLE callback_credit ADD COLUMN recorded_xid xid8;
ALTER TABLE callback_credit ALTER COLUMN recorded_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX callback_credit_recorded_idx ON callback_credit (recorded_xid);

-- The probes of an incremental run from a new row to its counterpart: a
-- capture's settlement, an adjustment's record, a recipient's credits.
CREATE INDEX hold_settlements_transaction_idx ON hold_settlements (transaction_id) WHERE transaction_id IS NOT NULL;
CREATE INDEX adjustments_transaction_idx ON adjustments (transaction_id);
CREATE INDEX credits_account_idx ON credits (account_id, created_at);

-- A checkpoint: what a run proved, at the snapshot it read. full: the run
-- read all of history (otherwise it read from checkpoint from_checkpoint).
-- seq orders checkpoints; the last one is where the next run starts.
CREATE TABLE reconciliation_checkpoints (
    checkpoint_id   text        NOT NULL,
    seq             bigint      GENERATED ALWAYS AS IDENTITY,
    run_id          text        NOT NULL,
    taken_on        timestamptz NOT NULL,
    snapshot        pg_snapshot NOT NULL,
    full_run        boolean     NOT NULL,
    from_checkpoint text,
    -- How many account states the run wrote (every account for a full run,
    -- the accounts with activity since the last checkpoint otherwise).
    accounts        bigint      NOT NULL,
    CONSTRAINT reconciliation_checkpoints_pkey PRIMARY KEY (checkpoint_id),
    CONSTRAINT reconciliation_checkpoints_seq_key UNIQUE (seq),
    CONSTRAINT reconciliation_checkpoints_id_check CHECK (checkpoint_id ~ '^chk_[a-z2-7]{26}$'),
    CONSTRAINT reconciliation_checkpoints_run_fkey FOREIGN KEY (run_id) REFERENCES reconciliation_runs (run_id),
    CONSTRAINT reconciliation_checkpoints_from_fkey FOREIGN KEY (from_checkpoint)
        REFERENCES reconciliation_checkpoints (checkpoint_id),
    CONSTRAINT reconciliation_checkpoints_from_check CHECK (full_run = (from_checkpoint IS NULL))
);

-- Every account's balance and held as last proven: by the checkpoint that
-- last saw it change (an account a checkpoint did not write was unchanged
-- since the one that did). An account absent here was created after the
-- last checkpoint that wrote every account: its proven state is zero.
CREATE TABLE reconciliation_account_states (
    account_id    text    NOT NULL COLLATE "C",
    checkpoint_id text    NOT NULL,
    balance       numeric NOT NULL,
    held          numeric NOT NULL,
    CONSTRAINT reconciliation_account_states_pkey PRIMARY KEY (account_id),
    CONSTRAINT reconciliation_account_states_checkpoint_fkey FOREIGN KEY (checkpoint_id)
        REFERENCES reconciliation_checkpoints (checkpoint_id)
);

-- Which kind of run it was, and the checkpoint it started from (NULL: a
-- full run, or a run recorded before this migration).
ALTER TABLE reconciliation_runs ADD COLUMN full_run boolean;
ALTER TABLE reconciliation_runs ADD COLUMN from_checkpoint text;
