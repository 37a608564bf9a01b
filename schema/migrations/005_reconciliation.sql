-- Reconciliation (design section 5): every run, its findings, and every
-- fix a run applied. Package reconciliation owns these tables.
--
-- A run row is written when the run starts (finished_on and status NULL)
-- and completed with its findings in one transaction when it ends, so a
-- run that died midway is visible as unfinished, and the fixes it had
-- committed still name it.

CREATE TABLE reconciliation_runs (
    run_id      text        NOT NULL,
    started_on  timestamptz NOT NULL,
    finished_on timestamptz,
    fix         boolean     NOT NULL,
    -- clean, warning or critical: the worst unfixed finding.
    status      text,
    CONSTRAINT reconciliation_runs_pkey PRIMARY KEY (run_id),
    CONSTRAINT reconciliation_runs_run_id_check CHECK (run_id ~ '^rec_[a-z2-7]{26}$'),
    CONSTRAINT reconciliation_runs_status_check CHECK (status IN ('clean', 'warning', 'critical')),
    CONSTRAINT reconciliation_runs_finished_check CHECK (
        (finished_on IS NULL AND status IS NULL)
        OR (finished_on IS NOT NULL AND status IS NOT NULL AND finished_on >= started_on))
);
CREATE INDEX reconciliation_runs_started_idx ON reconciliation_runs (started_on);

CREATE TABLE reconciliation_findings (
    run_id   text    NOT NULL,
    -- Position of the finding in the run's report.
    seq      integer NOT NULL,
    kind     text    NOT NULL,
    severity text    NOT NULL,
    subject  text    NOT NULL,
    detail   text    NOT NULL,
    fixed    boolean NOT NULL,
    CONSTRAINT reconciliation_findings_pkey PRIMARY KEY (run_id, seq),
    CONSTRAINT reconciliation_findings_run_fkey FOREIGN KEY (run_id) REFERENCES reconciliation_runs (run_id),
    CONSTRAINT reconciliation_findings_seq_check CHECK (seq >= 0),
    CONSTRAINT reconciliation_findings_kind_check CHECK (kind ~ '^[a-z][a-z_]{0,63}$'),
    CONSTRAINT reconciliation_findings_severity_check CHECK (severity IN ('warning', 'critical')),
    -- Only missed_release and missed_capture are ever fixed.
    CONSTRAINT reconciliation_findings_fixed_check CHECK (NOT fixed OR kind IN ('missed_release', 'missed_capture'))
);

-- The journal of reconciliation's own effects. A fix is holds.Capture or
-- holds.Release applied on the locked hold row; this row, written in the
-- same transaction, marks the capture's journal transaction (or the
-- release, which has none; its hold carries release_reason
-- 'reconciliation') as a reconciliation fix, and why it was applied.
CREATE TABLE reconciliation_fixes (
    -- A hold leaves held once (I3), so it is fixed at most once: a second
    -- fix of it, by any run, is refused here too.
    hold_reference text        NOT NULL,
    run_id         text        NOT NULL,
    action         text        NOT NULL,
    -- The capture or release reference the fix produced.
    reference      text        NOT NULL,
    -- The capture's journal transaction; NULL for a release.
    transaction_id uuid,
    -- The payout status at the service that called for the fix.
    payout_status  text        NOT NULL,
    created_at     timestamptz NOT NULL,
    CONSTRAINT reconciliation_fixes_pkey PRIMARY KEY (hold_reference),
    CONSTRAINT reconciliation_fixes_hold_fkey FOREIGN KEY (hold_reference) REFERENCES holds (hold_reference),
    CONSTRAINT reconciliation_fixes_run_fkey FOREIGN KEY (run_id) REFERENCES reconciliation_runs (run_id),
    CONSTRAINT reconciliation_fixes_transaction_fkey FOREIGN KEY (transaction_id) REFERENCES journal_transactions (transaction_id),
    CONSTRAINT reconciliation_fixes_action_check CHECK (action IN ('capture', 'release')),
    CONSTRAINT reconciliation_fixes_transaction_check CHECK ((action = 'capture') = (transaction_id IS NOT NULL))
);
CREATE INDEX reconciliation_fixes_run_idx ON reconciliation_fixes (run_id);
