-- Callback path v2: the same rules at less than half the Postgres work per
-- callback (measured in docs/benchmarks.md). What changes, and why:
--
--   * The journal is one row per transfer: a customer account, the system
--     account on the other side, one currency and one signed amount. Both
--     entries of a transaction are the two sides of that row, so every
--     transaction sums to zero by construction (I2); the deferred per-row
--     trigger that checked it at commit is gone. journal_entries and
--     journal_transactions remain as views with the old columns.
--   * System balances (settlement:<CUR>, core:<CUR>) are derived from the
--     journal instead of moved on every capture and credit: no shard upsert
--     and no hot row. account_shards is gone.
--   * A hold row is written once. Its end (captured or released) is one
--     row of hold_settlements, whose primary key lets a hold end once (I3);
--     both tables are append-only. The view hold_states shows the old
--     columns (status, references, times).
--   * Each callback's key row is written once, with its answer: concurrent
--     requests of one key (and, for authorize, of one payout; for credits,
--     of one payment request) queue on a transaction-scoped advisory lock
--     instead of on a claimed row that is then updated. The primary key
--     still refuses a second row for a key. The answer is stored as its
--     columns (outcome, reason, reference); the response's JSON is built
--     once, in Go.
--   * Identity columns of accounts are checked by domains, when a value is
--     written, not on every update of a balance; CHECK constraints on hot
--     tables are only those that guard money. Key columns compare as
--     COLLATE "C" (byte order): cheaper than a locale's rules, and what an
--     identifier means.
--   * Foreign keys from hot tables (holds, settlements, credits, the
--     journal) to accounts and the journal are dropped: each cost a
--     trigger, a lookup and a row lock on the referenced account per write
--     (a shared lock on settlement:<CUR> from every capture). The functions
--     below write only rows they have read, accounts are never deleted
--     (accounts_no_delete), and reconciliation checks every link from the
--     outside (ledger/doc.go lists which check covers which).
--   * The callback tables are four plain tables (no partition routing).
--
-- Every decision table of design 2.3-2.6 is in one function per endpoint
-- (cb_authorize, cb_capture, cb_release, cb_credit), each row labelled.
-- Existing data is carried over; on a large database the migration rewrites
-- the journal and the callback tables once.

-- ---------------------------------------------------------------------------
-- Accounts

CREATE DOMAIN ledger_account_id AS text COLLATE "C"
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

ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_account_fkey;
ALTER TABLE instruments DROP CONSTRAINT instruments_account_fkey;
ALTER TABLE holds DROP CONSTRAINT holds_account_fkey;
ALTER TABLE holds DROP CONSTRAINT holds_transaction_fkey;
ALTER TABLE credits DROP CONSTRAINT credits_account_fkey;
ALTER TABLE credits DROP CONSTRAINT credits_transaction_fkey;
ALTER TABLE adjustments DROP CONSTRAINT adjustments_account_fkey;
ALTER TABLE adjustments DROP CONSTRAINT adjustments_transaction_fkey;
ALTER TABLE reconciliation_fixes DROP CONSTRAINT reconciliation_fixes_transaction_fkey;
ALTER TABLE reconciliation_fixes DROP CONSTRAINT reconciliation_fixes_hold_fkey;

ALTER TABLE accounts
    DROP CONSTRAINT accounts_account_id_check,
    DROP CONSTRAINT accounts_owner_check,
    DROP CONSTRAINT accounts_currency_check,
    DROP CONSTRAINT accounts_kind_check,
    DROP CONSTRAINT accounts_status_check,
    DROP CONSTRAINT accounts_system_id_check,
    DROP CONSTRAINT accounts_system_balance_check;
