-- Ledger core: accounts, instruments, the double-entry journal, holds.
--
-- Every rule the database can hold is a named constraint or trigger here, so
-- that a statement that bypasses the Go code still cannot break an invariant
-- (see ledger/doc.go for the list I1..I6 and what enforces each).

-- Application errors raised by the functions below use SQLSTATE class "LA"
-- (ledger adapter); the Go store maps each code to a typed error:
--   LA001 account not found          LA002 available would go below zero
--   LA003 account closed             LA004 idempotency key reused with other input
--   LA005 illegal hold transition    LA006 journal is append-only
--   LA007 hold identity is immutable

CREATE TABLE accounts (
    account_id        text        NOT NULL,
    owner_external_id text        NOT NULL,
    currency          text        NOT NULL,
    kind              text        NOT NULL DEFAULT 'customer',
    status            text        NOT NULL DEFAULT 'open',
    balance           numeric     NOT NULL DEFAULT 0,
    held              numeric     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    CONSTRAINT accounts_pkey PRIMARY KEY (account_id),
    CONSTRAINT accounts_account_currency_key UNIQUE (account_id, currency),
    -- Account IDs travel in URL paths: no slash, no white space or control character.
    CONSTRAINT accounts_account_id_check CHECK (account_id <> '' AND length(account_id) <= 128
        AND account_id !~ '[/[:space:][:cntrl:]]'),
    CONSTRAINT accounts_owner_check CHECK (length(owner_external_id) <= 256),
    CONSTRAINT accounts_currency_check CHECK (currency ~ '^[A-Z]{3}$'),
    CONSTRAINT accounts_kind_check CHECK (kind IN ('customer', 'settlement', 'core')),
    CONSTRAINT accounts_status_check CHECK (status IN ('open', 'frozen', 'closed')),
    CONSTRAINT accounts_system_id_check CHECK (
        (kind = 'customer' AND account_id !~ '^(settlement|core):')
        OR (kind <> 'customer' AND account_id = kind || ':' || currency)),
    CONSTRAINT accounts_held_nonnegative CHECK (held >= 0),
    -- I1: a customer account never commits more than it has.
    CONSTRAINT accounts_available_nonnegative CHECK (kind <> 'customer' OR balance - held >= 0),
    -- System accounts carry no holds and keep their balance in account_shards.
    CONSTRAINT accounts_system_balance_check CHECK (kind = 'customer' OR (balance = 0 AND held = 0))
);

-- System accounts (settlement:<CUR>, core:<CUR>) are touched by every capture,
-- credit and adjustment. Their balance is split over shard rows, and each
-- database session writes the shard pg_backend_pid() % 64, so concurrent
-- transactions from different connections update different rows instead of
-- queueing on one. The account's balance is the sum of its shards.
CREATE TABLE account_shards (
    account_id text    NOT NULL,
    shard      integer NOT NULL,
    balance    numeric NOT NULL DEFAULT 0,
    CONSTRAINT account_shards_pkey PRIMARY KEY (account_id, shard),
    CONSTRAINT account_shards_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id),
    CONSTRAINT account_shards_shard_check CHECK (shard >= 0 AND shard < 64)
);

CREATE TABLE instruments (
    token      text        NOT NULL,
    kind       text        NOT NULL,
    account_id text        NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT instruments_pkey PRIMARY KEY (token),
    CONSTRAINT instruments_token_check CHECK (token <> '' AND length(token) <= 256),
    CONSTRAINT instruments_kind_check CHECK (kind IN ('source', 'destination')),
    CONSTRAINT instruments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id)
);

CREATE TABLE journal_transactions (
    transaction_id uuid        NOT NULL,
    kind           text        NOT NULL,
    reference      text        NOT NULL,
    memo           text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    CONSTRAINT journal_transactions_pkey PRIMARY KEY (transaction_id),
    CONSTRAINT journal_transactions_kind_check CHECK (kind IN ('adjustment', 'capture', 'credit', 'reconciliation'))
);

