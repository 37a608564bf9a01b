-- The ledger's schema: accounts, instruments, the journal, adjustments,
-- holds, credits, the callbacks' keys and answers, the signing secrets and
-- reconciliation.
--
-- Every rule the database can hold is a named constraint or trigger here,
-- so that a statement that bypasses the Go code still cannot break an
-- invariant (ledger/doc.go lists I1..I6 and what enforces each; the
-- comment beside a constraint names the invariant it holds).
--
-- The functions are declared here, each with its signature and a body
-- that only refuses to run; their definitions are schema/functions/<name>.sql,
-- which Up applies right after the migrations (schema/README.md). A trigger
-- can then name its function here, beside its table.
--
-- Application errors raised by the functions use SQLSTATE class "LA"
-- (ledger adapter). The Go store maps LA001 to LA004 to typed errors; the
-- others are guards that the functions never trip:
--   LA001 account not found          LA002 available would go below zero
--   LA003 account closed             LA004 idempotency key reused with other input
--   LA005 illegal hold transition    LA006 journal or effect is append-only
--   LA008 account identity is immutable, accounts are never deleted
--
-- Key columns compare as COLLATE "C" (byte order): what an identifier
-- means, and cheaper than a locale's rules. Hot tables (holds,
-- settlements, credits, the journal) have no foreign keys to accounts or
-- the journal: each would cost a trigger, a lookup and a row lock on the
-- referenced account per write. The functions write only rows they have
-- read, accounts are never deleted (accounts_guard), and reconciliation
-- checks every link from the outside (ledger/doc.go lists which check
-- covers which).

-- ---------------------------------------------------------------------------
-- Guards shared by several tables

-- Holds, settlements, credits, adjustments and accounts are records of
-- effects: never truncated (LA006). Body: schema/functions/ledger_no_truncate.sql.
CREATE FUNCTION ledger_no_truncate() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ledger_no_truncate is declared, not defined: run ledgerctl migrate'; END$$;

-- ---------------------------------------------------------------------------
-- Accounts

-- The identity columns of accounts are checked by domains, once, when a
-- value is written, not on every update of a balance.
CREATE DOMAIN ledger_account_id AS text COLLATE "C"
    -- Account IDs travel in URL paths: no slash, no white space or control character.
    CONSTRAINT ledger_account_id_check CHECK (VALUE <> '' AND length(VALUE) <= 128
        AND VALUE !~ '[/[:space:][:cntrl:]]');
CREATE DOMAIN ledger_currency AS text COLLATE "C"
    CONSTRAINT ledger_currency_check CHECK (VALUE ~ '^[A-Z]{3}$');
CREATE DOMAIN ledger_account_kind AS text COLLATE "C"
    CONSTRAINT ledger_account_kind_check CHECK (VALUE IN ('customer', 'settlement', 'core'));
CREATE DOMAIN ledger_account_status AS text COLLATE "C"
    CONSTRAINT ledger_account_status_check CHECK (VALUE IN ('open', 'frozen', 'closed'));
CREATE DOMAIN ledger_external_id AS text COLLATE "C"
    CONSTRAINT ledger_external_id_check CHECK (length(VALUE) <= 256);

