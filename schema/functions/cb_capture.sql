-- cb_capture decides a capture callback and applies it: the capture
-- decision table (docs/contract.md §2.4). Row 1 is here; rows 2 to 6 are
-- hold_settle's (schema/functions/hold_settle.sql), called with status
-- 'captured' and journal kind 'capture'.
--
--   1   (payoutID, idempotencyKey) was seen: the stored answer ('replay'),
--       or 'mismatch' (422) with other claims
--   2-6 hold_settle: an orphan capture, payout_mismatch, the original
--       captureReference, hold_released, or the capture itself
--
-- The answer is stored in callback_capture, in the same transaction.
--
-- Locks, in the order every function keeps (schema/README.md): advisory
-- lock class 2 on the key's scope (the payoutID), then hold_settle's: the
-- settlement's primary key entry, then the account's row.
--
-- The common case, row 6 for a new key, is one statement after the lock:
-- it settles the hold as hold_settle's row 6 does and stores the answer,
-- only when the key is new, the hold this payout's and not yet settled.
-- When any of these fails, the statement wrote nothing, and row 1 and
-- hold_settle decide, as the table reads.
--
-- state is 'new' (decided now, the answer stored), 'replay' (the stored
-- answer of this key) or 'mismatch' (the key was used with other claims).
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION cb_capture(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_capture_reference text, p_transaction_id uuid,
    OUT state text, OUT outcome text, OUT reason text, OUT reference text)
LANGUAGE plpgsql AS $$
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
