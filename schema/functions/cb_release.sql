-- cb_release decides a release callback and applies it: the release
-- decision table (docs/contract.md §2.5). The key's scope is the payoutID
-- when given, else the holdReference. Row 1 is here; rows 2 to 6 are
-- hold_settle's (schema/functions/hold_settle.sql), called with status
-- 'released'.
--
--   1   the key was seen: the stored answer ('replay'), or 'mismatch'
--       (422) with other claims
--   2-6 hold_settle: an orphan release, payout_mismatch, the original
--       releaseReference, hold_captured, or the release itself
--
-- The answer is stored in callback_release, in the same transaction.
--
-- Locks, in the order every function keeps (schema/README.md): advisory
-- lock class 3 on the key's scope, then hold_settle's.
--
-- state is 'new' (decided now, the answer stored), 'replay' (the stored
-- answer of this key) or 'mismatch' (the key was used with other claims).
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION cb_release(
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