-- A customer account (the bank's accountID, owned by ownerExternalID), or
-- a system account of a currency: settlement:<CUR>, the other side of
-- every capture and credit, and core:<CUR>, the other side of every
-- adjustment.
CREATE TABLE accounts (
    account_id        ledger_account_id     NOT NULL,
    owner_external_id ledger_external_id    NOT NULL,
    currency          ledger_currency       NOT NULL,
    kind              ledger_account_kind   NOT NULL DEFAULT 'customer'::text,
    status            ledger_account_status NOT NULL DEFAULT 'open'::text,
    balance           numeric               NOT NULL DEFAULT 0,
    held              numeric               NOT NULL DEFAULT 0,
    created_at        timestamptz           NOT NULL,
    updated_at        timestamptz           NOT NULL,
    CONSTRAINT accounts_pkey PRIMARY KEY (account_id),
    CONSTRAINT accounts_held_nonnegative CHECK (held >= 0),
    -- I1: a customer account never commits more than it has.
    CONSTRAINT accounts_available_nonnegative CHECK (kind <> 'customer' OR balance - held >= 0),
    -- System accounts carry no holds and store no balance: theirs is
    -- derived from the journal (account_balances), so that captures and
    -- credits never queue on one hot row.
    CONSTRAINT accounts_system_balance_check CHECK (kind = 'customer' OR (balance = 0 AND held = 0))
)
-- Updates of balance and held stay on their page (HOT) with room to spare.
WITH (fillfactor = 80);

-- GET /v1/accounts?ownerExternalID=… pages by account_id within one owner.
-- Neither column is ever updated (accounts_immutable guards account_id; no
-- function writes owner_external_id), so balance and held updates stay HOT.
CREATE INDEX accounts_owner_idx ON accounts (owner_external_id, account_id);

-- A new account is named as its kind requires (23514
-- accounts_system_id_check); the identity of an account (its ID, kind and
-- currency) never changes (LA008 accounts_immutable), and accounts are never
-- deleted (LA008 accounts_no_delete): every other table names accounts by
-- ID without a foreign key. Body: schema/functions/accounts_guard.sql.
CREATE FUNCTION accounts_guard() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'accounts_guard is declared, not defined: run ledgerctl migrate'; END$$;
CREATE TRIGGER accounts_identity BEFORE INSERT OR UPDATE OF account_id, kind, currency OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_guard();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- ---------------------------------------------------------------------------
-- Instruments: the tokens the service sends as fundingSource or
-- fundingDestination, each mapped to an account.

CREATE TABLE instruments (
    token      text        COLLATE "C" NOT NULL,
    kind       text        NOT NULL,
    account_id text        COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT instruments_pkey PRIMARY KEY (token),
    CONSTRAINT instruments_token_check CHECK (token <> '' AND length(token) <= 256),
    CONSTRAINT instruments_kind_check CHECK (kind IN ('source', 'destination')),
    CONSTRAINT instruments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id)
);

-- ---------------------------------------------------------------------------
-- The journal: one row per transfer

-- A customer account, the system account on the other side, one currency
-- and one signed amount: the row is both entries of its transaction.
CREATE TABLE journal (
    transaction_id    uuid        NOT NULL,
    kind              text        NOT NULL,
    reference         text        COLLATE "C" NOT NULL,
    memo              text        NOT NULL DEFAULT '',
    -- The customer account, and the system account on the other side.
    account_id        text        COLLATE "C" NOT NULL,
    contra_account_id text        COLLATE "C" NOT NULL,
    currency          text        COLLATE "C" NOT NULL,
    -- The change of account_id's balance; contra_account_id's changes by
    -- the opposite: the two entries of the transaction.
    amount            numeric     NOT NULL,
    created_at        timestamptz NOT NULL,
    CONSTRAINT journal_pkey PRIMARY KEY (transaction_id),
    CONSTRAINT journal_amount_nonzero CHECK (amount <> 0),
    CONSTRAINT journal_kind_check CHECK (kind IN ('adjustment', 'capture', 'credit', 'reconciliation')),
    -- I2 by construction, in one currency: the other side is the system
    -- account of the row's own currency (core for adjustments, settlement
    -- for the rest).
    CONSTRAINT journal_contra_check CHECK (contra_account_id = CASE WHEN kind = 'adjustment' THEN 'core:' ELSE 'settlement:' END || currency)
);
CREATE INDEX journal_account_idx ON journal (account_id, created_at);
-- The journal in time order, the order of GET /v1/journal/… without an
-- account: each page starts at its cursor (created_at, transaction_id)
-- instead of sorting the rest of the journal. It costs one index insert per
-- capture, credit and adjustment, at the right edge of the index since
-- created_at grows. The primary key (a UUIDv7) only approximates
-- created_at, which tests pin and callers filter on.
CREATE INDEX journal_time_idx ON journal (created_at, transaction_id);

