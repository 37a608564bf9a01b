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
-- lock class 2 on the key's scope (the payoutID), then hold_settle's.
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
