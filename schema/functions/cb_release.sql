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
-- lock class 3 on the key's scope, then hold_settle's: the settlement's
-- primary key entry, then the account's row.
--
-- The common case, row 6 for a new key, is one statement after the lock:
-- it settles the hold as hold_settle's row 6 does and stores the answer,
-- only when the key is new, the hold this payout's (when the payoutID is
-- given) and not yet settled. When any of these fails, the statement wrote
-- nothing, and row 1 and hold_settle decide, as the table reads.
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