-- The journal is append-only: no update, delete or truncate, whoever asks
-- (LA006). Body: schema/functions/journal_append_only.sql.
CREATE FUNCTION journal_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'journal_append_only is declared, not defined: run ledgerctl migrate'; END$$;
CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE ON journal
    FOR EACH ROW EXECUTE FUNCTION journal_append_only();
CREATE TRIGGER journal_no_truncate BEFORE TRUNCATE ON journal
    FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only();

-- The journal as entries (two per transaction) and transactions, for
-- readers.
CREATE VIEW journal_entries AS
    SELECT transaction_id, account_id, currency, amount, created_at FROM journal
    UNION ALL
    SELECT transaction_id, contra_account_id, currency, -amount, created_at FROM journal;
CREATE VIEW journal_transactions AS
    SELECT transaction_id, kind, reference, memo, created_at FROM journal;

-- Balances of every account, system accounts' derived from the journal.
CREATE VIEW account_balances AS
    SELECT a.account_id, a.kind, a.currency, a.status,
           CASE WHEN a.kind = 'customer' THEN a.balance ELSE coalesce(s.total, 0) END AS balance,
           a.held
    FROM accounts a
    LEFT JOIN (SELECT contra_account_id, -sum(amount) AS total FROM journal GROUP BY contra_account_id) s
           ON s.contra_account_id = a.account_id;

-- ---------------------------------------------------------------------------
-- Adjustments from the core banking system, idempotent by key per account

CREATE TABLE adjustments (
    idempotency_key text        COLLATE "C" NOT NULL,
    account_id      text        COLLATE "C" NOT NULL,
    amount          numeric     NOT NULL,
    memo            text        NOT NULL DEFAULT '',
    transaction_id  uuid        NOT NULL,
    created_at      timestamptz NOT NULL,
    CONSTRAINT adjustments_pkey PRIMARY KEY (account_id, idempotency_key),
    CONSTRAINT adjustments_key_check CHECK (idempotency_key <> '' AND length(idempotency_key) <= 255),
    CONSTRAINT adjustments_amount_nonzero CHECK (amount <> 0),
    CONSTRAINT adjustments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id)
);
CREATE TRIGGER adjustments_no_truncate BEFORE TRUNCATE ON adjustments
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- ---------------------------------------------------------------------------
-- Holds: placed once, settled once

-- A hold row is written once, when the authorize is approved.
CREATE TABLE holds (
    hold_reference text        COLLATE "C" NOT NULL,
    payout_id      text        COLLATE "C" NOT NULL,
    account_id     text        COLLATE "C" NOT NULL,
    funding_source text        COLLATE "C" NOT NULL,
    currency       text        COLLATE "C" NOT NULL,
    amount         numeric     NOT NULL,
    placed_at      timestamptz NOT NULL,
    CONSTRAINT holds_pkey PRIMARY KEY (hold_reference),
    -- One hold per payout.
    CONSTRAINT holds_payout_id_key UNIQUE (payout_id),
    CONSTRAINT holds_amount_positive CHECK (amount > 0)
);
CREATE INDEX holds_account_idx ON holds (account_id, placed_at);
CREATE INDEX holds_placed_idx ON holds (placed_at);

-- A hold's end, captured or released: one row, written once.
CREATE TABLE hold_settlements (
    hold_reference text        COLLATE "C" NOT NULL,
    status         text        NOT NULL,
    -- captureReference or releaseReference.
    reference      text        COLLATE "C" NOT NULL,
    -- The release reason (cancelled, expired, review_rejected,
    -- reconciliation, …); NULL for captures.
    reason         text,
    -- The capture's journal transaction; NULL for releases.
    transaction_id uuid,
    settled_at     timestamptz NOT NULL,
    -- I3: a hold ends once, in one of captured or released.
    CONSTRAINT hold_settlements_pkey PRIMARY KEY (hold_reference),
    CONSTRAINT hold_settlements_state_check CHECK (
        (status = 'captured' AND transaction_id IS NOT NULL AND reason IS NULL)
        OR (status = 'released' AND transaction_id IS NULL))
);