DROP TABLE account_shards;
DROP FUNCTION ledger_post_shard(text, numeric);
DROP FUNCTION ledger_journal_pair(uuid, text, text, text, timestamptz, text, text, text, numeric);
ALTER TABLE accounts DROP CONSTRAINT accounts_account_currency_key;
ALTER TABLE accounts
    ALTER COLUMN account_id TYPE ledger_account_id,
    ALTER COLUMN owner_external_id TYPE ledger_external_id,
    ALTER COLUMN currency TYPE ledger_currency,
    ALTER COLUMN kind TYPE ledger_account_kind,
    ALTER COLUMN status TYPE ledger_account_status,
    -- System accounts carry no holds and store no balance: theirs is
    -- derived from the journal.
    ADD CONSTRAINT accounts_system_balance_check CHECK (kind = 'customer' OR (balance = 0 AND held = 0));
-- Updates of balance and held stay on their page (HOT) with room to spare.
ALTER TABLE accounts SET (fillfactor = 80);

-- The identity of an account (its ID, kind and currency) never changes, and
-- accounts are never deleted: every other table names accounts by ID
-- without a foreign key.
CREATE FUNCTION accounts_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF (NEW.kind = 'customer') = (NEW.account_id ~ '^(settlement|core):')
           OR (NEW.kind <> 'customer' AND NEW.account_id <> NEW.kind || ':' || NEW.currency) THEN
            RAISE EXCEPTION 'account % of kind % is misnamed', NEW.account_id, NEW.kind
                USING ERRCODE = '23514', CONSTRAINT = 'accounts_system_id_check';
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'accounts are never deleted' USING ERRCODE = 'LA008', CONSTRAINT = 'accounts_no_delete';
    END IF;
    RAISE EXCEPTION 'the identity of an account is immutable' USING ERRCODE = 'LA008', CONSTRAINT = 'accounts_immutable';
END $$;
CREATE TRIGGER accounts_identity BEFORE INSERT OR UPDATE OF account_id, kind, currency OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_guard();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

ALTER TABLE instruments ALTER COLUMN token TYPE text COLLATE "C", ALTER COLUMN account_id TYPE text COLLATE "C";
ALTER TABLE instruments ADD CONSTRAINT instruments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id);
ALTER TABLE adjustments ALTER COLUMN account_id TYPE text COLLATE "C", ALTER COLUMN idempotency_key TYPE text COLLATE "C";
ALTER TABLE adjustments ADD CONSTRAINT adjustments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id);

-- ---------------------------------------------------------------------------
-- The journal: one row per transfer

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
    CONSTRAINT journal_contra_check CHECK (contra_account_id = CASE WHEN kind = 'adjustment' THEN 'core:' ELSE 'settlement:' END || currency)
);
CREATE INDEX journal_account_idx ON journal (account_id, created_at);

-- Carry the journal over: each transaction was one customer entry and its
-- system entry. Anything else stops the migration.
DO $$
DECLARE
    n_tx bigint;
    n_moved bigint;
BEGIN
    SELECT count(*) INTO n_tx FROM journal_transactions;
    INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
    SELECT t.transaction_id, t.kind, t.reference, t.memo, c.account_id, s.account_id, c.currency, c.amount, t.created_at
    FROM journal_transactions t
    JOIN journal_entries c ON c.transaction_id = t.transaction_id AND c.account_id !~ '^(settlement|core):'
    JOIN journal_entries s ON s.transaction_id = t.transaction_id AND s.account_id ~ '^(settlement|core):'
    WHERE c.amount = -s.amount AND c.currency = s.currency
      AND (SELECT count(*) FROM journal_entries e WHERE e.transaction_id = t.transaction_id) = 2;
    GET DIAGNOSTICS n_moved = ROW_COUNT;
    IF n_moved <> n_tx THEN
        RAISE EXCEPTION 'journal migration: % of % transactions are not one customer entry and its system entry', n_tx - n_moved, n_tx;
    END IF;
END $$;
DROP TABLE journal_entries;
DROP TABLE journal_transactions;
DROP FUNCTION journal_check_balanced();

-- The journal as entries (two per transaction) and transactions, for
-- readers.
CREATE VIEW journal_entries AS
    SELECT transaction_id, account_id, currency, amount, created_at FROM journal
    UNION ALL
    SELECT transaction_id, contra_account_id, currency, -amount, created_at FROM journal;
