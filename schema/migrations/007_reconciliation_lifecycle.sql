-- Reconciliation v2: one run at a time across replicas, and findings with a
-- lifecycle.
--
-- reconciliation_lease is the one run in progress: a run takes it (or
-- finds it taken and answers 409 naming the running run), renews it while
-- it runs, and gives it back when done. A replica that dies holding it
-- loses it when it expires. A row, not a session advisory lock, so that it
-- works behind a transaction pooler.
CREATE TABLE reconciliation_lease (
    singleton  boolean     NOT NULL DEFAULT true,
    run_id     text        NOT NULL,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT reconciliation_lease_pkey PRIMARY KEY (singleton),
    CONSTRAINT reconciliation_lease_singleton_check CHECK (singleton)
);

-- A finding is an issue, one per (kind, subject), seen by one run after
-- another until it is resolved (a run that could see it does not). An
-- operator acknowledges an issue with a note; runs go on reporting it,
-- marked acknowledged, and it no longer counts towards their status. An
-- issue that is resolved and seen again is new again, unacknowledged.
CREATE TABLE reconciliation_issues (
    finding_id      text        NOT NULL,
    kind            text        NOT NULL,
    subject         text        NOT NULL,
    first_run_id    text        NOT NULL,
    first_seen_on   timestamptz NOT NULL,
    last_run_id     text        NOT NULL,
    last_seen_on    timestamptz NOT NULL,
    resolved_on     timestamptz,
    acknowledged_on timestamptz,
    ack_note        text,
    CONSTRAINT reconciliation_issues_pkey PRIMARY KEY (finding_id),
    CONSTRAINT reconciliation_issues_key UNIQUE (kind, subject),
    CONSTRAINT reconciliation_issues_finding_id_check CHECK (finding_id ~ '^fnd_[a-z2-7]{26}$'),
    CONSTRAINT reconciliation_issues_ack_check CHECK ((acknowledged_on IS NULL) = (ack_note IS NULL)),
    CONSTRAINT reconciliation_issues_note_check CHECK (length(ack_note) <= 1024)
);

ALTER TABLE reconciliation_findings
    ADD COLUMN finding_id text,
    ADD COLUMN is_new boolean NOT NULL DEFAULT false,
    ADD COLUMN acknowledged boolean NOT NULL DEFAULT false;
CREATE INDEX reconciliation_findings_finding_idx ON reconciliation_findings (finding_id);