-- The holds not yet settled, kept beside the append-only holds and
-- hold_settlements so that what is outstanding (every /metrics scrape,
-- every listing of held holds) is read without going through all of
-- history. A row is inserted by the statement that places the hold
-- (cb_authorize, row 12) and deleted by the statement that settles it
-- (hold_settle, row 6). Reconciliation checks it against the holds without
-- a settlement (held_drift, I1).
CREATE TABLE open_holds (
    hold_reference text        COLLATE "C" NOT NULL,
    account_id     text        COLLATE "C" NOT NULL,
    currency       text        COLLATE "C" NOT NULL,
    amount         numeric     NOT NULL,
    placed_at      timestamptz NOT NULL,
    CONSTRAINT open_holds_pkey PRIMARY KEY (hold_reference)
);

-- I3: holds and their settlements are written once and never changed
-- (LA005 holds_transition), nor truncated. Body:
-- schema/functions/holds_append_only.sql.
CREATE FUNCTION holds_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'holds_append_only is declared, not defined: run ledgerctl migrate'; END$$;
CREATE TRIGGER holds_append_only BEFORE UPDATE OR DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION holds_append_only();
CREATE TRIGGER holds_no_truncate BEFORE TRUNCATE ON holds
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();
CREATE TRIGGER hold_settlements_append_only BEFORE UPDATE OR DELETE ON hold_settlements
    FOR EACH ROW EXECUTE FUNCTION holds_append_only();
CREATE TRIGGER hold_settlements_no_truncate BEFORE TRUNCATE ON hold_settlements
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- Holds as the admin API and reconciliation see them.
CREATE VIEW hold_states AS
    SELECT h.hold_reference, h.payout_id, h.account_id, h.funding_source, h.currency, h.amount,
           coalesce(s.status, 'held') AS status,
           CASE WHEN s.status = 'captured' THEN s.reference END AS capture_reference,
           CASE WHEN s.status = 'released' THEN s.reference END AS release_reference,
           s.reason AS release_reason, s.transaction_id, h.placed_at,
           CASE WHEN s.status = 'captured' THEN s.settled_at END AS captured_at,
           CASE WHEN s.status = 'released' THEN s.settled_at END AS released_at
    FROM holds h LEFT JOIN hold_settlements s USING (hold_reference);

-- Captures and releases of hold references this ledger never issued. The
-- first one per reference fixes the reference answered for it ever after;
-- reconciliation reports each as a warning.
CREATE TABLE orphans (
    kind           text        NOT NULL,
    hold_reference text        COLLATE "C" NOT NULL,
    payout_id      text        NOT NULL DEFAULT '',
    reference      text        NOT NULL,
    created_at     timestamptz NOT NULL,
    CONSTRAINT orphans_pkey PRIMARY KEY (kind, hold_reference),
    CONSTRAINT orphans_kind_check CHECK (kind IN ('capture', 'release'))
);

-- ---------------------------------------------------------------------------
-- Credits of paid payment requests

CREATE TABLE credits (
    request_id       text        COLLATE "C" NOT NULL,
    credit_reference text        NOT NULL,
    account_id       text        COLLATE "C" NOT NULL,
    destination      text        NOT NULL,
    currency         text        NOT NULL,
    amount           numeric     NOT NULL,
    transaction_id   uuid        NOT NULL,
    created_at       timestamptz NOT NULL,
    -- I5: a request for payment is credited at most once.
    CONSTRAINT credits_pkey PRIMARY KEY (request_id),
    CONSTRAINT credits_credit_reference_key UNIQUE (credit_reference),
    CONSTRAINT credits_amount_positive CHECK (amount > 0)
);
CREATE TRIGGER credits_no_truncate BEFORE TRUNCATE ON credits
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- ---------------------------------------------------------------------------
-- Callback keys and answers (docs/contract.md §2.8): one table per
-- endpoint, one row per key, written once with its answer in the
-- transaction of the effect

