-- Open holds: the holds not yet settled, kept beside the append-only holds
-- and hold_settlements so that what is outstanding is read without going
-- through all of history. Before, every /metrics scrape (holds outstanding
-- per currency, stale holds) and every listing of held holds anti-joined
-- every hold ever placed with every settlement: on a database a year old,
-- seconds per scrape, and a scrape timed out (its series vanished) once the
-- tables outgrew its 2 s.
--
-- A row is inserted by the statement that places the hold (cb_authorize,
-- row 12) and deleted by the statement that settles it (hold_settle, row
-- 6): the table is what the anti-join computed, at one insert and one
-- delete per payout. Reconciliation checks it against the anti-join
-- (held_drift, I1).

CREATE TABLE open_holds (
    hold_reference text        COLLATE "C" NOT NULL,
    account_id     text        COLLATE "C" NOT NULL,
    currency       text        COLLATE "C" NOT NULL,
    amount         numeric     NOT NULL,
    placed_at      timestamptz NOT NULL,
    CONSTRAINT open_holds_pkey PRIMARY KEY (hold_reference)
);

INSERT INTO open_holds (hold_reference, account_id, currency, amount, placed_at)
SELECT h.hold_reference, h.account_id, h.currency, h.amount, h.placed_at
FROM holds h
WHERE NOT EXISTS (SELECT 1 FROM hold_settlements s WHERE s.hold_reference = h.hold_reference);

-- The functions of migration 006, each with its one change.

CREATE OR REPLACE FUNCTION cb_authorize(
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
            -- Row 12: approved: the hold is placed on the locked account
            -- (and listed as open), and the answer stored, in one statement.
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

CREATE OR REPLACE FUNCTION hold_settle(
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