CREATE TABLE journal_entries (
    entry_id       bigint GENERATED ALWAYS AS IDENTITY,
    transaction_id uuid        NOT NULL,
    account_id     text        NOT NULL,
    currency       text        NOT NULL,
    amount         numeric     NOT NULL,
    created_at     timestamptz NOT NULL,
    CONSTRAINT journal_entries_pkey PRIMARY KEY (entry_id),
    CONSTRAINT journal_entries_transaction_fkey FOREIGN KEY (transaction_id) REFERENCES journal_transactions (transaction_id),
    -- The entry's currency is its account's currency.
    CONSTRAINT journal_entries_account_fkey FOREIGN KEY (account_id, currency) REFERENCES accounts (account_id, currency),
    CONSTRAINT journal_entries_amount_nonzero CHECK (amount <> 0)
);
CREATE INDEX journal_entries_transaction_idx ON journal_entries (transaction_id);
CREATE INDEX journal_entries_account_idx ON journal_entries (account_id);

-- I2: every journal transaction sums to zero per currency, checked at commit
-- so that a transaction's entries may be written by several statements.
CREATE FUNCTION journal_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM journal_entries
               WHERE transaction_id = NEW.transaction_id
               GROUP BY currency HAVING sum(amount) <> 0) THEN
        RAISE EXCEPTION 'journal transaction % does not sum to zero', NEW.transaction_id
            USING ERRCODE = '23514', CONSTRAINT = 'journal_transaction_balanced';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER journal_transaction_balanced
    AFTER INSERT ON journal_entries DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION journal_check_balanced();

-- The journal is append-only: no update, delete or truncate, whoever asks.
CREATE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the journal is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'journal_append_only';
END $$;
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
    FOR EACH ROW EXECUTE FUNCTION journal_append_only();
CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries
    FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only();
CREATE TRIGGER journal_transactions_append_only BEFORE UPDATE OR DELETE ON journal_transactions
    FOR EACH ROW EXECUTE FUNCTION journal_append_only();
CREATE TRIGGER journal_transactions_no_truncate BEFORE TRUNCATE ON journal_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only();

CREATE TABLE holds (
    hold_reference    text        NOT NULL,
    payout_id         text        NOT NULL,
    account_id        text        NOT NULL,
    funding_source    text        NOT NULL,
    currency          text        NOT NULL,
    amount            numeric     NOT NULL,
    status            text        NOT NULL DEFAULT 'held',
    capture_reference text,
    release_reference text,
    release_reason    text,
    transaction_id    uuid,
    placed_at         timestamptz NOT NULL,
    captured_at       timestamptz,
    released_at       timestamptz,
    CONSTRAINT holds_pkey PRIMARY KEY (hold_reference),
    -- One hold per payout.
    CONSTRAINT holds_payout_id_key UNIQUE (payout_id),
    CONSTRAINT holds_capture_reference_key UNIQUE (capture_reference),
    CONSTRAINT holds_release_reference_key UNIQUE (release_reference),
    CONSTRAINT holds_account_fkey FOREIGN KEY (account_id, currency) REFERENCES accounts (account_id, currency),
    CONSTRAINT holds_transaction_fkey FOREIGN KEY (transaction_id) REFERENCES journal_transactions (transaction_id),
    CONSTRAINT holds_amount_positive CHECK (amount > 0),
    CONSTRAINT holds_status_check CHECK (status IN ('held', 'captured', 'released')),
    CONSTRAINT holds_state_check CHECK (
        (status = 'held' AND capture_reference IS NULL AND release_reference IS NULL
            AND transaction_id IS NULL AND captured_at IS NULL AND released_at IS NULL)
        OR (status = 'captured' AND capture_reference IS NOT NULL AND transaction_id IS NOT NULL
            AND captured_at IS NOT NULL AND release_reference IS NULL AND released_at IS NULL)
        OR (status = 'released' AND release_reference IS NOT NULL AND released_at IS NOT NULL
            AND capture_reference IS NULL AND transaction_id IS NULL AND captured_at IS NULL))
);
CREATE INDEX holds_account_held_idx ON holds (account_id) WHERE status = 'held';
CREATE INDEX holds_status_placed_idx ON holds (status, placed_at);