CREATE TABLE callback_authorize (
    -- authorize, capture: payoutID; release: payoutID or holdReference;
    -- credit-account: '' (the key alone is the scope).
    scope            text        COLLATE "C" NOT NULL,
    idempotency_key  text        COLLATE "C" NOT NULL,
    -- SHA-256 of the canonical business claims: tells a replay from a misuse.
    fingerprint      bytea       NOT NULL,
    -- The payoutID (authorize, capture, release) or requestID (credit).
    subject          text        COLLATE "C" NOT NULL,
    -- The stored answer, sent again to every later request with this key.
    outcome          text        NOT NULL,
    reason           text,
    reference        text,
    -- Provenance: the signing key that opened the first request, the
    -- audit-only claims, when it came, and how often the key was received.
    key_fingerprint  text        NOT NULL,
    caller_subject   text,
    audit_request_id text,
    received_at      timestamptz NOT NULL,
    last_received_at timestamptz NOT NULL,
    attempts         integer     NOT NULL DEFAULT 1,
    -- I4: one effect per idempotency key per endpoint.
    CONSTRAINT callback_authorize_pkey PRIMARY KEY (scope, idempotency_key)
);
CREATE TABLE callback_capture (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_capture_pkey PRIMARY KEY (scope, idempotency_key));
CREATE TABLE callback_release (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_release_pkey PRIMARY KEY (scope, idempotency_key));
CREATE TABLE callback_credit (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_credit_pkey PRIMARY KEY (scope, idempotency_key));

-- Purging by age: BRIN, since rows arrive in time order (a few pages of
-- index for millions of rows, next to nothing per insert).
CREATE INDEX callback_authorize_received_idx ON callback_authorize USING brin (received_at);
CREATE INDEX callback_capture_received_idx ON callback_capture USING brin (received_at);
CREATE INDEX callback_release_received_idx ON callback_release USING brin (received_at);
CREATE INDEX callback_credit_received_idx ON callback_credit USING brin (received_at);
-- Reconciliation finds payment requests received under several keys.
CREATE INDEX callback_credit_subject_idx ON callback_credit (subject);

-- Every callback key and answer, for readers (reconciliation, operators).
CREATE VIEW callback_requests AS
    SELECT 'authorize'::text AS endpoint, * FROM callback_authorize
    UNION ALL SELECT 'capture', * FROM callback_capture
    UNION ALL SELECT 'release', * FROM callback_release
    UNION ALL SELECT 'credit-account', * FROM callback_credit;

-- ---------------------------------------------------------------------------
-- The callback keyring: the signing secrets that open ledger callbacks,
-- shared by every replica and kept encrypted at rest
--
-- A secret is stored as AES-256-GCM ciphertext under the key-encryption key
-- (LEDGER_KEK), which never enters the database: a fresh random 12-byte
-- nonce per row and the row's secret_id as additional authenticated data, so
-- a ciphertext moved to another row no longer decrypts. Reading this table,
-- or writing it, without the KEK yields no secret and cannot make the adapter
-- accept a key of the writer's choosing (package keyring decrypts, checks the
-- fingerprint against the plaintext, and skips any row that fails).
--
-- Invariants, each paired with Go code in package keyring:
--   K1 one row per secret: the fingerprint is unique over active and retired
--      rows, so adding a secret twice finds the first row
--      (signing_secrets_fingerprint_key; Store.Add reads the winner).
--   K2 a retired secret is never active again: retiring erases its nonce and
--      ciphertext (signing_secrets_material_check), so no UPDATE can bring it
--      back without the KEK, and K1 refuses it as a new row
--      (Store.Add answers secret-retired).

