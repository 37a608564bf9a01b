-- The schema a database migrated by this build has: pg_dump --schema-only
-- of it (without owners, privileges and the two bookkeeping tables
-- schema_version and schema_functions), normalised. Generated; do not edit:
--
--     go test ./schema -run TestSnapshot -update
--
-- Tables, types, indexes, constraints, triggers and function signatures
-- come from schema/migrations/, function bodies from schema/functions/
-- (schema/README.md). Read it to see the schema whole; it is not a way to
-- create one (ledgerctl migrate is).

-- Name: ledger_account_id; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_account_id AS text COLLATE pg_catalog."C"
	CONSTRAINT ledger_account_id_check CHECK (((VALUE <> ''::text) AND (length(VALUE) <= 128) AND (VALUE !~ '[/[:space:][:cntrl:]]'::text)));

-- Name: ledger_account_kind; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_account_kind AS text COLLATE pg_catalog."C"
	CONSTRAINT ledger_account_kind_check CHECK ((VALUE = ANY (ARRAY['customer'::text, 'settlement'::text, 'core'::text])));

-- Name: ledger_account_status; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_account_status AS text COLLATE pg_catalog."C"
	CONSTRAINT ledger_account_status_check CHECK ((VALUE = ANY (ARRAY['open'::text, 'frozen'::text, 'closed'::text])));

-- Name: ledger_credit_amount; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_credit_amount AS numeric
	CONSTRAINT credits_amount_positive CHECK ((VALUE > (0)::numeric));

-- Name: ledger_currency; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_currency AS text COLLATE pg_catalog."C"
	CONSTRAINT ledger_currency_check CHECK ((VALUE ~ '^[A-Z]{3}$'::text));

-- Name: ledger_external_id; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_external_id AS text COLLATE pg_catalog."C"
	CONSTRAINT ledger_external_id_check CHECK ((length(VALUE) <= 256));

-- Name: ledger_held; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_held AS numeric
	CONSTRAINT accounts_held_nonnegative CHECK ((VALUE >= (0)::numeric));

-- Name: ledger_hold_amount; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_hold_amount AS numeric
	CONSTRAINT holds_amount_positive CHECK ((VALUE > (0)::numeric));

-- Name: ledger_journal_amount; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_journal_amount AS numeric
	CONSTRAINT journal_amount_nonzero CHECK ((VALUE <> (0)::numeric));

-- Name: ledger_journal_kind; Type: DOMAIN; Schema: public
CREATE DOMAIN public.ledger_journal_kind AS text
	CONSTRAINT journal_kind_check CHECK ((VALUE = ANY (ARRAY['adjustment'::text, 'capture'::text, 'credit'::text, 'reconciliation'::text])));

