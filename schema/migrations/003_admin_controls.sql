-- Bank controls of the admin API (docs/admin-api.md): named admin tokens
-- with scopes, the hash-chained audit trail of every admin write and every
-- refused attempt, and dual control of large adjustments.
--
-- The functions are declared here and defined in schema/functions/ (see
-- 001_baseline.sql). Errors of the new functions and guards (class LA):
--   LA009 adjustment not found        LA010 adjustment rejected
--   LA011 adjustment expired          LA012 its maker cannot approve it
--   LA013 adjustment already posted   LA006 append-only (the audit trail)
--   LA014 an admin token's record is immutable but for its revocation

-- ---------------------------------------------------------------------------
-- Admin tokens: who may call which routes of the admin API

-- A named bearer token with scopes. Only the SHA-256 of the token is
-- stored: the token itself is shown once, in the answer that created it.
-- Revoking sets revoked_on; a row is never deleted, so that the audit
-- trail's actor IDs always name one.
CREATE TABLE admin_tokens (
    token_id   text        COLLATE "C" NOT NULL,
    name       text        COLLATE "C" NOT NULL,
    token_hash bytea       NOT NULL,
    scopes     text[]      NOT NULL,
    created_on timestamptz NOT NULL,
    -- The actor (a token ID, or break-glass) that created it.
    created_by text        COLLATE "C" NOT NULL,
    expires_on timestamptz,
    revoked_on timestamptz,
    CONSTRAINT admin_tokens_pkey PRIMARY KEY (token_id),
    CONSTRAINT admin_tokens_hash_key UNIQUE (token_hash),
    CONSTRAINT admin_tokens_token_id_check CHECK (token_id ~ '^tok_[a-z2-7]{26}$'),
    CONSTRAINT admin_tokens_name_check CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'),
    CONSTRAINT admin_tokens_hash_check CHECK (octet_length(token_hash) = 32),
    CONSTRAINT admin_tokens_scopes_check CHECK (cardinality(scopes) >= 1
        AND scopes <@ ARRAY['read', 'operate', 'adjust', 'approve', 'secrets', 'admin', 'audit', 'metrics']::text[]),
    CONSTRAINT admin_tokens_expires_check CHECK (expires_on IS NULL OR expires_on > created_on),
    CONSTRAINT admin_tokens_revoked_check CHECK (revoked_on IS NULL OR revoked_on >= created_on)
);
-- One live token per name: a name names one actor at a time.
CREATE UNIQUE INDEX admin_tokens_live_name_key ON admin_tokens (name) WHERE revoked_on IS NULL;

-- A token row is never deleted, and only its revocation ever changes it
-- (LA014 admin_tokens_immutable). Body: schema/functions/admin_tokens_guard.sql.
CREATE FUNCTION admin_tokens_guard() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'admin_tokens_guard is declared, not defined: run ledgerctl migrate'; END$$;
CREATE TRIGGER admin_tokens_guard BEFORE UPDATE OR DELETE ON admin_tokens
    FOR EACH ROW EXECUTE FUNCTION admin_tokens_guard();
CREATE TRIGGER admin_tokens_no_truncate BEFORE TRUNCATE ON admin_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

-- ---------------------------------------------------------------------------
-- The audit trail: one record per admin write and per refused attempt,
-- each carrying the hash of the one before

-- seq counts from 1 without a gap; hash = audit_hash(prev_hash, the
-- record's fields), prev_hash the hash of record seq - 1 (32 zero bytes
-- for the first). An edit of a record breaks its own hash, a deletion the
-- link of the record after it (or, at the end, the head below):
-- reconciliation recomputes the chain (audit_chain_broken).
CREATE TABLE audit_log (
    seq         bigint      NOT NULL,
    recorded_at timestamptz NOT NULL,
    -- The token's ID and name (break-glass for LEDGER_ADMIN_TOKEN,
    -- anonymous on an admin API without a token, unauthenticated when none
    -- was recognised).
    actor_id    text        NOT NULL,
    actor_name  text        NOT NULL,
    -- The scope the route needs ('' for a route that needs none).
    scope       text        NOT NULL,
    method      text        NOT NULL,
    -- The route's template (/v1/accounts/{accountID}/adjustments).
    route       text        NOT NULL,
    -- What the request named or created (accountID=acc-1).
    target      text        NOT NULL,
    status      integer     NOT NULL,
    -- Hex SHA-256 of the request body; NULL without a body; 'redacted' for
    -- a body that carries a secret.
    body_digest text,
    -- The peer's address as the admin listener saw it.
    source      text        NOT NULL,
    prev_hash   bytea       NOT NULL,
    hash        bytea       NOT NULL,
    CONSTRAINT audit_log_pkey PRIMARY KEY (seq),
    CONSTRAINT audit_log_seq_check CHECK (seq >= 1),
    CONSTRAINT audit_log_status_check CHECK (status BETWEEN 100 AND 599),
    CONSTRAINT audit_log_digest_check CHECK (body_digest ~ '^([0-9a-f]{64}|redacted)$'),
    CONSTRAINT audit_log_hash_check CHECK (octet_length(hash) = 32 AND octet_length(prev_hash) = 32)
);
CREATE INDEX audit_log_recorded_idx ON audit_log (recorded_at, seq);
CREATE INDEX audit_log_actor_id_idx ON audit_log (actor_id, seq);
CREATE INDEX audit_log_actor_name_idx ON audit_log (actor_name, seq);