CREATE TABLE signing_secrets (
    secret_id       text        NOT NULL,
    fingerprint     text        NOT NULL,
    kek_fingerprint text        NOT NULL,
    nonce           bytea,
    ciphertext      bytea,
    source          text        NOT NULL,
    added_on        timestamptz NOT NULL,
    retired_on      timestamptz,
    CONSTRAINT signing_secrets_pkey PRIMARY KEY (secret_id),
    -- K1.
    CONSTRAINT signing_secrets_fingerprint_key UNIQUE (fingerprint),
    CONSTRAINT signing_secrets_secret_id_check CHECK (secret_id ~ '^sec_[a-z2-7]{26}$'),
    CONSTRAINT signing_secrets_fingerprint_check CHECK (fingerprint ~ '^[0-9a-f]{16}$'),
    CONSTRAINT signing_secrets_kek_fingerprint_check CHECK (kek_fingerprint ~ '^[0-9a-f]{16}$'),
    CONSTRAINT signing_secrets_source_check CHECK (source IN ('env', 'api', 'generated', 'dev')),
    -- 12-byte GCM nonce; 32-byte secret plus the 16-byte GCM tag.
    CONSTRAINT signing_secrets_nonce_check CHECK (octet_length(nonce) = 12),
    CONSTRAINT signing_secrets_ciphertext_check CHECK (octet_length(ciphertext) = 48),
    -- K2: active rows carry the encrypted secret, retired rows carry none.
    CONSTRAINT signing_secrets_material_check CHECK (
        (retired_on IS NULL AND nonce IS NOT NULL AND ciphertext IS NOT NULL)
        OR (retired_on IS NOT NULL AND nonce IS NULL AND ciphertext IS NULL)),
    CONSTRAINT signing_secrets_retired_check CHECK (retired_on IS NULL OR retired_on >= added_on)
);

COMMENT ON TABLE signing_secrets IS
    'Callback signing secrets (the keyring), AES-256-GCM encrypted under the KEK; every replica reloads the active rows within seconds.';
COMMENT ON COLUMN signing_secrets.secret_id IS
    'sec_ + 128 random bits (base32); the AAD of the row''s ciphertext.';
COMMENT ON COLUMN signing_secrets.fingerprint IS
    'First 8 bytes of SHA-256 of the secret, hex: safe to log; identifies the secret across replicas and the service.';
COMMENT ON COLUMN signing_secrets.kek_fingerprint IS
    'Identifies the KEK that encrypted the row (domain-separated SHA-256, 8 bytes hex), so a wrong KEK is told from a damaged row.';
COMMENT ON COLUMN signing_secrets.nonce IS
    'Random 12-byte AES-GCM nonce, fresh per row; NULL once retired.';
COMMENT ON COLUMN signing_secrets.ciphertext IS
    'AES-256-GCM(KEK, nonce, secret, AAD = secret_id): 32 bytes and the tag; NULL once retired (erased, not recoverable).';
COMMENT ON COLUMN signing_secrets.source IS
    'How the secret arrived: env (LEDGER_SIGNING_SECRETS), api (admin API add), generated (admin API generate), dev (embedded-mode bootstrap).';
COMMENT ON COLUMN signing_secrets.added_on IS 'When the secret was stored.';
COMMENT ON COLUMN signing_secrets.retired_on IS
    'When the secret was retired; NULL while it is active and opens callbacks.';