-- I3: only held -> captured and held -> released; the identity of a hold
-- never changes and a hold is never deleted.
CREATE FUNCTION holds_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'holds are never deleted' USING ERRCODE = 'LA005', CONSTRAINT = 'holds_transition';
    END IF;
    IF OLD.status <> 'held' OR NEW.status NOT IN ('captured', 'released') THEN
        RAISE EXCEPTION 'illegal hold transition % -> %', OLD.status, NEW.status
            USING ERRCODE = 'LA005', CONSTRAINT = 'holds_transition';
    END IF;
    IF NEW.hold_reference <> OLD.hold_reference OR NEW.payout_id <> OLD.payout_id
       OR NEW.account_id <> OLD.account_id OR NEW.funding_source <> OLD.funding_source
       OR NEW.currency <> OLD.currency OR NEW.amount <> OLD.amount OR NEW.placed_at <> OLD.placed_at THEN
        RAISE EXCEPTION 'the identity of a hold is immutable'
            USING ERRCODE = 'LA007', CONSTRAINT = 'holds_immutable';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER holds_transition BEFORE UPDATE OR DELETE ON holds
    FOR EACH ROW EXECUTE FUNCTION holds_guard();

-- Holds, credits and adjustments are records of effects: never truncated.
CREATE FUNCTION ledger_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is never truncated', TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'ledger_no_truncate';
END $$;
CREATE TRIGGER holds_no_truncate BEFORE TRUNCATE ON holds
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- Adjustments from the core banking system, idempotent by key per account.
CREATE TABLE adjustments (
    idempotency_key text        NOT NULL,
    account_id      text        NOT NULL,
    amount          numeric     NOT NULL,
    memo            text        NOT NULL DEFAULT '',
    transaction_id  uuid        NOT NULL,
    created_at      timestamptz NOT NULL,
    CONSTRAINT adjustments_pkey PRIMARY KEY (account_id, idempotency_key),
    CONSTRAINT adjustments_key_check CHECK (idempotency_key <> '' AND length(idempotency_key) <= 255),
    CONSTRAINT adjustments_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id),
    CONSTRAINT adjustments_transaction_fkey FOREIGN KEY (transaction_id) REFERENCES journal_transactions (transaction_id),
    CONSTRAINT adjustments_amount_nonzero CHECK (amount <> 0)
);

-- I5: a request for payment is credited at most once.
CREATE TABLE credits (
    request_id        text        NOT NULL,
    credit_reference  text        NOT NULL,
    account_id        text        NOT NULL,
    destination       text        NOT NULL,
    currency          text        NOT NULL,
    amount            numeric     NOT NULL,
    transaction_id    uuid        NOT NULL,
    created_at        timestamptz NOT NULL,
    CONSTRAINT credits_pkey PRIMARY KEY (request_id),
    CONSTRAINT credits_credit_reference_key UNIQUE (credit_reference),
    CONSTRAINT credits_account_fkey FOREIGN KEY (account_id, currency) REFERENCES accounts (account_id, currency),
    CONSTRAINT credits_transaction_fkey FOREIGN KEY (transaction_id) REFERENCES journal_transactions (transaction_id),
    CONSTRAINT credits_amount_positive CHECK (amount > 0)
);

-- Captures and releases of hold references this ledger never issued. The
-- first one per reference fixes the reference answered for it ever after;
-- reconciliation reports each as a warning.
CREATE TABLE orphans (
    kind           text        NOT NULL,
    hold_reference text        NOT NULL,
    payout_id      text        NOT NULL DEFAULT '',
    reference      text        NOT NULL,
    created_at     timestamptz NOT NULL,
    CONSTRAINT orphans_pkey PRIMARY KEY (kind, hold_reference),
    CONSTRAINT orphans_kind_check CHECK (kind IN ('capture', 'release'))
);

CREATE TRIGGER credits_no_truncate BEFORE TRUNCATE ON credits
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();
CREATE TRIGGER adjustments_no_truncate BEFORE TRUNCATE ON adjustments
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();
