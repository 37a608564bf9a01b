-- cb_authorize decides an authorize callback and applies it: the authorize
-- decision table (docs/contract.md §2.3), all of it, rows 1 to 12, the
-- first matching row deciding; each row is labelled in the body.
--
--   1   (payoutID, idempotencyKey) was seen: the stored answer ('replay')
--   1a  ... with other business claims: 'mismatch' (422)
--   2   fraudScore outside 0..1: 'invalid' (400), nothing stored
--   3   the payout has a hold (under another key), held, same amount,
--       currency and source: approved with that holdReference
--   4   the payout has a hold, otherwise: denied payout_already_authorized
--   5   fundingSource is not a registered source: denied unknown_funding_source
--   6   the source's account is not owned by externalID: denied funding_source_mismatch
--   7   the account is frozen or closed: denied account_unavailable
--   8   the currency is not the account's: denied currency_mismatch
--   9   fraudScore >= p_fraud_deny: denied fraud_suspected
--   10  fraudScore >= p_fraud_stepup: denied step_up_required
--   11  available (balance - held) below the amount: denied insufficient_funds
--   12  otherwise: approved; the hold is placed (holds, open_holds), held
--       rises by the amount, and the answer is stored, in one statement
--
-- A denial is stored like an approval: a later request with the key gets it.
--
-- Locks, in the order every function keeps (schema/README.md): advisory
-- lock class 1 on the payoutID, so that authorizes of one payout run one
-- after the other under any key (a second sees the first's answer or
-- hold, never funds the first has held); then the source account's row.
--
-- The common case, row 12, is one statement after the lock: the update of
-- the account, whose WHERE is every condition of rows 1 to 11 taken the
-- other way (the account's own under its row lock, re-checked on its
-- latest version if another transaction changed it meanwhile), places the
-- hold and stores the answer only when it matched. When it did not, the
-- statement wrote nothing, and the rows are decided one by one on the
-- locked account, as the table reads.
--
-- state is 'new' (decided now, the answer stored), 'replay' (the stored
-- answer of this key), 'mismatch' (the key was used with other claims) or
-- 'invalid' (row 2).
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

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