CREATE VIEW journal_transactions AS
    SELECT transaction_id, kind, reference, memo, created_at FROM journal;

CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE ON journal
    FOR EACH ROW EXECUTE FUNCTION journal_append_only();
CREATE TRIGGER journal_no_truncate BEFORE TRUNCATE ON journal
    FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only();

-- Balances of every account, system accounts derived from the journal.
CREATE VIEW account_balances AS
    SELECT a.account_id, a.kind, a.currency, a.status,
           CASE WHEN a.kind = 'customer' THEN a.balance ELSE coalesce(s.total, 0) END AS balance,
           a.held
    FROM accounts a
    LEFT JOIN (SELECT contra_account_id, -sum(amount) AS total FROM journal GROUP BY contra_account_id) s
           ON s.contra_account_id = a.account_id;

-- ---------------------------------------------------------------------------
-- Holds: placed once, settled once

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
    CONSTRAINT hold_settlements_pkey PRIMARY KEY (hold_reference),
    CONSTRAINT hold_settlements_state_check CHECK (
        (status = 'captured' AND transaction_id IS NOT NULL AND reason IS NULL)
        OR (status = 'released' AND transaction_id IS NULL))
);
INSERT INTO hold_settlements (hold_reference, status, reference, reason, transaction_id, settled_at)
SELECT hold_reference, status, coalesce(capture_reference, release_reference),
       CASE WHEN status = 'released' THEN release_reason END, transaction_id, coalesce(captured_at, released_at)
FROM holds WHERE status <> 'held';

DROP TRIGGER holds_transition ON holds;
DROP FUNCTION holds_guard();
DROP INDEX holds_account_held_idx;
DROP INDEX holds_status_placed_idx;
ALTER TABLE holds
    DROP CONSTRAINT holds_state_check,
    DROP CONSTRAINT holds_status_check,
    DROP CONSTRAINT holds_capture_reference_key,
    DROP CONSTRAINT holds_release_reference_key,
    DROP COLUMN status, DROP COLUMN capture_reference, DROP COLUMN release_reference,
    DROP COLUMN release_reason, DROP COLUMN transaction_id, DROP COLUMN captured_at, DROP COLUMN released_at;
ALTER TABLE holds
    ALTER COLUMN hold_reference TYPE text COLLATE "C",
    ALTER COLUMN payout_id TYPE text COLLATE "C",
    ALTER COLUMN account_id TYPE text COLLATE "C",
    ALTER COLUMN funding_source TYPE text COLLATE "C",
    ALTER COLUMN currency TYPE text COLLATE "C";
CREATE INDEX holds_account_idx ON holds (account_id, placed_at);
CREATE INDEX holds_placed_idx ON holds (placed_at);

-- I3: holds and their settlements are written once and never changed.
CREATE FUNCTION holds_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'illegal hold transition: % on % (a hold is placed once and settled once)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA005', CONSTRAINT = 'holds_transition';
END $$;
CREATE TRIGGER holds_append_only BEFORE UPDATE OR DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION holds_append_only();
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

ALTER TABLE credits ALTER COLUMN request_id TYPE text COLLATE "C", ALTER COLUMN account_id TYPE text COLLATE "C";
ALTER TABLE orphans ALTER COLUMN hold_reference TYPE text COLLATE "C";

-- ---------------------------------------------------------------------------
-- Callback keys and answers: one table per endpoint, one write per key

-- The partitions of callback_requests give their names to the new tables.
ALTER TABLE callback_authorize RENAME TO callback_authorize_v1;
ALTER TABLE callback_capture RENAME TO callback_capture_v1;
ALTER TABLE callback_release RENAME TO callback_release_v1;
ALTER TABLE callback_credit RENAME TO callback_credit_v1;
ALTER INDEX callback_authorize_pkey RENAME TO callback_authorize_v1_pkey;
ALTER INDEX callback_capture_pkey RENAME TO callback_capture_v1_pkey;
ALTER INDEX callback_release_pkey RENAME TO callback_release_v1_pkey;
ALTER INDEX callback_credit_pkey RENAME TO callback_credit_v1_pkey;

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
    CONSTRAINT callback_authorize_pkey PRIMARY KEY (scope, idempotency_key)
);
CREATE TABLE callback_capture (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_capture_pkey PRIMARY KEY (scope, idempotency_key));
CREATE TABLE callback_release (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_release_pkey PRIMARY KEY (scope, idempotency_key));
CREATE TABLE callback_credit (LIKE callback_authorize INCLUDING DEFAULTS,
    CONSTRAINT callback_credit_pkey PRIMARY KEY (scope, idempotency_key));

