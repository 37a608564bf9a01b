-- cb_credit decides a credit-account callback and applies it: the credit
-- decision table (docs/contract.md §2.6), all of it, rows 1 to 9, the
-- first matching row deciding; each row is labelled in the body. p_max
-- NULL means no limit (LEDGER_CREDIT_MAX unset).
--
--   1   the idempotencyKey was seen: the stored answer ('replay'), or
--       'mismatch' (422) with other claims
--   2   the requestID was credited (under another key): approved, the
--       original creditReference
--   2a  ... for another amount or currency: 'amount_mismatch' (422
--       credit-amount-mismatch), nothing credited or stored as the key's
--       answer; the attempt is recorded in credit_conflicts
--   3   fundingDestination is not a registered destination:
--       destination_unavailable unknown_destination
--   4   the account is closed: destination_unavailable account_closed
--   5   the account is not owned by requesterExternalID: refused destination_mismatch
--   6   the account is frozen: refused account_frozen
--   7   the currency is not the account's: refused currency_mismatch
--   8   the amount is over p_max: refused amount_over_limit
--   9   otherwise: approved; credits, the account's balance and the
--       journal (debit settlement:<CUR>, credit the account) are written
--
-- The answer is stored in callback_credit, in the same transaction.
--
-- Locks, in the order every function keeps (schema/README.md): advisory
-- lock class 4 on the key, class 5 on the requestID (so that credits of
-- one payment request under other keys run one after the other, and a
-- second sees the first's credit: row 2), then the account's row.
--
-- The common case, row 9, is one statement after the locks: the update of
-- the account, whose WHERE is every condition of rows 1 to 8 taken the
-- other way (the account's own under its row lock, re-checked on its
-- latest version if another transaction changed it meanwhile), writes the
-- credit, the journal and the answer only when it matched. When it did
-- not, the statement wrote nothing, and the rows are decided one by one on
-- the locked account, as the table reads.
--
-- state is 'new' (decided now, the answer stored), 'replay' (the stored
-- answer of this key), 'mismatch' (the key was used with other claims) or
-- 'amount_mismatch' (row 2a: the requestID was credited for another
-- amount).
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION cb_credit(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_request_id text, p_destination text, p_requester text, p_currency text, p_amount numeric,
    p_max numeric, p_credit_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
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
