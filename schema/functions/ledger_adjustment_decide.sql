-- ledger_adjustment_decide is dual control of adjustments: one decision
-- table for the three actions of the admin API, each row labelled in the
-- body (-- R1 …). docs/admin-api.md draws the states; TestDualControlTable
-- (store/adjustments_test.go) runs every row.
--
-- request (POST /v1/accounts/{accountID}/adjustments), under the account's row lock:
--   R1 the account is not a customer account that exists: LA001
--   R2 the key names a request with the same amount and memo: pending, replayed (whatever its state now)
--   R3 the key names a request with another amount or memo: LA004
--   R4 dual control is off (p_approval_over NULL), |amount| is not over it, or the key names a
--      direct adjustment: ledger_adjust decides (a replay, LA004, LA003, LA002, or applied): adjusted
--   R5 the account is closed: LA003
--   R6 otherwise: pending, a new request that expires at p_expires_at; no money moves
-- approve (POST /v1/adjustments/{adjustmentID}/approval), under the account's row lock, then the request's:
--   A1 no such request: LA009
--   A2 posted: posted, replayed
--   A3 rejected: LA010
--   A4 pending, now at or past expires_at (expired): LA011
--   A5 the approver is its maker: LA012
--   A6 otherwise: ledger_adjust applies it under its key (LA003 closed, LA002 available below zero:
--      the request stays pending), and the request is posted with that transaction: posted
-- reject (POST /v1/adjustments/{adjustmentID}/rejection):
--   J1 no such request: LA009
--   J2 posted: LA013
--   J3 rejected: rejected, replayed
--   J4 expired: LA011
--   J5 pending: rejected (by a checker, or withdrawn by its maker)
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION ledger_adjustment_decide(
    p_action text, p_adjustment_id text, p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_approval_over numeric, p_expires_at timestamptz, p_actor_id text, p_actor_name text, p_note text,
    p_transaction_id uuid, p_now timestamptz,
    OUT outcome text, OUT adjustment_id text, OUT transaction_id uuid, OUT replayed boolean)
LANGUAGE plpgsql AS $$
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