DO $$
DECLARE
    ep text;
    t text;
    ref text;
BEGIN
    FOR ep, t, ref IN VALUES ('authorize', 'callback_authorize', 'holdReference'),
                             ('capture', 'callback_capture', 'captureReference'),
                             ('release', 'callback_release', 'releaseReference'),
                             ('credit-account', 'callback_credit', 'creditReference') LOOP
        EXECUTE format($f$
            INSERT INTO %I (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
                key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at, attempts)
            SELECT scope, idempotency_key, fingerprint, subject, outcome, reason, response->>%L,
                key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at, attempts
            FROM callback_requests WHERE endpoint = %L AND outcome IS NOT NULL$f$, t, ref, ep);
    END LOOP;
END $$;
DROP TABLE callback_requests;
DROP FUNCTION cb_authorize(text, bytea, text, text, text, timestamptz, boolean, text, text, text, text, numeric, text, text);
DROP FUNCTION cb_capture(text, bytea, text, timestamptz, text, text, text, uuid);
DROP FUNCTION cb_release(text, bytea, text, timestamptz, text, text, text, text);
DROP FUNCTION cb_credit(text, bytea, text, timestamptz, text, text, text, text, numeric, numeric, text, uuid);
DROP FUNCTION cb_begin(text, text, text, bytea, text, text, text, text, timestamptz, boolean);
DROP FUNCTION hold_place(text, text, text, text, numeric, text, text, timestamptz);
DROP FUNCTION hold_capture(text, text, text, uuid, timestamptz);
DROP FUNCTION hold_release(text, text, text, text, timestamptz);
DROP FUNCTION hold_orphan(text, text, text, text, timestamptz);
DROP FUNCTION ledger_credit(text, text, text, text, numeric, numeric, text, uuid, timestamptz);
DROP FUNCTION ledger_adjust(text, numeric, text, text, uuid, timestamptz);
DROP TYPE ledger_decision;

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
-- The functions. Each:
--   * takes the current time as a parameter (tests pin it);
--   * takes its locks in one fixed order: transaction-scoped advisory
--     locks (key scope, then payout or payment request), then the customer
--     account row, then the settlement's primary key entry, so that
--     concurrent calls never deadlock;
--   * runs under READ COMMITTED: every statement sees rows committed
--     before it started, so a statement after a lock wait sees what the
--     lock holder committed;
--   * composes into the caller's transaction (it never commits).
-- Advisory lock classes (the first key of pg_advisory_xact_lock(int, int)):
--   1 authorize payout, 2 capture key scope, 3 release key scope,
--   4 credit key, 5 credit payment request.