-- Name: accounts_guard(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.accounts_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

-- Name: admin_tokens_guard(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.admin_tokens_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.revoked_on IS NULL AND NEW.revoked_on IS NOT NULL
       AND (NEW.token_id, NEW.name, NEW.token_hash, NEW.scopes, NEW.created_on, NEW.created_by, NEW.expires_on)
           IS NOT DISTINCT FROM (OLD.token_id, OLD.name, OLD.token_hash, OLD.scopes, OLD.created_on, OLD.created_by, OLD.expires_on) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'an admin token is never deleted, and only revoked once (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA014', CONSTRAINT = 'admin_tokens_immutable';
END $$;

-- Name: audit_append(timestamp with time zone, text, text, text, text, text, text, integer, text, text); Type: FUNCTION; Schema: public
CREATE FUNCTION public.audit_append(p_recorded_at timestamp with time zone, p_actor_id text, p_actor_name text, p_scope text, p_method text, p_route text, p_target text, p_status integer, p_body_digest text, p_source text, OUT record_seq bigint, OUT record_hash bytea) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    head audit_head%ROWTYPE;
BEGIN
    SELECT * INTO head FROM audit_head WHERE singleton FOR UPDATE;
    record_seq := head.seq + 1;
    record_hash := audit_hash(p_prev => head.hash, p_seq => record_seq, p_recorded_at => p_recorded_at,
        p_actor_id => p_actor_id, p_actor_name => p_actor_name, p_scope => p_scope, p_method => p_method,
        p_route => p_route, p_target => p_target, p_status => p_status, p_body_digest => p_body_digest,
        p_source => p_source);
    INSERT INTO audit_log (seq, recorded_at, actor_id, actor_name, scope, method, route, target, status,
                           body_digest, source, prev_hash, hash)
    VALUES (record_seq, p_recorded_at, p_actor_id, p_actor_name, p_scope, p_method, p_route, p_target, p_status,
            p_body_digest, p_source, head.hash, record_hash);
    UPDATE audit_head SET seq = record_seq, hash = record_hash WHERE singleton;
END $$;

-- Name: audit_append_only(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.audit_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_TABLE_NAME = 'audit_head' AND TG_OP = 'UPDATE' THEN
        -- Nested: NEW has these fields only on audit_head.
        IF NEW.singleton AND NEW.seq = OLD.seq + 1 THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'audit_append_only';
END $$;

-- Name: audit_hash(bytea, bigint, timestamp with time zone, text, text, text, text, text, text, integer, text, text); Type: FUNCTION; Schema: public
CREATE FUNCTION public.audit_hash(p_prev bytea, p_seq bigint, p_recorded_at timestamp with time zone, p_actor_id text, p_actor_name text, p_scope text, p_method text, p_route text, p_target text, p_status integer, p_body_digest text, p_source text) RETURNS bytea
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
SELECT sha256(p_prev || convert_to('ledger-audit-v1;'
    || string_agg(octet_length(convert_to(u.f, 'UTF8'))::text || ':' || u.f || ';', '' ORDER BY u.n), 'UTF8'))
FROM unnest(ARRAY[p_seq::text, to_char(p_recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                  p_actor_id, p_actor_name, p_scope, p_method, p_route, p_target, p_status::text,
                  coalesce(p_body_digest, ''), p_source]) WITH ORDINALITY AS u (f, n)
$$;

-- Name: cb_authorize(text, bytea, text, text, text, timestamp with time zone, text, text, text, text, numeric, double precision, double precision, double precision, text); Type: FUNCTION; Schema: public
CREATE FUNCTION public.cb_authorize(p_key text, p_fingerprint bytea, p_key_fingerprint text, p_caller_subject text, p_audit_request_id text, p_now timestamp with time zone, p_payout_id text, p_external_id text, p_funding_source text, p_currency text, p_amount numeric, p_fraud_score double precision, p_fraud_deny double precision, p_fraud_stepup double precision, p_hold_reference text, OUT state text, OUT outcome text, OUT reason text, OUT reference text) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    seen bytea;
    held_by text;
    h holds%ROWTYPE;
    a accounts%ROWTYPE;
BEGIN
    -- Authorizes of one payout run one after the other, under any key: a
    -- second one sees the first's stored answer (row 1) or its hold (rows
    -- 3 and 4), never funds the first has already held. (An expression,
    -- not a query: no executor run for it.)
    IF pg_advisory_xact_lock(1, hashtext(p_payout_id)) IS NULL THEN NULL; END IF;
    -- Row 12 in one statement: approved when no earlier row matches.
    WITH held AS (
        UPDATE accounts x SET held = x.held + p_amount, updated_at = p_now
        WHERE x.account_id = (SELECT i.account_id FROM instruments i
                              WHERE i.token = p_funding_source AND i.kind = 'source')          -- not row 5
          AND x.owner_external_id = p_external_id                                             -- not row 6
          AND x.status = 'open'                                                               -- not row 7
          AND x.currency = p_currency                                                         -- not row 8
          AND p_fraud_score BETWEEN 0 AND 1                                                   -- not row 2
          AND p_fraud_score < p_fraud_deny AND p_fraud_score < p_fraud_stepup                 -- not rows 9, 10
          AND x.balance - x.held >= p_amount                                                  -- not row 11
          AND NOT EXISTS (SELECT FROM callback_authorize r
                          WHERE r.scope = p_payout_id AND r.idempotency_key = p_key)          -- not row 1
          AND NOT EXISTS (SELECT FROM holds o WHERE o.payout_id = p_payout_id)                -- not rows 3, 4
        RETURNING x.account_id
    ), hold AS (
        INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
        SELECT p_hold_reference, p_payout_id, held.account_id, p_funding_source, p_currency, p_amount, p_now FROM held
    ), opened AS (
        INSERT INTO open_holds (hold_reference, account_id, currency, amount, placed_at)
        SELECT p_hold_reference, held.account_id, p_currency, p_amount, p_now FROM held
    ), answered AS (
        INSERT INTO callback_authorize (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
            key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at)
        SELECT p_payout_id, p_key, p_fingerprint, p_payout_id, 'approved', NULL, p_hold_reference,
            p_key_fingerprint, p_caller_subject, p_audit_request_id, p_now, p_now FROM held
    )
    SELECT 'new', 'approved', p_hold_reference INTO state, outcome, reference FROM held;
    IF FOUND THEN
        RETURN;                                                  -- row 12
    END IF;
    -- Otherwise, row by row. The key's stored answer and the payout's hold,
    -- if any, in one look.
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
            -- Row 12, after all (the account changed between the two
            -- statements, or a threshold is NULL): the hold is placed on
            -- the locked account (and listed as open), and the answer
            -- stored, in one statement.
            WITH hold AS (
                INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
                VALUES (p_hold_reference, p_payout_id, a.account_id, p_funding_source, p_currency, p_amount, p_now)
            ), opened AS (
                INSERT INTO open_holds (hold_reference, account_id, currency, amount, placed_at)
                VALUES (p_hold_reference, a.account_id, p_currency, p_amount, p_now)
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

-- Name: cb_capture(text, bytea, text, timestamp with time zone, text, text, text, uuid); Type: FUNCTION; Schema: public
CREATE FUNCTION public.cb_capture(p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamp with time zone, p_payout_id text, p_hold_reference text, p_capture_reference text, p_transaction_id uuid, OUT state text, OUT outcome text, OUT reason text, OUT reference text) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r callback_capture%ROWTYPE;
    d record;
BEGIN
    -- (An expression, not a query: no executor run for the lock.)
    IF pg_advisory_xact_lock(2, hashtext(p_payout_id)) IS NULL THEN NULL; END IF;
    -- Row 6 of a new key in one statement: hold_settle's row 6 for a
    -- capture, and the answer stored.
    WITH h AS (
        SELECT o.hold_reference, o.payout_id, o.account_id, o.currency, o.amount FROM holds o
        WHERE o.hold_reference = p_hold_reference                                      -- not row 2
          AND o.payout_id = p_payout_id                                                -- not row 3
          AND NOT EXISTS (SELECT FROM callback_capture k
                          WHERE k.scope = p_payout_id AND k.idempotency_key = p_key)   -- not row 1
    ), settled AS (
        INSERT INTO hold_settlements (hold_reference, status, reference, reason, transaction_id, settled_at)
        SELECT h.hold_reference, 'captured', p_capture_reference, NULL, p_transaction_id, p_now FROM h
        ON CONFLICT (hold_reference) DO NOTHING                                         -- not rows 4, 5
        RETURNING hold_reference
    ), moved AS (
        UPDATE accounts x SET balance = x.balance - h.amount, held = x.held - h.amount, updated_at = p_now
        FROM h WHERE x.account_id = h.account_id AND EXISTS (SELECT FROM settled)
    ), closed AS (
        DELETE FROM open_holds o WHERE o.hold_reference = p_hold_reference AND EXISTS (SELECT FROM settled)
    ), journaled AS (
        INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
        SELECT p_transaction_id, 'capture', p_capture_reference, h.payout_id, h.account_id, 'settlement:' || h.currency,
               h.currency, -h.amount, p_now
        FROM h WHERE EXISTS (SELECT FROM settled)
    ), answered AS (
        INSERT INTO callback_capture (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
            key_fingerprint, received_at, last_received_at)
        SELECT p_payout_id, p_key, p_fingerprint, p_payout_id, 'approved', NULL, p_capture_reference,
            p_key_fingerprint, p_now, p_now FROM settled
    )
    SELECT 'new', 'approved', p_capture_reference INTO state, outcome, reference FROM settled;
    IF FOUND THEN
        RETURN;                                                  -- row 6
    END IF;
    -- Row 1: the key was seen: its stored answer, or 'mismatch'.
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
    -- Rows 2 to 6.
    SELECT * INTO d FROM hold_settle('captured', p_hold_reference, p_payout_id, p_capture_reference, NULL,
                                     'capture', p_transaction_id, p_now);
    state := 'new'; outcome := d.outcome; reason := d.reason; reference := d.reference;
    INSERT INTO callback_capture (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, received_at, last_received_at)
    VALUES (p_payout_id, p_key, p_fingerprint, p_payout_id, outcome, reason, reference,
        p_key_fingerprint, p_now, p_now);
END $$;

-- Name: cb_credit(text, bytea, text, timestamp with time zone, text, text, text, text, numeric, numeric, text, uuid); Type: FUNCTION; Schema: public
CREATE FUNCTION public.cb_credit(p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamp with time zone, p_request_id text, p_destination text, p_requester text, p_currency text, p_amount numeric, p_max numeric, p_credit_reference text, p_transaction_id uuid, OUT state text, OUT outcome text, OUT reason text, OUT reference text) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r callback_credit%ROWTYPE;
    a accounts%ROWTYPE;
    prior credits%ROWTYPE;
BEGIN
    -- Credits of one payment request (under other keys) run one after the
    -- other, so that a second one always sees the first's credit (row 2).
    -- (Expressions, not queries: no executor run for the locks.)
    IF pg_advisory_xact_lock(4, hashtext(p_key)) IS NULL THEN NULL; END IF;
    IF pg_advisory_xact_lock(5, hashtext(p_request_id)) IS NULL THEN NULL; END IF;
    -- Row 9 in one statement: approved when no earlier row matches.
    WITH credited AS (
        UPDATE accounts x SET balance = x.balance + p_amount, updated_at = p_now
        WHERE x.account_id = (SELECT i.account_id FROM instruments i
                              WHERE i.token = p_destination AND i.kind = 'destination')            -- not row 3
          AND x.status = 'open'                                                                 -- not rows 4, 6
          AND x.owner_external_id = p_requester                                                 -- not row 5
          AND x.currency = p_currency                                                           -- not row 7
          AND (p_max IS NULL OR p_amount <= p_max)                                              -- not row 8
          AND NOT EXISTS (SELECT FROM callback_credit k
                          WHERE k.scope = '' AND k.idempotency_key = p_key)                     -- not row 1
          AND NOT EXISTS (SELECT FROM credits c WHERE c.request_id = p_request_id)              -- not row 2
        RETURNING x.account_id
    ), credit AS (
        INSERT INTO credits (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
        SELECT p_request_id, p_credit_reference, credited.account_id, p_destination, p_currency, p_amount, p_transaction_id, p_now
        FROM credited
    ), journaled AS (
        INSERT INTO journal (transaction_id, kind, reference, memo, account_id, contra_account_id, currency, amount, created_at)
        SELECT p_transaction_id, 'credit', p_credit_reference, p_request_id, credited.account_id, 'settlement:' || p_currency,
               p_currency, p_amount, p_now
        FROM credited
    ), answered AS (
        INSERT INTO callback_credit (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
            key_fingerprint, received_at, last_received_at)
        SELECT '', p_key, p_fingerprint, p_request_id, 'approved', NULL, p_credit_reference,
            p_key_fingerprint, p_now, p_now FROM credited
    )
    SELECT 'new', 'approved', p_credit_reference INTO state, outcome, reference FROM credited;
    IF FOUND THEN
        RETURN;                                                  -- row 9
    END IF;
    -- Otherwise, row by row. Row 1: the key was seen.
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
    SELECT * INTO prior FROM credits x WHERE x.request_id = p_request_id;
    IF FOUND AND (prior.amount <> p_amount OR prior.currency <> p_currency) THEN
        INSERT INTO credit_conflicts AS k (request_id, idempotency_key, currency, amount, received_at, last_received_at)
        VALUES (p_request_id, p_key, p_currency, p_amount, p_now, p_now)
        ON CONFLICT (request_id, idempotency_key)
        DO UPDATE SET attempts = k.attempts + 1, last_received_at = p_now;
        state := 'amount_mismatch';                              -- row 2a
        RETURN;
    ELSIF FOUND THEN
        outcome := 'approved'; reference := prior.credit_reference;  -- row 2
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
            -- Row 9, after all (the account changed between the two
            -- statements): the journal debits settlement, credits the account.
            WITH credit AS (
                INSERT INTO credits (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
                VALUES (p_request_id, p_credit_reference, a.account_id, p_destination, p_currency, p_amount, p_transaction_id, p_now)
            ), credited AS (
                UPDATE accounts SET balance = balance + p_amount, updated_at = p_now WHERE account_id = a.account_id
            )
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

-- Name: cb_release(text, bytea, text, timestamp with time zone, text, text, text, text); Type: FUNCTION; Schema: public
CREATE FUNCTION public.cb_release(p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamp with time zone, p_payout_id text, p_hold_reference text, p_reason text, p_release_reference text, OUT state text, OUT outcome text, OUT reason text, OUT reference text) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    r callback_release%ROWTYPE;
    d record;
    v_scope text := coalesce(p_payout_id, p_hold_reference);
BEGIN
    -- (An expression, not a query: no executor run for the lock.)
    IF pg_advisory_xact_lock(3, hashtext(v_scope)) IS NULL THEN NULL; END IF;
    -- Row 6 of a new key in one statement: hold_settle's row 6 for a
    -- release, and the answer stored.
    WITH h AS (
        SELECT o.hold_reference, o.account_id, o.amount FROM holds o
        WHERE o.hold_reference = p_hold_reference                                      -- not row 2
          AND (p_payout_id IS NULL OR o.payout_id = p_payout_id)                       -- not row 3
          AND NOT EXISTS (SELECT FROM callback_release k
                          WHERE k.scope = v_scope AND k.idempotency_key = p_key)       -- not row 1
    ), settled AS (
        INSERT INTO hold_settlements (hold_reference, status, reference, reason, transaction_id, settled_at)
        SELECT h.hold_reference, 'released', p_release_reference, p_reason, NULL, p_now FROM h
        ON CONFLICT (hold_reference) DO NOTHING                                         -- not rows 4, 5
        RETURNING hold_reference
    ), moved AS (
        UPDATE accounts x SET held = x.held - h.amount, updated_at = p_now
        FROM h WHERE x.account_id = h.account_id AND EXISTS (SELECT FROM settled)
    ), closed AS (
        DELETE FROM open_holds o WHERE o.hold_reference = p_hold_reference AND EXISTS (SELECT FROM settled)
    ), answered AS (
        INSERT INTO callback_release (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
            key_fingerprint, received_at, last_received_at)
        SELECT v_scope, p_key, p_fingerprint, v_scope, 'approved', NULL, p_release_reference,
            p_key_fingerprint, p_now, p_now FROM settled
    )
    SELECT 'new', 'approved', p_release_reference INTO state, outcome, reference FROM settled;
    IF FOUND THEN
        RETURN;                                                  -- row 6
    END IF;
    -- Row 1: the key was seen: its stored answer, or 'mismatch'.
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
    -- Rows 2 to 6.
    SELECT * INTO d FROM hold_settle('released', p_hold_reference, p_payout_id, p_release_reference, p_reason,
                                     NULL, NULL, p_now);
    state := 'new'; outcome := d.outcome; reason := d.reason; reference := d.reference;
    INSERT INTO callback_release (scope, idempotency_key, fingerprint, subject, outcome, reason, reference,
        key_fingerprint, received_at, last_received_at)
    VALUES (v_scope, p_key, p_fingerprint, v_scope, outcome, reason, reference,
        p_key_fingerprint, p_now, p_now);
END $$;

-- Name: hold_settle(text, text, text, text, text, text, uuid, timestamp with time zone); Type: FUNCTION; Schema: public
CREATE FUNCTION public.hold_settle(p_status text, p_hold_reference text, p_payout_id text, p_reference text, p_reason text, p_kind text, p_transaction_id uuid, p_now timestamp with time zone, OUT outcome text, OUT reason text, OUT reference text, OUT orphan boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
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
    -- is written (row 6: the hold was held), the account moves, the hold
    -- leaves open_holds, and for a capture the journal debits the sender and
    -- credits settlement, in the same statement.
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
    ), closed AS (
        DELETE FROM open_holds WHERE hold_reference = p_hold_reference AND EXISTS (SELECT 1 FROM settled)
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

-- Name: holds_append_only(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.holds_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'illegal hold transition: % on % (a hold is placed once and settled once)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA005', CONSTRAINT = 'holds_transition';
END $$;

-- Name: journal_append_only(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.journal_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'the journal is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'journal_append_only';
END $$;

-- Name: ledger_adjust(text, numeric, text, text, uuid, timestamp with time zone); Type: FUNCTION; Schema: public
CREATE FUNCTION public.ledger_adjust(p_account_id text, p_amount numeric, p_key text, p_memo text, p_transaction_id uuid, p_now timestamp with time zone, OUT transaction_id uuid, OUT replayed boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
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

-- Name: ledger_adjustment_decide(text, text, text, numeric, text, text, numeric, timestamp with time zone, text, text, text, uuid, timestamp with time zone); Type: FUNCTION; Schema: public
CREATE FUNCTION public.ledger_adjustment_decide(p_action text, p_adjustment_id text, p_account_id text, p_amount numeric, p_key text, p_memo text, p_approval_over numeric, p_expires_at timestamp with time zone, p_actor_id text, p_actor_name text, p_note text, p_transaction_id uuid, p_now timestamp with time zone, OUT outcome text, OUT adjustment_id text, OUT transaction_id uuid, OUT replayed boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    a accounts%ROWTYPE;
    r adjustment_requests%ROWTYPE;
    adj record;
BEGIN
    replayed := false;
    IF p_action = 'request' THEN
        SELECT * INTO a FROM accounts WHERE account_id = p_account_id AND kind = 'customer' FOR NO KEY UPDATE;
        IF NOT FOUND THEN -- R1
            RAISE EXCEPTION 'account not found' USING ERRCODE = 'LA001';
        END IF;
        SELECT * INTO r FROM adjustment_requests WHERE account_id = p_account_id AND idempotency_key = p_key;
        IF FOUND THEN
            IF r.amount <> p_amount OR r.memo <> p_memo THEN -- R3
                RAISE EXCEPTION 'idempotency key reused with another adjustment' USING ERRCODE = 'LA004';
            END IF;
            outcome := 'pending'; -- R2
            adjustment_id := r.adjustment_id;
            transaction_id := r.transaction_id;
            replayed := true;
            RETURN;
        END IF;
        IF p_approval_over IS NULL OR abs(p_amount) <= p_approval_over
           OR EXISTS (SELECT FROM adjustments d WHERE d.account_id = p_account_id AND d.idempotency_key = p_key) THEN -- R4
            SELECT * INTO adj FROM ledger_adjust(p_account_id => p_account_id, p_amount => p_amount, p_key => p_key,
                p_memo => p_memo, p_transaction_id => p_transaction_id, p_now => p_now);
            outcome := 'adjusted';
            transaction_id := adj.transaction_id;
            replayed := adj.replayed;
            RETURN;
        END IF;
        IF a.status = 'closed' THEN -- R5
            RAISE EXCEPTION 'account is closed' USING ERRCODE = 'LA003';
        END IF;
        INSERT INTO adjustment_requests (adjustment_id, account_id, idempotency_key, amount, currency, memo, status,
                                         maker_id, maker_name, requested_at, expires_at)
        VALUES (p_adjustment_id, p_account_id, p_key, p_amount, a.currency, p_memo, 'pending',
                p_actor_id, p_actor_name, p_now, p_expires_at); -- R6
        outcome := 'pending';
        adjustment_id := p_adjustment_id;
        RETURN;
    END IF;
    IF p_action IS DISTINCT FROM 'approve' AND p_action IS DISTINCT FROM 'reject' THEN
        RAISE EXCEPTION 'unknown action %', p_action USING ERRCODE = '22023';
    END IF;
    SELECT * INTO r FROM adjustment_requests WHERE adjustment_id = p_adjustment_id;
    IF NOT FOUND THEN -- A1, J1
        RAISE EXCEPTION 'adjustment not found' USING ERRCODE = 'LA009';
    END IF;
    -- Locks in the callbacks' order: the account's row, then the request's.
    PERFORM FROM accounts WHERE account_id = r.account_id FOR NO KEY UPDATE;
    SELECT * INTO r FROM adjustment_requests WHERE adjustment_id = p_adjustment_id FOR UPDATE;
    adjustment_id := r.adjustment_id;
    transaction_id := r.transaction_id;
    IF r.status = 'posted' THEN
        IF p_action = 'reject' THEN -- J2
            RAISE EXCEPTION 'the adjustment was posted' USING ERRCODE = 'LA013';
        END IF;
        outcome := 'posted'; -- A2
        replayed := true;
        RETURN;
    END IF;
    IF r.status = 'rejected' THEN
        IF p_action = 'approve' THEN -- A3
            RAISE EXCEPTION 'the adjustment was rejected' USING ERRCODE = 'LA010';
        END IF;
        outcome := 'rejected'; -- J3
        replayed := true;
        RETURN;
    END IF;
    IF p_now >= r.expires_at THEN -- A4, J4
        RAISE EXCEPTION 'the adjustment expired' USING ERRCODE = 'LA011';
    END IF;
    IF p_action = 'reject' THEN -- J5
        UPDATE adjustment_requests SET status = 'rejected', checker_id = p_actor_id, checker_name = p_actor_name,
               decided_at = p_now, note = p_note
        WHERE adjustment_id = p_adjustment_id;
        outcome := 'rejected';
        RETURN;
    END IF;
    IF p_actor_id = r.maker_id THEN -- A5
        RAISE EXCEPTION 'the maker of an adjustment cannot approve it' USING ERRCODE = 'LA012';
    END IF;
    SELECT * INTO adj FROM ledger_adjust(p_account_id => r.account_id, p_amount => r.amount, p_key => r.idempotency_key,
        p_memo => r.memo, p_transaction_id => p_transaction_id, p_now => p_now); -- A6
    UPDATE adjustment_requests SET status = 'posted', checker_id = p_actor_id, checker_name = p_actor_name,
           decided_at = p_now, note = p_note, transaction_id = adj.transaction_id
    WHERE adjustment_id = p_adjustment_id;
    outcome := 'posted';
    transaction_id := adj.transaction_id;
END $$;

-- Name: ledger_ensure_system_accounts(text, timestamp with time zone); Type: FUNCTION; Schema: public
CREATE FUNCTION public.ledger_ensure_system_accounts(p_currency text, p_now timestamp with time zone) RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at)
    VALUES ('settlement:' || p_currency, '', p_currency, 'settlement', 'open', p_now, p_now),
           ('core:' || p_currency, '', p_currency, 'core', 'open', p_now, p_now)
    -- No arbiter: a concurrent creation conflicts on both unique keys
    -- (account_id, and account_id with currency); either means "exists".
    ON CONFLICT DO NOTHING
$$;

-- Name: ledger_no_truncate(); Type: FUNCTION; Schema: public
CREATE FUNCTION public.ledger_no_truncate() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is never truncated', TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'ledger_no_truncate';
END $$;

-- Name: accounts; Type: TABLE; Schema: public
CREATE TABLE public.accounts (
    account_id public.ledger_account_id NOT NULL,
    owner_external_id public.ledger_external_id NOT NULL,
    currency public.ledger_currency NOT NULL,
    kind public.ledger_account_kind DEFAULT 'customer'::text NOT NULL,
    status public.ledger_account_status DEFAULT 'open'::text NOT NULL,
    balance numeric DEFAULT 0 NOT NULL,
    held public.ledger_held DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    skeleton text COLLATE pg_catalog."C",
    CONSTRAINT accounts_available_nonnegative CHECK (((balance - (held)::numeric) >= 0.0)),
    CONSTRAINT accounts_system_balance_check CHECK ((((kind)::text = 'customer'::text) OR ((balance = 0.0) AND ((held)::numeric = 0.0))))
)
WITH (fillfactor='80');

-- Name: journal; Type: TABLE; Schema: public
CREATE TABLE public.journal (
    transaction_id uuid NOT NULL,
    kind public.ledger_journal_kind NOT NULL,
    reference text NOT NULL COLLATE pg_catalog."C",
    memo text DEFAULT ''::text NOT NULL,
    account_id text NOT NULL COLLATE pg_catalog."C",
    contra_account_id text NOT NULL COLLATE pg_catalog."C",
    currency text NOT NULL COLLATE pg_catalog."C",
    amount public.ledger_journal_amount NOT NULL,
    created_at timestamp with time zone NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id(),
    CONSTRAINT journal_contra_check CHECK ((contra_account_id = (
CASE
    WHEN ((kind)::text = 'adjustment'::text) THEN 'core:'::text
    ELSE 'settlement:'::text
END || currency)))
);

-- Name: account_balances; Type: VIEW; Schema: public
CREATE VIEW public.account_balances AS
 SELECT a.account_id,
    a.kind,
    a.currency,
    a.status,
        CASE
            WHEN ((a.kind)::text = 'customer'::text) THEN a.balance
            ELSE COALESCE(s.total, (0)::numeric)
        END AS balance,
    a.held
   FROM (public.accounts a
     LEFT JOIN ( SELECT journal.contra_account_id,
            (- sum((journal.amount)::numeric)) AS total
           FROM public.journal
          GROUP BY journal.contra_account_id) s ON ((s.contra_account_id = (a.account_id)::text)));

-- Name: adjustment_requests; Type: TABLE; Schema: public
CREATE TABLE public.adjustment_requests (
    adjustment_id text NOT NULL COLLATE pg_catalog."C",
    account_id text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    amount numeric NOT NULL,
    currency text NOT NULL COLLATE pg_catalog."C",
    memo text DEFAULT ''::text NOT NULL,
    status text NOT NULL,
    maker_id text NOT NULL COLLATE pg_catalog."C",
    maker_name text NOT NULL,
    requested_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    checker_id text COLLATE pg_catalog."C",
    checker_name text,
    decided_at timestamp with time zone,
    note text,
    transaction_id uuid,
    CONSTRAINT adjustment_requests_amount_nonzero CHECK ((amount <> (0)::numeric)),
    CONSTRAINT adjustment_requests_decision_check CHECK ((((status = 'pending'::text) AND (checker_id IS NULL) AND (decided_at IS NULL) AND (transaction_id IS NULL)) OR ((status = 'posted'::text) AND (checker_id IS NOT NULL) AND (checker_id <> maker_id) AND (decided_at IS NOT NULL) AND (transaction_id IS NOT NULL)) OR ((status = 'rejected'::text) AND (checker_id IS NOT NULL) AND (decided_at IS NOT NULL) AND (transaction_id IS NULL)))),
    CONSTRAINT adjustment_requests_expires_check CHECK ((expires_at > requested_at)),
    CONSTRAINT adjustment_requests_id_check CHECK ((adjustment_id ~ '^adj_[a-z2-7]{26}$'::text)),
    CONSTRAINT adjustment_requests_key_check CHECK (((idempotency_key <> ''::text) AND (length(idempotency_key) <= 255))),
    CONSTRAINT adjustment_requests_note_check CHECK ((length(note) <= 1024)),
    CONSTRAINT adjustment_requests_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'posted'::text, 'rejected'::text])))
);

-- Name: adjustments; Type: TABLE; Schema: public
CREATE TABLE public.adjustments (
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    account_id text NOT NULL COLLATE pg_catalog."C",
    amount numeric NOT NULL,
    memo text DEFAULT ''::text NOT NULL,
    transaction_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id(),
    CONSTRAINT adjustments_amount_nonzero CHECK ((amount <> (0)::numeric)),
    CONSTRAINT adjustments_key_check CHECK (((idempotency_key <> ''::text) AND (length(idempotency_key) <= 255)))
);

-- Name: admin_tokens; Type: TABLE; Schema: public
CREATE TABLE public.admin_tokens (
    token_id text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    token_hash bytea NOT NULL,
    scopes text[] NOT NULL,
    created_on timestamp with time zone NOT NULL,
    created_by text NOT NULL COLLATE pg_catalog."C",
    expires_on timestamp with time zone,
    revoked_on timestamp with time zone,
    CONSTRAINT admin_tokens_expires_check CHECK (((expires_on IS NULL) OR (expires_on > created_on))),
    CONSTRAINT admin_tokens_hash_check CHECK ((octet_length(token_hash) = 32)),
    CONSTRAINT admin_tokens_name_check CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'::text)),
    CONSTRAINT admin_tokens_revoked_check CHECK (((revoked_on IS NULL) OR (revoked_on >= created_on))),
    CONSTRAINT admin_tokens_scopes_check CHECK (((cardinality(scopes) >= 1) AND (scopes <@ ARRAY['read'::text, 'operate'::text, 'adjust'::text, 'approve'::text, 'secrets'::text, 'admin'::text, 'audit'::text, 'metrics'::text]))),
    CONSTRAINT admin_tokens_token_id_check CHECK ((token_id ~ '^tok_[a-z2-7]{26}$'::text))
);

-- Name: audit_head; Type: TABLE; Schema: public
CREATE TABLE public.audit_head (
    singleton boolean DEFAULT true NOT NULL,
    seq bigint NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT audit_head_hash_check CHECK ((octet_length(hash) = 32)),
    CONSTRAINT audit_head_singleton_check CHECK (singleton)
);

-- Name: audit_log; Type: TABLE; Schema: public
CREATE TABLE public.audit_log (
    seq bigint NOT NULL,
    recorded_at timestamp with time zone NOT NULL,
    actor_id text NOT NULL,
    actor_name text NOT NULL,
    scope text NOT NULL,
    method text NOT NULL,
    route text NOT NULL,
    target text NOT NULL,
    status integer NOT NULL,
    body_digest text,
    source text NOT NULL,
    prev_hash bytea NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT audit_log_digest_check CHECK ((body_digest ~ '^([0-9a-f]{64}|redacted)$'::text)),
    CONSTRAINT audit_log_hash_check CHECK (((octet_length(hash) = 32) AND (octet_length(prev_hash) = 32))),
    CONSTRAINT audit_log_seq_check CHECK ((seq >= 1)),
    CONSTRAINT audit_log_status_check CHECK (((status >= 100) AND (status <= 599)))
);

-- Name: callback_authorize; Type: TABLE; Schema: public
CREATE TABLE public.callback_authorize (
    scope text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint bytea NOT NULL,
    subject text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL,
    reason text,
    reference text,
    key_fingerprint text NOT NULL,
    caller_subject text,
    audit_request_id text,
    received_at timestamp with time zone NOT NULL,
    last_received_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 1 NOT NULL
);

-- Name: callback_capture; Type: TABLE; Schema: public
CREATE TABLE public.callback_capture (
    scope text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint bytea NOT NULL,
    subject text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL,
    reason text,
    reference text,
    key_fingerprint text NOT NULL,
    caller_subject text,
    audit_request_id text,
    received_at timestamp with time zone NOT NULL,
    last_received_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 1 NOT NULL
);

-- Name: callback_credit; Type: TABLE; Schema: public
CREATE TABLE public.callback_credit (
    scope text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint bytea NOT NULL,
    subject text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL,
    reason text,
    reference text,
    key_fingerprint text NOT NULL,
    caller_subject text,
    audit_request_id text,
    received_at timestamp with time zone NOT NULL,
    last_received_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 1 NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id()
);

-- Name: callback_release; Type: TABLE; Schema: public
CREATE TABLE public.callback_release (
    scope text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint bytea NOT NULL,
    subject text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL,
    reason text,
    reference text,
    key_fingerprint text NOT NULL,
    caller_subject text,
    audit_request_id text,
    received_at timestamp with time zone NOT NULL,
    last_received_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 1 NOT NULL
);

-- Name: callback_requests; Type: VIEW; Schema: public
CREATE VIEW public.callback_requests AS
 SELECT 'authorize'::text AS endpoint,
    callback_authorize.scope,
    callback_authorize.idempotency_key,
    callback_authorize.fingerprint,
    callback_authorize.subject,
    callback_authorize.outcome,
    callback_authorize.reason,
    callback_authorize.reference,
    callback_authorize.key_fingerprint,
    callback_authorize.caller_subject,
    callback_authorize.audit_request_id,
    callback_authorize.received_at,
    callback_authorize.last_received_at,
    callback_authorize.attempts
   FROM public.callback_authorize
UNION ALL
 SELECT 'capture'::text AS endpoint,
    callback_capture.scope,
    callback_capture.idempotency_key,
    callback_capture.fingerprint,
    callback_capture.subject,
    callback_capture.outcome,
    callback_capture.reason,
    callback_capture.reference,
    callback_capture.key_fingerprint,
    callback_capture.caller_subject,
    callback_capture.audit_request_id,
    callback_capture.received_at,
    callback_capture.last_received_at,
    callback_capture.attempts
   FROM public.callback_capture
UNION ALL
 SELECT 'release'::text AS endpoint,
    callback_release.scope,
    callback_release.idempotency_key,
    callback_release.fingerprint,
    callback_release.subject,
    callback_release.outcome,
    callback_release.reason,
    callback_release.reference,
    callback_release.key_fingerprint,
    callback_release.caller_subject,
    callback_release.audit_request_id,
    callback_release.received_at,
    callback_release.last_received_at,
    callback_release.attempts
   FROM public.callback_release
UNION ALL
 SELECT 'credit-account'::text AS endpoint,
    callback_credit.scope,
    callback_credit.idempotency_key,
    callback_credit.fingerprint,
    callback_credit.subject,
    callback_credit.outcome,
    callback_credit.reason,
    callback_credit.reference,
    callback_credit.key_fingerprint,
    callback_credit.caller_subject,
    callback_credit.audit_request_id,
    callback_credit.received_at,
    callback_credit.last_received_at,
    callback_credit.attempts
   FROM public.callback_credit;

-- Name: credit_conflicts; Type: TABLE; Schema: public
CREATE TABLE public.credit_conflicts (
    request_id text NOT NULL COLLATE pg_catalog."C",
    idempotency_key text NOT NULL COLLATE pg_catalog."C",
    currency text NOT NULL,
    amount numeric NOT NULL,
    received_at timestamp with time zone NOT NULL,
    last_received_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 1 NOT NULL
);

-- Name: credits; Type: TABLE; Schema: public
CREATE TABLE public.credits (
    request_id text NOT NULL COLLATE pg_catalog."C",
    credit_reference text NOT NULL,
    account_id text NOT NULL COLLATE pg_catalog."C",
    destination text NOT NULL,
    currency text NOT NULL,
    amount public.ledger_credit_amount NOT NULL,
    transaction_id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id()
);

-- Name: hold_settlements; Type: TABLE; Schema: public
CREATE TABLE public.hold_settlements (
    hold_reference text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL,
    reference text NOT NULL COLLATE pg_catalog."C",
    reason text,
    transaction_id uuid,
    settled_at timestamp with time zone NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id(),
    CONSTRAINT hold_settlements_state_check CHECK ((((status = 'captured'::text) AND (transaction_id IS NOT NULL) AND (reason IS NULL)) OR ((status = 'released'::text) AND (transaction_id IS NULL))))
);

-- Name: holds; Type: TABLE; Schema: public
CREATE TABLE public.holds (
    hold_reference text NOT NULL COLLATE pg_catalog."C",
    payout_id text NOT NULL COLLATE pg_catalog."C",
    account_id text NOT NULL COLLATE pg_catalog."C",
    funding_source text NOT NULL COLLATE pg_catalog."C",
    currency text NOT NULL COLLATE pg_catalog."C",
    amount public.ledger_hold_amount NOT NULL,
    placed_at timestamp with time zone NOT NULL,
    recorded_xid xid8 DEFAULT pg_current_xact_id()
);

-- Name: hold_states; Type: VIEW; Schema: public
CREATE VIEW public.hold_states AS
 SELECT h.hold_reference,
    h.payout_id,
    h.account_id,
    h.funding_source,
    h.currency,
    h.amount,
    COALESCE(s.status, 'held'::text) AS status,
        CASE
            WHEN (s.status = 'captured'::text) THEN s.reference
            ELSE NULL::text
        END AS capture_reference,
        CASE
            WHEN (s.status = 'released'::text) THEN s.reference
            ELSE NULL::text
        END AS release_reference,
    s.reason AS release_reason,
    s.transaction_id,
    h.placed_at,
        CASE
            WHEN (s.status = 'captured'::text) THEN s.settled_at
            ELSE NULL::timestamp with time zone
        END AS captured_at,
        CASE
            WHEN (s.status = 'released'::text) THEN s.settled_at
            ELSE NULL::timestamp with time zone
        END AS released_at
   FROM (public.holds h
     LEFT JOIN public.hold_settlements s USING (hold_reference));

-- Name: instruments; Type: TABLE; Schema: public
CREATE TABLE public.instruments (
    token text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL,
    account_id text NOT NULL COLLATE pg_catalog."C",
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT instruments_kind_check CHECK ((kind = ANY (ARRAY['source'::text, 'destination'::text]))),
    CONSTRAINT instruments_token_check CHECK (((token <> ''::text) AND (length(token) <= 256)))
);

-- Name: journal_entries; Type: VIEW; Schema: public
CREATE VIEW public.journal_entries AS
 SELECT journal.transaction_id,
    journal.account_id,
    journal.currency,
    journal.amount,
    journal.created_at
   FROM public.journal
UNION ALL
 SELECT journal.transaction_id,
    journal.contra_account_id AS account_id,
    journal.currency,
    (- (journal.amount)::numeric) AS amount,
    journal.created_at
   FROM public.journal;

-- Name: journal_transactions; Type: VIEW; Schema: public
CREATE VIEW public.journal_transactions AS
 SELECT journal.transaction_id,
    journal.kind,
    journal.reference,
    journal.memo,
    journal.created_at
   FROM public.journal;

-- Name: open_holds; Type: TABLE; Schema: public
CREATE TABLE public.open_holds (
    hold_reference text NOT NULL COLLATE pg_catalog."C",
    account_id text NOT NULL COLLATE pg_catalog."C",
    currency text NOT NULL COLLATE pg_catalog."C",
    amount numeric NOT NULL,
    placed_at timestamp with time zone NOT NULL
);

-- Name: orphans; Type: TABLE; Schema: public
CREATE TABLE public.orphans (
    kind text NOT NULL,
    hold_reference text NOT NULL COLLATE pg_catalog."C",
    payout_id text DEFAULT ''::text NOT NULL,
    reference text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT orphans_kind_check CHECK ((kind = ANY (ARRAY['capture'::text, 'release'::text])))
);

-- Name: reconciliation_account_states; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_account_states (
    account_id text NOT NULL COLLATE pg_catalog."C",
    checkpoint_id text NOT NULL,
    balance numeric NOT NULL,
    held numeric NOT NULL
);

-- Name: reconciliation_checkpoints; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_checkpoints (
    checkpoint_id text NOT NULL,
    seq bigint NOT NULL,
    run_id text NOT NULL,
    taken_on timestamp with time zone NOT NULL,
    snapshot pg_snapshot NOT NULL,
    full_run boolean NOT NULL,
    from_checkpoint text,
    accounts bigint NOT NULL,
    CONSTRAINT reconciliation_checkpoints_from_check CHECK ((full_run = (from_checkpoint IS NULL))),
    CONSTRAINT reconciliation_checkpoints_id_check CHECK ((checkpoint_id ~ '^chk_[a-z2-7]{26}$'::text))
);

-- Name: reconciliation_checkpoints_seq_seq; Type: SEQUENCE; Schema: public
ALTER TABLE public.reconciliation_checkpoints ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.reconciliation_checkpoints_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: reconciliation_findings; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_findings (
    run_id text NOT NULL,
    seq integer NOT NULL,
    kind text NOT NULL,
    severity text NOT NULL,
    subject text NOT NULL,
    detail text NOT NULL,
    fixed boolean NOT NULL,
    finding_id text,
    is_new boolean DEFAULT false NOT NULL,
    acknowledged boolean DEFAULT false NOT NULL,
    CONSTRAINT reconciliation_findings_fixed_check CHECK (((NOT fixed) OR (kind = ANY (ARRAY['missed_release'::text, 'missed_capture'::text])))),
    CONSTRAINT reconciliation_findings_kind_check CHECK ((kind ~ '^[a-z][a-z_]{0,63}$'::text)),
    CONSTRAINT reconciliation_findings_seq_check CHECK ((seq >= 0)),
    CONSTRAINT reconciliation_findings_severity_check CHECK ((severity = ANY (ARRAY['warning'::text, 'critical'::text])))
);

-- Name: reconciliation_fixes; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_fixes (
    hold_reference text NOT NULL,
    run_id text NOT NULL,
    action text NOT NULL,
    reference text NOT NULL,
    transaction_id uuid,
    payout_status text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT reconciliation_fixes_action_check CHECK ((action = ANY (ARRAY['capture'::text, 'release'::text]))),
    CONSTRAINT reconciliation_fixes_transaction_check CHECK (((action = 'capture'::text) = (transaction_id IS NOT NULL)))
);

-- Name: reconciliation_issues; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_issues (
    finding_id text NOT NULL,
    kind text NOT NULL,
    subject text NOT NULL,
    first_run_id text NOT NULL,
    first_seen_on timestamp with time zone NOT NULL,
    last_run_id text NOT NULL,
    last_seen_on timestamp with time zone NOT NULL,
    resolved_on timestamp with time zone,
    acknowledged_on timestamp with time zone,
    ack_note text,
    CONSTRAINT reconciliation_issues_ack_check CHECK (((acknowledged_on IS NULL) = (ack_note IS NULL))),
    CONSTRAINT reconciliation_issues_finding_id_check CHECK ((finding_id ~ '^fnd_[a-z2-7]{26}$'::text)),
    CONSTRAINT reconciliation_issues_note_check CHECK ((length(ack_note) <= 1024))
);

-- Name: reconciliation_lease; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_lease (
    singleton boolean DEFAULT true NOT NULL,
    run_id text NOT NULL,
    holder text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT reconciliation_lease_singleton_check CHECK (singleton)
);

-- Name: reconciliation_runs; Type: TABLE; Schema: public
CREATE TABLE public.reconciliation_runs (
    run_id text NOT NULL,
    started_on timestamp with time zone NOT NULL,
    finished_on timestamp with time zone,
    fix boolean NOT NULL,
    status text,
    full_run boolean,
    from_checkpoint text,
    CONSTRAINT reconciliation_runs_finished_check CHECK ((((finished_on IS NULL) AND (status IS NULL)) OR ((finished_on IS NOT NULL) AND (status IS NOT NULL) AND (finished_on >= started_on)))),
    CONSTRAINT reconciliation_runs_run_id_check CHECK ((run_id ~ '^rec_[a-z2-7]{26}$'::text)),
    CONSTRAINT reconciliation_runs_status_check CHECK ((status = ANY (ARRAY['clean'::text, 'warning'::text, 'critical'::text])))
);

-- Name: signing_secrets; Type: TABLE; Schema: public
CREATE TABLE public.signing_secrets (
    secret_id text NOT NULL,
    fingerprint text NOT NULL,
    kek_fingerprint text NOT NULL,
    nonce bytea,
    ciphertext bytea,
    source text NOT NULL,
    added_on timestamp with time zone NOT NULL,
    retired_on timestamp with time zone,
    CONSTRAINT signing_secrets_ciphertext_check CHECK ((octet_length(ciphertext) = 48)),
    CONSTRAINT signing_secrets_fingerprint_check CHECK ((fingerprint ~ '^[0-9a-f]{16}$'::text)),
    CONSTRAINT signing_secrets_kek_fingerprint_check CHECK ((kek_fingerprint ~ '^[0-9a-f]{16}$'::text)),
    CONSTRAINT signing_secrets_material_check CHECK ((((retired_on IS NULL) AND (nonce IS NOT NULL) AND (ciphertext IS NOT NULL)) OR ((retired_on IS NOT NULL) AND (nonce IS NULL) AND (ciphertext IS NULL)))),
    CONSTRAINT signing_secrets_nonce_check CHECK ((octet_length(nonce) = 12)),
    CONSTRAINT signing_secrets_retired_check CHECK (((retired_on IS NULL) OR (retired_on >= added_on))),
    CONSTRAINT signing_secrets_secret_id_check CHECK ((secret_id ~ '^sec_[a-z2-7]{26}$'::text)),
    CONSTRAINT signing_secrets_source_check CHECK ((source = ANY (ARRAY['env'::text, 'api'::text, 'generated'::text, 'dev'::text])))
);

-- Name: TABLE signing_secrets; Type: COMMENT; Schema: public
COMMENT ON TABLE public.signing_secrets IS 'Callback signing secrets (the keyring), AES-256-GCM encrypted under the KEK; every replica reloads the active rows within seconds.';

-- Name: COLUMN signing_secrets.secret_id; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.secret_id IS 'sec_ + 128 random bits (base32); the AAD of the row''s ciphertext.';

-- Name: COLUMN signing_secrets.fingerprint; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.fingerprint IS 'First 8 bytes of SHA-256 of the secret, hex: safe to log; identifies the secret across replicas and the service.';

-- Name: COLUMN signing_secrets.kek_fingerprint; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.kek_fingerprint IS 'Identifies the KEK that encrypted the row (domain-separated SHA-256, 8 bytes hex), so a wrong KEK is told from a damaged row.';

-- Name: COLUMN signing_secrets.nonce; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.nonce IS 'Random 12-byte AES-GCM nonce, fresh per row; NULL once retired.';

-- Name: COLUMN signing_secrets.ciphertext; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.ciphertext IS 'AES-256-GCM(KEK, nonce, secret, AAD = secret_id): 32 bytes and the tag; NULL once retired (erased, not recoverable).';

-- Name: COLUMN signing_secrets.source; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.source IS 'How the secret arrived: env (LEDGER_SIGNING_SECRETS), api (admin API add), generated (admin API generate), dev (embedded-mode bootstrap).';

-- Name: COLUMN signing_secrets.added_on; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.added_on IS 'When the secret was stored.';

-- Name: COLUMN signing_secrets.retired_on; Type: COMMENT; Schema: public
COMMENT ON COLUMN public.signing_secrets.retired_on IS 'When the secret was retired; NULL while it is active and opens callbacks.';

-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (account_id);

-- Name: adjustment_requests adjustment_requests_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.adjustment_requests
    ADD CONSTRAINT adjustment_requests_key UNIQUE (account_id, idempotency_key);

-- Name: adjustment_requests adjustment_requests_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.adjustment_requests
    ADD CONSTRAINT adjustment_requests_pkey PRIMARY KEY (adjustment_id);

-- Name: adjustments adjustments_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.adjustments
    ADD CONSTRAINT adjustments_pkey PRIMARY KEY (account_id, idempotency_key);

-- Name: admin_tokens admin_tokens_hash_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.admin_tokens
    ADD CONSTRAINT admin_tokens_hash_key UNIQUE (token_hash);

-- Name: admin_tokens admin_tokens_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.admin_tokens
    ADD CONSTRAINT admin_tokens_pkey PRIMARY KEY (token_id);

-- Name: audit_head audit_head_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.audit_head
    ADD CONSTRAINT audit_head_pkey PRIMARY KEY (singleton);

-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (seq);

-- Name: callback_authorize callback_authorize_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.callback_authorize
    ADD CONSTRAINT callback_authorize_pkey PRIMARY KEY (scope, idempotency_key);

-- Name: callback_capture callback_capture_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.callback_capture
    ADD CONSTRAINT callback_capture_pkey PRIMARY KEY (scope, idempotency_key);

-- Name: callback_credit callback_credit_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.callback_credit
    ADD CONSTRAINT callback_credit_pkey PRIMARY KEY (scope, idempotency_key);

-- Name: callback_release callback_release_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.callback_release
    ADD CONSTRAINT callback_release_pkey PRIMARY KEY (scope, idempotency_key);

-- Name: credit_conflicts credit_conflicts_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.credit_conflicts
    ADD CONSTRAINT credit_conflicts_pkey PRIMARY KEY (request_id, idempotency_key);

-- Name: credits credits_credit_reference_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.credits
    ADD CONSTRAINT credits_credit_reference_key UNIQUE (credit_reference);

-- Name: credits credits_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.credits
    ADD CONSTRAINT credits_pkey PRIMARY KEY (request_id);

-- Name: hold_settlements hold_settlements_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.hold_settlements
    ADD CONSTRAINT hold_settlements_pkey PRIMARY KEY (hold_reference);

-- Name: holds holds_payout_id_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_payout_id_key UNIQUE (payout_id);

-- Name: holds holds_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_pkey PRIMARY KEY (hold_reference);

-- Name: instruments instruments_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.instruments
    ADD CONSTRAINT instruments_pkey PRIMARY KEY (token);

-- Name: journal journal_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.journal
    ADD CONSTRAINT journal_pkey PRIMARY KEY (transaction_id);

-- Name: open_holds open_holds_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.open_holds
    ADD CONSTRAINT open_holds_pkey PRIMARY KEY (hold_reference);

-- Name: orphans orphans_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.orphans
    ADD CONSTRAINT orphans_pkey PRIMARY KEY (kind, hold_reference);

-- Name: reconciliation_account_states reconciliation_account_states_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_account_states
    ADD CONSTRAINT reconciliation_account_states_pkey PRIMARY KEY (account_id);

-- Name: reconciliation_checkpoints reconciliation_checkpoints_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_checkpoints
    ADD CONSTRAINT reconciliation_checkpoints_pkey PRIMARY KEY (checkpoint_id);

-- Name: reconciliation_checkpoints reconciliation_checkpoints_seq_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_checkpoints
    ADD CONSTRAINT reconciliation_checkpoints_seq_key UNIQUE (seq);

-- Name: reconciliation_findings reconciliation_findings_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_findings
    ADD CONSTRAINT reconciliation_findings_pkey PRIMARY KEY (run_id, seq);

-- Name: reconciliation_fixes reconciliation_fixes_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_fixes
    ADD CONSTRAINT reconciliation_fixes_pkey PRIMARY KEY (hold_reference);

-- Name: reconciliation_issues reconciliation_issues_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_issues
    ADD CONSTRAINT reconciliation_issues_key UNIQUE (kind, subject);

-- Name: reconciliation_issues reconciliation_issues_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_issues
    ADD CONSTRAINT reconciliation_issues_pkey PRIMARY KEY (finding_id);

-- Name: reconciliation_lease reconciliation_lease_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_lease
    ADD CONSTRAINT reconciliation_lease_pkey PRIMARY KEY (singleton);

-- Name: reconciliation_runs reconciliation_runs_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_runs
    ADD CONSTRAINT reconciliation_runs_pkey PRIMARY KEY (run_id);

-- Name: signing_secrets signing_secrets_fingerprint_key; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.signing_secrets
    ADD CONSTRAINT signing_secrets_fingerprint_key UNIQUE (fingerprint);

-- Name: signing_secrets signing_secrets_pkey; Type: CONSTRAINT; Schema: public
ALTER TABLE ONLY public.signing_secrets
    ADD CONSTRAINT signing_secrets_pkey PRIMARY KEY (secret_id);

-- Name: accounts_owner_idx; Type: INDEX; Schema: public
CREATE INDEX accounts_owner_idx ON public.accounts USING btree (owner_external_id, account_id);

-- Name: accounts_skeleton_key; Type: INDEX; Schema: public
CREATE UNIQUE INDEX accounts_skeleton_key ON public.accounts USING btree (skeleton);

-- Name: accounts_skeleton_missing_idx; Type: INDEX; Schema: public
CREATE INDEX accounts_skeleton_missing_idx ON public.accounts USING btree (account_id) WHERE ((skeleton IS NULL) AND ((kind)::text = 'customer'::text));

-- Name: adjustment_requests_requested_idx; Type: INDEX; Schema: public
CREATE INDEX adjustment_requests_requested_idx ON public.adjustment_requests USING btree (requested_at, adjustment_id);

-- Name: adjustments_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX adjustments_recorded_idx ON public.adjustments USING btree (recorded_xid);

-- Name: adjustments_transaction_idx; Type: INDEX; Schema: public
CREATE INDEX adjustments_transaction_idx ON public.adjustments USING btree (transaction_id);

-- Name: admin_tokens_live_name_key; Type: INDEX; Schema: public
CREATE UNIQUE INDEX admin_tokens_live_name_key ON public.admin_tokens USING btree (name) WHERE (revoked_on IS NULL);

-- Name: audit_log_actor_id_idx; Type: INDEX; Schema: public
CREATE INDEX audit_log_actor_id_idx ON public.audit_log USING btree (actor_id, seq);

-- Name: audit_log_actor_name_idx; Type: INDEX; Schema: public
CREATE INDEX audit_log_actor_name_idx ON public.audit_log USING btree (actor_name, seq);

-- Name: audit_log_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX audit_log_recorded_idx ON public.audit_log USING btree (recorded_at, seq);

-- Name: callback_authorize_received_idx; Type: INDEX; Schema: public
CREATE INDEX callback_authorize_received_idx ON public.callback_authorize USING brin (received_at);

-- Name: callback_capture_received_idx; Type: INDEX; Schema: public
CREATE INDEX callback_capture_received_idx ON public.callback_capture USING brin (received_at);

-- Name: callback_credit_received_idx; Type: INDEX; Schema: public
CREATE INDEX callback_credit_received_idx ON public.callback_credit USING brin (received_at);

-- Name: callback_credit_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX callback_credit_recorded_idx ON public.callback_credit USING btree (recorded_xid);

-- Name: callback_credit_subject_idx; Type: INDEX; Schema: public
CREATE INDEX callback_credit_subject_idx ON public.callback_credit USING btree (subject);

-- Name: callback_release_received_idx; Type: INDEX; Schema: public
CREATE INDEX callback_release_received_idx ON public.callback_release USING brin (received_at);

-- Name: credits_account_idx; Type: INDEX; Schema: public
CREATE INDEX credits_account_idx ON public.credits USING btree (account_id, created_at);

-- Name: credits_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX credits_recorded_idx ON public.credits USING btree (recorded_xid);

-- Name: hold_settlements_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX hold_settlements_recorded_idx ON public.hold_settlements USING btree (recorded_xid);

-- Name: hold_settlements_transaction_idx; Type: INDEX; Schema: public
CREATE INDEX hold_settlements_transaction_idx ON public.hold_settlements USING btree (transaction_id) WHERE (transaction_id IS NOT NULL);

-- Name: holds_account_idx; Type: INDEX; Schema: public
CREATE INDEX holds_account_idx ON public.holds USING btree (account_id, placed_at);

-- Name: holds_placed_idx; Type: INDEX; Schema: public
CREATE INDEX holds_placed_idx ON public.holds USING btree (placed_at);

-- Name: holds_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX holds_recorded_idx ON public.holds USING btree (recorded_xid);

-- Name: journal_account_idx; Type: INDEX; Schema: public
CREATE INDEX journal_account_idx ON public.journal USING btree (account_id, created_at);

-- Name: journal_recorded_idx; Type: INDEX; Schema: public
CREATE INDEX journal_recorded_idx ON public.journal USING btree (recorded_xid);

-- Name: journal_time_idx; Type: INDEX; Schema: public
CREATE INDEX journal_time_idx ON public.journal USING btree (created_at, transaction_id);

-- Name: reconciliation_findings_finding_idx; Type: INDEX; Schema: public
CREATE INDEX reconciliation_findings_finding_idx ON public.reconciliation_findings USING btree (finding_id);

-- Name: reconciliation_fixes_run_idx; Type: INDEX; Schema: public
CREATE INDEX reconciliation_fixes_run_idx ON public.reconciliation_fixes USING btree (run_id);

-- Name: reconciliation_runs_started_idx; Type: INDEX; Schema: public
CREATE INDEX reconciliation_runs_started_idx ON public.reconciliation_runs USING btree (started_on);

-- Name: accounts accounts_identity; Type: TRIGGER; Schema: public
CREATE TRIGGER accounts_identity BEFORE INSERT OR DELETE ON public.accounts FOR EACH ROW EXECUTE FUNCTION public.accounts_guard();

-- Name: accounts accounts_immutable; Type: TRIGGER; Schema: public
CREATE TRIGGER accounts_immutable BEFORE UPDATE OF account_id, kind, currency ON public.accounts FOR EACH STATEMENT EXECUTE FUNCTION public.accounts_guard();

-- Name: accounts accounts_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON public.accounts FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: adjustment_requests adjustment_requests_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER adjustment_requests_no_truncate BEFORE TRUNCATE ON public.adjustment_requests FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: adjustments adjustments_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER adjustments_no_truncate BEFORE TRUNCATE ON public.adjustments FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: admin_tokens admin_tokens_guard; Type: TRIGGER; Schema: public
CREATE TRIGGER admin_tokens_guard BEFORE DELETE OR UPDATE ON public.admin_tokens FOR EACH ROW EXECUTE FUNCTION public.admin_tokens_guard();

-- Name: admin_tokens admin_tokens_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER admin_tokens_no_truncate BEFORE TRUNCATE ON public.admin_tokens FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: audit_head audit_head_guard; Type: TRIGGER; Schema: public
CREATE TRIGGER audit_head_guard BEFORE DELETE OR UPDATE ON public.audit_head FOR EACH ROW EXECUTE FUNCTION public.audit_append_only();

-- Name: audit_head audit_head_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON public.audit_head FOR EACH STATEMENT EXECUTE FUNCTION public.audit_append_only();

-- Name: audit_log audit_log_append_only; Type: TRIGGER; Schema: public
CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE ON public.audit_log FOR EACH ROW EXECUTE FUNCTION public.audit_append_only();

-- Name: audit_log audit_log_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON public.audit_log FOR EACH STATEMENT EXECUTE FUNCTION public.audit_append_only();

-- Name: credits credits_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER credits_no_truncate BEFORE TRUNCATE ON public.credits FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: hold_settlements hold_settlements_append_only; Type: TRIGGER; Schema: public
CREATE TRIGGER hold_settlements_append_only BEFORE DELETE OR UPDATE ON public.hold_settlements FOR EACH ROW EXECUTE FUNCTION public.holds_append_only();

-- Name: hold_settlements hold_settlements_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER hold_settlements_no_truncate BEFORE TRUNCATE ON public.hold_settlements FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: holds holds_append_only; Type: TRIGGER; Schema: public
CREATE TRIGGER holds_append_only BEFORE DELETE OR UPDATE ON public.holds FOR EACH ROW EXECUTE FUNCTION public.holds_append_only();

-- Name: holds holds_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER holds_no_truncate BEFORE TRUNCATE ON public.holds FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_no_truncate();

-- Name: journal journal_append_only; Type: TRIGGER; Schema: public
CREATE TRIGGER journal_append_only BEFORE DELETE OR UPDATE ON public.journal FOR EACH ROW EXECUTE FUNCTION public.journal_append_only();

-- Name: journal journal_no_truncate; Type: TRIGGER; Schema: public
CREATE TRIGGER journal_no_truncate BEFORE TRUNCATE ON public.journal FOR EACH STATEMENT EXECUTE FUNCTION public.journal_append_only();

-- Name: adjustment_requests adjustment_requests_account_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.adjustment_requests
    ADD CONSTRAINT adjustment_requests_account_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(account_id);

-- Name: adjustments adjustments_account_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.adjustments
    ADD CONSTRAINT adjustments_account_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(account_id);

-- Name: instruments instruments_account_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.instruments
    ADD CONSTRAINT instruments_account_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(account_id);

-- Name: reconciliation_account_states reconciliation_account_states_checkpoint_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_account_states
    ADD CONSTRAINT reconciliation_account_states_checkpoint_fkey FOREIGN KEY (checkpoint_id) REFERENCES public.reconciliation_checkpoints(checkpoint_id);

-- Name: reconciliation_checkpoints reconciliation_checkpoints_from_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_checkpoints
    ADD CONSTRAINT reconciliation_checkpoints_from_fkey FOREIGN KEY (from_checkpoint) REFERENCES public.reconciliation_checkpoints(checkpoint_id);

-- Name: reconciliation_checkpoints reconciliation_checkpoints_run_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_checkpoints
    ADD CONSTRAINT reconciliation_checkpoints_run_fkey FOREIGN KEY (run_id) REFERENCES public.reconciliation_runs(run_id);

-- Name: reconciliation_findings reconciliation_findings_run_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_findings
    ADD CONSTRAINT reconciliation_findings_run_fkey FOREIGN KEY (run_id) REFERENCES public.reconciliation_runs(run_id);

-- Name: reconciliation_fixes reconciliation_fixes_run_fkey; Type: FK CONSTRAINT; Schema: public
ALTER TABLE ONLY public.reconciliation_fixes
    ADD CONSTRAINT reconciliation_fixes_run_fkey FOREIGN KEY (run_id) REFERENCES public.reconciliation_runs(run_id);
