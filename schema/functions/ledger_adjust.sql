-- ledger_adjust applies a signed adjustment from the core banking system
-- (the admin API's POST /v1/accounts/{accountID}/adjustments), idempotent
-- by key per account, and returns its journal transaction and whether it
-- was a replay. It raises, with the SQLSTATE the store maps to a typed
-- error: LA001 the account is not a customer account that exists; LA004
-- the key was used with another amount or memo; LA003 the account is
-- closed; LA002 available (balance - held) would go below zero. An applied
-- adjustment moves the balance and journals it against core:<CUR>.
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION ledger_adjust(
    p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_transaction_id uuid, p_now timestamptz,
    OUT transaction_id uuid, OUT replayed boolean)
LANGUAGE plpgsql AS $$
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