-- ledger_adjust applies a signed adjustment from the core banking system,
-- idempotent by key per account. Returns the transaction and whether it was
-- a replay.
CREATE FUNCTION ledger_adjust(
    p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_transaction_id uuid, p_now timestamptz,
    OUT transaction_id uuid, OUT replayed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    a accounts%ROWTYPE;
    prior adjustments%ROWTYPE;
BEGIN
    SELECT * INTO a FROM accounts WHERE account_id = p_account_id AND kind = 'customer' FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'account not found' USING ERRCODE = 'LA001';
    END IF;
    SELECT * INTO prior FROM adjustments WHERE account_id = p_account_id AND idempotency_key = p_key;
    IF FOUND THEN
        IF prior.amount <> p_amount OR prior.memo <> p_memo THEN
            RAISE EXCEPTION 'idempotency key reused with another adjustment' USING ERRCODE = 'LA004';
        END IF;
        transaction_id := prior.transaction_id;
        replayed := true;
        RETURN;
    END IF;
    IF a.status = 'closed' THEN
        RAISE EXCEPTION 'account is closed' USING ERRCODE = 'LA003';
    END IF;
    IF a.balance - a.held + p_amount < 0 THEN
        RAISE EXCEPTION 'available would go below zero' USING ERRCODE = 'LA002';
    END IF;
    INSERT INTO adjustments (idempotency_key, account_id, amount, memo, transaction_id, created_at)
    VALUES (p_key, p_account_id, p_amount, p_memo, p_transaction_id, p_now);
    UPDATE accounts SET balance = balance + p_amount, updated_at = p_now WHERE account_id = p_account_id;
    INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
    VALUES (p_transaction_id, 'adjustment', p_key, p_memo, p_account_id, 'core:' || a.currency, a.currency, p_amount, p_now);
    transaction_id := p_transaction_id;
    replayed := false;
END $$;

-- cb_authorize decides an authorize (design 2.3) and applies it: the whole
-- table, rows 1 to 12, first matching row wins. state is 'new' (decided
-- now), 'replay' (the stored answer of this key), 'mismatch' (row 1a) or
-- 'invalid' (row 2: fraudScore outside 0..1; nothing is stored).
CREATE FUNCTION cb_authorize(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_caller_subject text,
    p_audit_request_id text, p_now timestamptz,
    p_payout_id text, p_external_id text, p_funding_source text, p_currency text, p_amount numeric,
    p_fraud_score float8, p_fraud_deny float8, p_fraud_stepup float8, p_hold_reference text,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
DECLARE
    seen bytea;
    held_by text;
    h holds%ROWTYPE;
    a accounts%ROWTYPE;
BEGIN
    -- Authorizes of one payout run one after the other, under any key: a
    -- second one sees the first's stored answer (row 1) or its hold (rows
    -- 3 and 4), never funds the first has already held.
    PERFORM pg_advisory_xact_lock(1, hashtext(p_payout_id));
    -- The key's stored answer and the payout's hold, if any, in one look.
    SELECT r.fingerprint, r.outcome, r.reason, r.reference,
           (SELECT x.hold_reference FROM holds x WHERE x.payout_id = p_payout_id)
    INTO seen, outcome, reason, reference, held_by
    FROM (SELECT) one LEFT JOIN callback_authorize r ON r.scope = p_payout_id AND r.idempotency_key = p_key;
    -- Row 1: the key was seen: its stored answer; 1a: with other claims.
    IF seen IS NOT NULL THEN
        IF seen <> p_fingerprint THEN
            state := 'mismatch'; outcome := NULL; reason := NULL; reference := NULL;
            RETURN;
        END IF;
        UPDATE callback_authorize SET attempts = attempts + 1, last_received_at = p_now
        WHERE scope = p_payout_id AND idempotency_key = p_key;
        state := 'replay';
        RETURN;
    END IF;
    -- Row 2: fraudScore outside 0..1: a bad request (400), nothing stored.
    IF NOT (p_fraud_score BETWEEN 0 AND 1) THEN
        state := 'invalid';
        RETURN;
    END IF;
    state := 'new';
    outcome := 'denied';
    IF held_by IS NOT NULL THEN
        SELECT * INTO h FROM holds WHERE hold_reference = held_by;
        IF h.amount = p_amount AND h.currency = p_currency AND h.funding_source = p_funding_source
           AND NOT EXISTS (SELECT 1 FROM hold_settlements s WHERE s.hold_reference = h.hold_reference) THEN
            -- Row 3: this payout's hold, held, same amount and source.
            outcome := 'approved';
            reference := h.hold_reference;
        ELSE
            -- Row 4: this payout was authorized otherwise.
            reason := 'payout_already_authorized';
        END IF;
    ELSE
        SELECT x.* INTO a FROM instruments i JOIN accounts x ON x.account_id = i.account_id
        WHERE i.token = p_funding_source AND i.kind = 'source'
        FOR NO KEY UPDATE OF x;
        IF NOT FOUND THEN
            reason := 'unknown_funding_source';                 -- row 5
        ELSIF a.owner_external_id <> p_external_id THEN
            reason := 'funding_source_mismatch';                -- row 6
        ELSIF a.status <> 'open' THEN
            reason := 'account_unavailable';                    -- row 7
        ELSIF a.currency <> p_currency THEN
            reason := 'currency_mismatch';                      -- row 8
        ELSIF p_fraud_score >= p_fraud_deny THEN
            reason := 'fraud_suspected';                        -- row 9
        ELSIF p_fraud_score >= p_fraud_stepup THEN
            reason := 'step_up_required';                       -- row 10
        ELSIF a.balance - a.held < p_amount THEN
            reason := 'insufficient_funds';                     -- row 11
        ELSE
            -- Row 12: approved: the hold is placed on the locked account,
            -- and the answer stored, in one statement.
            WITH hold AS (
                INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
                VALUES (p_hold_reference, p_payout_id, a.account_id, p_funding_source, p_currency, p_amount, p_now)
            ), held AS (
                UPDATE accounts SET held = held + p_amount, updated_at = p_now WHERE account_id = a.account_id
            )
            INSERT INTO callback_authorize (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
                key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at)
            VALUES (p_payout_id, p_key, p_fingerprint, p_payout_id, 'approved', NULL, p_hold_reference,
                p_key_fingerprint, p_caller_subject, p_audit_request_id, p_now, p_now);
            outcome := 'approved';
            reference := p_hold_reference;
            RETURN;
        END IF;
    END IF;
    INSERT INTO callback_authorize (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at)
    VALUES (p_payout_id, p_key, p_fingerprint, p_payout_id, outcome, reason, reference,
        p_key_fingerprint, p_caller_subject, p_audit_request_id, p_now, p_now);
END $$;

-- hold_settle captures (p_status 'captured') or releases ('released') a
-- hold: design 2.4 and 2.5, rows 2 to 6. A capture moves the sender's
-- balance and held down by the amount and journals it against
-- settlement:<CUR> (p_kind: 'capture', or 'reconciliation' for a fix); a
-- release only lowers held. p_payout_id NULL skips the payout check. A hold
-- reference never issued is approved with the reference first answered
-- for it (recorded in orphans). Used by cb_capture, cb_release and
-- reconciliation's fixes.
CREATE FUNCTION hold_settle(
    p_status text, p_hold_reference text, p_payout_id text, p_reference text, p_reason text,
    p_kind text, p_transaction_id uuid, p_now timestamptz,
    OUT outcome text, OUT reason text, OUT reference text, OUT orphan boolean)
LANGUAGE plpgsql AS $$
DECLARE
    h holds%ROWTYPE;
    s hold_settlements%ROWTYPE;
    capture boolean := p_status = 'captured';
    settled_now boolean;
    k text := CASE WHEN p_status = 'captured' THEN 'capture' ELSE 'release' END;
BEGIN
    orphan := false;
    SELECT * INTO h FROM holds WHERE hold_reference = p_hold_reference;
    IF NOT FOUND THEN
        -- Row 2: never issued here: approved, with the reference answered
        -- for this holdReference the first time, ever after.
        INSERT INTO orphans AS o (kind, hold_reference, payout_id, reference, created_at)
        VALUES (k, p_hold_reference, coalesce(p_payout_id, ''), p_reference, p_now)
        ON CONFLICT (kind, hold_reference) DO NOTHING
        RETURNING o.reference INTO reference;
        IF reference IS NULL THEN
            SELECT o.reference INTO reference FROM orphans o WHERE o.kind = k AND o.hold_reference = p_hold_reference;
        END IF;
        outcome := 'approved';
        orphan := true;
        RETURN;
    END IF;
    IF p_payout_id IS NOT NULL AND h.payout_id <> p_payout_id THEN
        outcome := 'failed';                                     -- row 3
        reason := 'payout_mismatch';
        RETURN;
    END IF;
    -- The hold's one settlement: a concurrent capture or release of it
    -- waits on its key for the first to commit, then finds its row. When it
    -- is written (row 6: the hold was held), the account moves, and for a
    -- capture the journal debits the sender and credits settlement, in the
    -- same statement.
    WITH settled AS (
        INSERT INTO hold_settlements (hold_reference, status, reference, reason, transaction_id, settled_at)
        VALUES (p_hold_reference, p_status, p_reference, CASE WHEN NOT capture THEN p_reason END,
                CASE WHEN capture THEN p_transaction_id END, p_now)
        ON CONFLICT (hold_reference) DO NOTHING
        RETURNING hold_reference
    ), moved AS (
        UPDATE accounts SET balance = balance - CASE WHEN capture THEN h.amount ELSE 0 END,
                            held = held - h.amount, updated_at = p_now
        WHERE account_id = h.account_id AND EXISTS (SELECT 1 FROM settled)
    ), journaled AS (
        INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
        SELECT p_transaction_id, p_kind, p_reference, h.payout_id, h.account_id, 'settlement:' || h.currency,
               h.currency, -h.amount, p_now
        FROM settled WHERE capture
    )
    SELECT count(*) = 1 INTO settled_now FROM settled;
    IF settled_now THEN
        outcome := 'approved';                                   -- row 6
        reference := p_reference;
        RETURN;
    END IF;
    SELECT * INTO s FROM hold_settlements WHERE hold_reference = p_hold_reference;
    IF s.status = p_status THEN
        outcome := 'approved';                                   -- row 4: the original reference
        reference := s.reference;
    ELSE
        outcome := 'failed';                                     -- row 5
        reason := CASE WHEN p_status = 'captured' THEN 'hold_released' ELSE 'hold_captured' END;
    END IF;
END $$;

-- cb_capture: design 2.4. Row 1 here; rows 2 to 6 in hold_settle.
CREATE FUNCTION cb_capture(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_capture_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
DECLARE
    r callback_capture%ROWTYPE;
    d record;
BEGIN
    PERFORM pg_advisory_xact_lock(2, hashtext(p_payout_id));
    SELECT * INTO r FROM callback_capture WHERE scope = p_payout_id AND idempotency_key = p_key;
    IF FOUND THEN
        IF r.fingerprint <> p_fingerprint THEN
            state := 'mismatch';
            RETURN;
        END IF;
        UPDATE callback_capture SET attempts = attempts + 1, last_received_at = p_now
        WHERE scope = p_payout_id AND idempotency_key = p_key;
        state := 'replay'; outcome := r.outcome; reason := r.reason; reference := r.reference;
        RETURN;
    END IF;
    SELECT * INTO d FROM hold_settle('captured', p_hold_reference, p_payout_id, p_capture_reference, NULL,
                                     'capture', p_transaction_id, p_now);
    state := 'new'; outcome := d.outcome; reason := d.reason; reference := d.reference;
    INSERT INTO callback_capture (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, received_at, last_received_at)
    VALUES (p_payout_id, p_key, p_fingerprint, p_payout_id, outcome, reason, reference,
        p_key_fingerprint, p_now, p_now);
END $$;

-- cb_release: design 2.5. The key's scope is the payoutID when given, else
-- the holdReference. Row 1 here; rows 2 to 6 in hold_settle.
CREATE FUNCTION cb_release(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_reason text, p_release_reference text,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
DECLARE
    r callback_release%ROWTYPE;
    d record;
    v_scope text := coalesce(p_payout_id, p_hold_reference);
BEGIN
    PERFORM pg_advisory_xact_lock(3, hashtext(v_scope));
    SELECT * INTO r FROM callback_release WHERE scope = v_scope AND idempotency_key = p_key;
    IF FOUND THEN
        IF r.fingerprint <> p_fingerprint THEN
            state := 'mismatch';
            RETURN;
        END IF;
        UPDATE callback_release SET attempts = attempts + 1, last_received_at = p_now
        WHERE scope = v_scope AND idempotency_key = p_key;
        state := 'replay'; outcome := r.outcome; reason := r.reason; reference := r.reference;
        RETURN;
    END IF;
    SELECT * INTO d FROM hold_settle('released', p_hold_reference, p_payout_id, p_release_reference, p_reason,
                                     NULL, NULL, p_now);
    state := 'new'; outcome := d.outcome; reason := d.reason; reference := d.reference;
    INSERT INTO callback_release (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, received_at, last_received_at)
    VALUES (v_scope, p_key, p_fingerprint, v_scope, outcome, reason, reference,
        p_key_fingerprint, p_now, p_now);
END $$;

-- cb_credit decides a credit-account request (design 2.6) and applies it:
-- rows 1 to 9. p_max NULL means no limit.
CREATE FUNCTION cb_credit(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_request_id text, p_destination text, p_requester text, p_currency text, p_amount numeric,
    p_max numeric, p_credit_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
DECLARE
    r callback_credit%ROWTYPE;
    a accounts%ROWTYPE;
BEGIN
    PERFORM pg_advisory_xact_lock(4, hashtext(p_key));
    -- Row 1: the key was seen.
    SELECT * INTO r FROM callback_credit WHERE scope = '' AND idempotency_key = p_key;
    IF FOUND THEN
        IF r.fingerprint <> p_fingerprint THEN
            state := 'mismatch';
            RETURN;
        END IF;
        UPDATE callback_credit SET attempts = attempts + 1, last_received_at = p_now
        WHERE scope = '' AND idempotency_key = p_key;
        state := 'replay'; outcome := r.outcome; reason := r.reason; reference := r.reference;
        RETURN;
    END IF;
    state := 'new';
    -- Credits of one payment request (under other keys) run one after the
    -- other, so that a second one always sees the first's credit (row 2).
    PERFORM pg_advisory_xact_lock(5, hashtext(p_request_id));
    SELECT c.credit_reference INTO reference FROM credits c WHERE c.request_id = p_request_id;
    IF FOUND THEN
        outcome := 'approved';                                   -- row 2
    ELSE
        SELECT x.* INTO a FROM instruments i JOIN accounts x ON x.account_id = i.account_id
        WHERE i.token = p_destination AND i.kind = 'destination'
        FOR NO KEY UPDATE OF x;
        IF NOT FOUND THEN
            outcome := 'destination_unavailable'; reason := 'unknown_destination';   -- row 3
        ELSIF a.status = 'closed' THEN
            outcome := 'destination_unavailable'; reason := 'account_closed';        -- row 4
        ELSIF a.owner_external_id <> p_requester THEN
            outcome := 'refused'; reason := 'destination_mismatch';                  -- row 5
        ELSIF a.status = 'frozen' THEN
            outcome := 'refused'; reason := 'account_frozen';                        -- row 6
        ELSIF a.currency <> p_currency THEN
            outcome := 'refused'; reason := 'currency_mismatch';                     -- row 7
        ELSIF p_max IS NOT NULL AND p_amount > p_max THEN
            outcome := 'refused'; reason := 'amount_over_limit';                     -- row 8
        ELSE
            -- Row 9: approved: the journal debits settlement, credits the account.
            INSERT INTO credits (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
            VALUES (p_request_id, p_credit_reference, a.account_id, p_destination, p_currency, p_amount, p_transaction_id, p_now);
            UPDATE accounts SET balance = balance + p_amount, updated_at = p_now WHERE account_id = a.account_id;
            INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
            VALUES (p_transaction_id, 'credit', p_credit_reference, p_request_id, a.account_id, 'settlement:' || p_currency,
                    p_currency, p_amount, p_now);
            outcome := 'approved';
            reference := p_credit_reference;
        END IF;
    END IF;
    INSERT INTO callback_credit (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, received_at, last_received_at)
    VALUES ('', p_key, p_fingerprint, p_request_id, outcome, reason, reference,
        p_key_fingerprint, p_now, p_now);
END $$;
