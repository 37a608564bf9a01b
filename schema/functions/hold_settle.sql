-- hold_settle captures (p_status 'captured') or releases ('released') a
-- hold: rows 2 to 6 of the capture and release decision tables
-- (docs/contract.md §2.4 and §2.5), labelled in the body. Called by
-- cb_capture, cb_release and reconciliation's fixes (p_kind
-- 'reconciliation' journals a fix's capture as such).
--
--   2   the holdReference was never issued here: approved, with the
--       reference first answered for it, then and ever after (orphans)
--   3   p_payout_id is given and the hold is another payout's: failed
--       payout_mismatch
--   4   the hold was settled the same way: approved, its original reference
--   5   the hold was settled the other way: failed hold_released (a
--       capture) or hold_captured (a release)
--   6   the hold is held: approved; one statement writes its settlement,
--       lowers held (and, for a capture, balance), deletes it from
--       open_holds and, for a capture, journals it against settlement:<CUR>
--
-- cb_capture and cb_release apply row 6 of a new key themselves, in the
-- statement that stores their answer, with the same writes as row 6 here:
-- a change of what a settlement writes is made in the three files.
--
-- A concurrent capture or release of the same hold waits on the
-- settlement's primary key entry for the first to commit, then finds its
-- row (rows 4 and 5): a hold is settled once (I3).
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

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