-- ---------------------------------------------------------------------------
-- Reconciliation (docs/contract.md §5): every run, its findings, the
-- issues they are instances of, every fix a run applied, and the lease of
-- the one run in progress. Package reconciliation owns these tables.

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
    run_id       text    NOT NULL,
    -- Position of the finding in the run's report.
    seq          integer NOT NULL,
    kind         text    NOT NULL,
    severity     text    NOT NULL,
    subject      text    NOT NULL,
    detail       text    NOT NULL,
    fixed        boolean NOT NULL,
    -- The issue it is an instance of (reconciliation_issues), whether the
    -- run saw it first, and whether an operator had acknowledged it.
    finding_id   text,
    is_new       boolean NOT NULL DEFAULT false,
    acknowledged boolean NOT NULL DEFAULT false,
    CONSTRAINT reconciliation_findings_pkey PRIMARY KEY (run_id, seq),
    CONSTRAINT reconciliation_findings_run_fkey FOREIGN KEY (run_id) REFERENCES reconciliation_runs (run_id),
    CONSTRAINT reconciliation_findings_seq_check CHECK (seq >= 0),
    CONSTRAINT reconciliation_findings_kind_check CHECK (kind ~ '^[a-z][a-z_]{0,63}$'),
    CONSTRAINT reconciliation_findings_severity_check CHECK (severity IN ('warning', 'critical')),
    -- Only missed_release and missed_capture are ever fixed.
    CONSTRAINT reconciliation_findings_fixed_check CHECK (NOT fixed OR kind IN ('missed_release', 'missed_capture'))
);
CREATE INDEX reconciliation_findings_finding_idx ON reconciliation_findings (finding_id);

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

-- The journal of reconciliation's own effects. A fix is a capture or a
-- release of the locked hold (hold_settle, journal kind 'reconciliation'
-- for a capture); this row, written in the same transaction, marks the
-- capture's journal transaction (or the release, which has none; its
-- settlement carries the reason 'reconciliation') as a reconciliation fix,
-- and why it was applied.
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
    CONSTRAINT reconciliation_fixes_run_fkey FOREIGN KEY (run_id) REFERENCES reconciliation_runs (run_id),
    CONSTRAINT reconciliation_fixes_action_check CHECK (action IN ('capture', 'release')),
    CONSTRAINT reconciliation_fixes_transaction_check CHECK ((action = 'capture') = (transaction_id IS NOT NULL))
);
CREATE INDEX reconciliation_fixes_run_idx ON reconciliation_fixes (run_id);

-- The one run in progress: a run takes it (or finds it taken and answers
-- 409 naming the running run), renews it while it runs, and gives it back
-- when done. A replica that dies holding it loses it when it expires. A
-- row, not a session advisory lock, so that it works behind a transaction
-- pooler.
CREATE TABLE reconciliation_lease (
    singleton  boolean     NOT NULL DEFAULT true,
    run_id     text        NOT NULL,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT reconciliation_lease_pkey PRIMARY KEY (singleton),
    CONSTRAINT reconciliation_lease_singleton_check CHECK (singleton)
);

-- ---------------------------------------------------------------------------
-- The functions ledgerd calls: one per callback endpoint, deciding its
-- whole decision table and applying it in one statement, and the admin
-- API's. Declared here; defined in schema/functions/<name>.sql, where each
-- file says what it decides (schema/README.md lists where each decision
-- table lives).

CREATE FUNCTION ledger_ensure_system_accounts(p_currency text, p_now timestamptz) RETURNS void
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ledger_ensure_system_accounts is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION ledger_adjust(
    p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_transaction_id uuid, p_now timestamptz,
    OUT transaction_id uuid, OUT replayed boolean)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ledger_adjust is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION cb_authorize(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_caller_subject text,
    p_audit_request_id text, p_now timestamptz,
    p_payout_id text, p_external_id text, p_funding_source text, p_currency text, p_amount numeric,
    p_fraud_score float8, p_fraud_deny float8, p_fraud_stepup float8, p_hold_reference text,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'cb_authorize is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION hold_settle(
    p_status text, p_hold_reference text, p_payout_id text, p_reference text, p_reason text,
    p_kind text, p_transaction_id uuid, p_now timestamptz,
    OUT outcome text, OUT reason text, OUT reference text, OUT orphan boolean)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hold_settle is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION cb_capture(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_capture_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'cb_capture is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION cb_release(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_reason text, p_release_reference text,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'cb_release is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION cb_credit(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_request_id text, p_destination text, p_requester text, p_currency text, p_amount numeric,
    p_max numeric, p_credit_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'cb_credit is declared, not defined: run ledgerctl migrate'; END$$;