-- The chain's head: the last record's seq and hash (0 and 32 zero bytes
-- before the first). audit_append locks it, FOR UPDATE, in the
-- transaction of the write it records: appends are serialised across
-- replicas, and a record is visible with its effect or not at all.
CREATE TABLE audit_head (
    singleton boolean NOT NULL DEFAULT true,
    seq       bigint  NOT NULL,
    hash      bytea   NOT NULL,
    CONSTRAINT audit_head_pkey PRIMARY KEY (singleton),
    CONSTRAINT audit_head_singleton_check CHECK (singleton),
    CONSTRAINT audit_head_hash_check CHECK (octet_length(hash) = 32)
);
INSERT INTO audit_head (singleton, seq, hash) VALUES (true, 0, decode(repeat('00', 32), 'hex'));

-- The audit trail is append-only, whoever asks: no update, delete or
-- truncate of a record; the head moves one record at a time and is never
-- deleted (LA006). Body: schema/functions/audit_append_only.sql.
CREATE FUNCTION audit_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'audit_append_only is declared, not defined: run ledgerctl migrate'; END$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_head_guard BEFORE UPDATE OR DELETE ON audit_head
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

CREATE FUNCTION audit_hash(
    p_prev bytea, p_seq bigint, p_recorded_at timestamptz, p_actor_id text, p_actor_name text,
    p_scope text, p_method text, p_route text, p_target text, p_status integer, p_body_digest text,
    p_source text) RETURNS bytea
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'audit_hash is declared, not defined: run ledgerctl migrate'; END$$;

CREATE FUNCTION audit_append(
    p_recorded_at timestamptz, p_actor_id text, p_actor_name text, p_scope text, p_method text,
    p_route text, p_target text, p_status integer, p_body_digest text, p_source text,
    OUT record_seq bigint, OUT record_hash bytea)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'audit_append is declared, not defined: run ledgerctl migrate'; END$$;

-- ---------------------------------------------------------------------------
-- Dual control: adjustments over LEDGER_ADJUSTMENT_APPROVAL_OVER wait for a
-- second actor

-- An adjustment held for approval. It moves no money until another actor
-- approves it: then ledger_adjust applies it, under the same idempotency
-- key, and the row is posted with that journal transaction. Expired is no
-- stored state: a pending row at or past expires_at is expired (readers
-- and ledger_adjustment_decide say so).
CREATE TABLE adjustment_requests (
    adjustment_id   text        COLLATE "C" NOT NULL,
    account_id      text        COLLATE "C" NOT NULL,
    idempotency_key text        COLLATE "C" NOT NULL,
    amount          numeric     NOT NULL,
    currency        text        COLLATE "C" NOT NULL,
    memo            text        NOT NULL DEFAULT '',
    status          text        NOT NULL,
    maker_id        text        COLLATE "C" NOT NULL,
    maker_name      text        NOT NULL,
    requested_at    timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    checker_id      text        COLLATE "C",
    checker_name    text,
    decided_at      timestamptz,
    note            text,
    transaction_id  uuid,
    CONSTRAINT adjustment_requests_pkey PRIMARY KEY (adjustment_id),
    -- I4: one effect per key, shared with direct adjustments (the key of a
    -- posted request is also the key of its adjustments row).
    CONSTRAINT adjustment_requests_key UNIQUE (account_id, idempotency_key),
    CONSTRAINT adjustment_requests_id_check CHECK (adjustment_id ~ '^adj_[a-z2-7]{26}$'),
    CONSTRAINT adjustment_requests_key_check CHECK (idempotency_key <> '' AND length(idempotency_key) <= 255),
    CONSTRAINT adjustment_requests_amount_nonzero CHECK (amount <> 0),
    CONSTRAINT adjustment_requests_status_check CHECK (status IN ('pending', 'posted', 'rejected')),
    CONSTRAINT adjustment_requests_expires_check CHECK (expires_at > requested_at),
    CONSTRAINT adjustment_requests_note_check CHECK (length(note) <= 1024),
    -- Dual control: a posted request was approved by an actor other than
    -- its maker, and names its journal transaction; a rejected one names
    -- who rejected it; a pending one neither.
    CONSTRAINT adjustment_requests_decision_check CHECK (
        (status = 'pending' AND checker_id IS NULL AND decided_at IS NULL AND transaction_id IS NULL)
        OR (status = 'posted' AND checker_id IS NOT NULL AND checker_id <> maker_id
            AND decided_at IS NOT NULL AND transaction_id IS NOT NULL)
        OR (status = 'rejected' AND checker_id IS NOT NULL AND decided_at IS NOT NULL AND transaction_id IS NULL)),
    CONSTRAINT adjustment_requests_account_fkey FOREIGN KEY (account_id) REFERENCES accounts (account_id)
);
-- GET /v1/adjustments pages newest first.
CREATE INDEX adjustment_requests_requested_idx ON adjustment_requests (requested_at, adjustment_id);
CREATE TRIGGER adjustment_requests_no_truncate BEFORE TRUNCATE ON adjustment_requests
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();

CREATE FUNCTION ledger_adjustment_decide(
    p_action text, p_adjustment_id text, p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_approval_over numeric, p_expires_at timestamptz, p_actor_id text, p_actor_name text, p_note text,
    p_transaction_id uuid, p_now timestamptz,
    OUT outcome text, OUT adjustment_id text, OUT transaction_id uuid, OUT replayed boolean)
    LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ledger_adjustment_decide is declared, not defined: run ledgerctl migrate'; END$$;
