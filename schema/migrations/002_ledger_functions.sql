-- Ledger operations as server-side functions, so that each callback's effect
-- is one round trip (design 2.9). Each function:
--   * takes the current time as a parameter (tests pin it);
--   * locks in one fixed order: a transaction-scoped advisory lock on the
--     payout or payment request (hold_place, ledger_credit), then the
--     customer account row, then the hold row, then system-account shard
--     rows, so that concurrent calls never deadlock;
--   * runs under READ COMMITTED (every statement sees rows committed before
--     it started, which is how a loser of an ON CONFLICT race reads the winner);
--   * composes into the caller's transaction (it never commits).

-- The answer of a hold or credit operation: outcome, reason (for refusals),
-- the reference answered, and whether the reference is an orphan's.
CREATE TYPE ledger_decision AS (outcome text, reason text, reference text, orphan boolean);

-- The foreign keys from effects to their journal transaction are checked at
-- commit, so an effect may claim its row before its journal is written.
ALTER TABLE credits ALTER CONSTRAINT credits_transaction_fkey DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE adjustments ALTER CONSTRAINT adjustments_transaction_fkey DEFERRABLE INITIALLY DEFERRED;

-- ledger_post_shard adds p_amount to the shard of a system account that this
-- database session owns (see account_shards). The session setting
-- ledger.settlement_shards (1 to 64, default 64) narrows the shards used;
-- benchmarks set it to 1 to measure the single-row baseline.
CREATE FUNCTION ledger_post_shard(p_account_id text, p_amount numeric) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO account_shards AS s (account_id, shard, balance)
    VALUES (p_account_id,
            pg_backend_pid() % least(greatest(coalesce(nullif(current_setting('ledger.settlement_shards', true), '')::int, 64), 1), 64),
            p_amount)
    ON CONFLICT (account_id, shard) DO UPDATE SET balance = s.balance + EXCLUDED.balance
$$;

-- ledger_journal_pair writes one journal transaction of two entries: p_amount
-- to the customer account and -p_amount to the system account, and moves the
-- system account's shard. The caller has already moved the customer's
-- balance row (together with its held amount, when a hold is involved).
CREATE FUNCTION ledger_journal_pair(
    p_transaction_id uuid, p_kind text, p_reference text, p_memo text, p_now timestamptz,
    p_account_id text, p_system_id text, p_currency text, p_amount numeric) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO journal_transactions (transaction_id, kind, reference, memo, created_at)
    VALUES (p_transaction_id, p_kind, p_reference, p_memo, p_now);
    INSERT INTO journal_entries (transaction_id, account_id, currency, amount, created_at)
    VALUES (p_transaction_id, p_account_id, p_currency, p_amount, p_now),
           (p_transaction_id, p_system_id, p_currency, -p_amount, p_now);
    PERFORM ledger_post_shard(p_system_id, -p_amount);
END $$;

-- ledger_ensure_system_accounts creates settlement:<CUR> and core:<CUR>.
CREATE FUNCTION ledger_ensure_system_accounts(p_currency text, p_now timestamptz) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at)
    VALUES ('settlement:' || p_currency, '', p_currency, 'settlement', 'open', p_now, p_now),
           ('core:' || p_currency, '', p_currency, 'core', 'open', p_now, p_now)
    -- No arbiter: a concurrent creation conflicts on both unique keys
    -- (account_id, and account_id with currency); either means "exists".
    ON CONFLICT DO NOTHING
$$;

-- ledger_adjust applies a signed adjustment from the core banking system,
-- idempotent by key per account. Returns the transaction and whether it was a replay.
CREATE FUNCTION ledger_adjust(
    p_account_id text, p_amount numeric, p_key text, p_memo text,
    p_transaction_id uuid, p_now timestamptz,
    OUT transaction_id uuid, OUT replayed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    a accounts%ROWTYPE;
    prior adjustments%ROWTYPE;
BEGIN
    PERFORM 1 FROM accounts WHERE account_id = p_account_id AND kind = 'customer';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'account not found' USING ERRCODE = 'LA001';
    END IF;
    INSERT INTO adjustments AS j (idempotency_key, account_id, amount, memo, transaction_id, created_at)
    VALUES (p_key, p_account_id, p_amount, p_memo, p_transaction_id, p_now)
    ON CONFLICT (account_id, idempotency_key) DO NOTHING
    RETURNING j.transaction_id INTO transaction_id;
    IF transaction_id IS NULL THEN
        SELECT * INTO prior FROM adjustments WHERE account_id = p_account_id AND idempotency_key = p_key;
        IF prior.amount <> p_amount OR prior.memo <> p_memo THEN
            RAISE EXCEPTION 'idempotency key reused with another adjustment' USING ERRCODE = 'LA004';
        END IF;
        transaction_id := prior.transaction_id;
        replayed := true;
        RETURN;
    END IF;
    replayed := false;
    SELECT * INTO a FROM accounts WHERE account_id = p_account_id FOR NO KEY UPDATE;
    IF a.status = 'closed' THEN
        RAISE EXCEPTION 'account is closed' USING ERRCODE = 'LA003';
    END IF;
    IF a.balance - a.held + p_amount < 0 THEN
        RAISE EXCEPTION 'available would go below zero' USING ERRCODE = 'LA002';
    END IF;
    UPDATE accounts SET balance = balance + p_amount, updated_at = p_now WHERE account_id = p_account_id;
    PERFORM ledger_journal_pair(p_transaction_id, 'adjustment', p_key, p_memo, p_now,
                                p_account_id, 'core:' || a.currency, a.currency, p_amount);
END $$;

-- hold_place decides an authorize (design 2.3 rows 3 to 12) and places the
-- hold when approved. p_risk_reason is the fraud decision made by the caller
-- (NULL, 'fraud_suspected' or 'step_up_required'); it applies after the
-- account checks, as the decision table orders it.
CREATE FUNCTION hold_place(
    p_payout_id text, p_external_id text, p_funding_source text, p_currency text,
    p_amount numeric, p_risk_reason text, p_hold_reference text, p_now timestamptz)
RETURNS ledger_decision
LANGUAGE plpgsql AS $$
DECLARE
    h holds%ROWTYPE;
    a accounts%ROWTYPE;
    acct text;
    ref text;
BEGIN
    -- Authorizes of one payout (under other keys) run one after the other,
    -- so that a second one always sees the first's hold (rows 3 and 4)
    -- rather than deciding on funds the first has already held. Taken
    -- after the callback's key claim and before any row lock.
    PERFORM pg_advisory_xact_lock(hashtext('hold_place'), hashtext(p_payout_id));
    SELECT * INTO h FROM holds WHERE payout_id = p_payout_id;
    IF NOT FOUND THEN
        SELECT account_id INTO acct FROM instruments WHERE token = p_funding_source AND kind = 'source';
        IF NOT FOUND THEN
            RETURN ROW('denied', 'unknown_funding_source', NULL, false)::ledger_decision;
        END IF;
        SELECT * INTO a FROM accounts WHERE account_id = acct FOR NO KEY UPDATE;
        IF a.owner_external_id <> p_external_id THEN
            RETURN ROW('denied', 'funding_source_mismatch', NULL, false)::ledger_decision;
        ELSIF a.status <> 'open' THEN
            RETURN ROW('denied', 'account_unavailable', NULL, false)::ledger_decision;
        ELSIF a.currency <> p_currency THEN
            RETURN ROW('denied', 'currency_mismatch', NULL, false)::ledger_decision;
        ELSIF p_risk_reason IS NOT NULL THEN
            RETURN ROW('denied', p_risk_reason, NULL, false)::ledger_decision;
        ELSIF a.balance - a.held < p_amount THEN
            RETURN ROW('denied', 'insufficient_funds', NULL, false)::ledger_decision;
        END IF;
        INSERT INTO holds AS t (hold_reference, payout_id, account_id, funding_source, currency, amount, status, placed_at)
        VALUES (p_hold_reference, p_payout_id, acct, p_funding_source, p_currency, p_amount, 'held', p_now)
        ON CONFLICT (payout_id) DO NOTHING
        RETURNING t.hold_reference INTO ref;
        IF ref IS NOT NULL THEN
            UPDATE accounts SET held = held + p_amount, updated_at = p_now WHERE account_id = acct;
            RETURN ROW('approved', NULL, ref, false)::ledger_decision;
        END IF;
        -- A concurrent authorize of this payout (another key) committed
        -- first; answer against its hold.
        SELECT * INTO h FROM holds WHERE payout_id = p_payout_id;
    END IF;
    IF h.status = 'held' AND h.amount = p_amount AND h.currency = p_currency
       AND h.funding_source = p_funding_source THEN
        RETURN ROW('approved', NULL, h.hold_reference, false)::ledger_decision;
    END IF;
    RETURN ROW('denied', 'payout_already_authorized', NULL, false)::ledger_decision;
END $$;

-- hold_orphan records the first capture or release (p_kind) of a hold
-- reference this ledger never issued, and returns the reference answered for
-- it then and ever after (design 2.4 and 2.5, row 2).
CREATE FUNCTION hold_orphan(p_kind text, p_hold_reference text, p_payout_id text, p_reference text, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    ref text;
BEGIN
    INSERT INTO orphans AS o (kind, hold_reference, payout_id, reference, created_at)
    VALUES (p_kind, p_hold_reference, coalesce(p_payout_id, ''), p_reference, p_now)
    ON CONFLICT (kind, hold_reference) DO NOTHING
    RETURNING o.reference INTO ref;
    IF ref IS NULL THEN
        SELECT reference INTO ref FROM orphans WHERE kind = p_kind AND hold_reference = p_hold_reference;
    END IF;
    RETURN ref;
END $$;

-- hold_capture settles a hold (design 2.4 rows 2 to 6): the sender's
-- balance and held fall by the amount; the journal debits the sender and
-- credits settlement. p_payout_id may be NULL (not checked).
CREATE FUNCTION hold_capture(
    p_hold_reference text, p_payout_id text, p_capture_reference text,
    p_transaction_id uuid, p_now timestamptz)
RETURNS ledger_decision
LANGUAGE plpgsql AS $$
DECLARE
    h holds%ROWTYPE;
    acct text;
BEGIN
    SELECT account_id INTO acct FROM holds WHERE hold_reference = p_hold_reference;
    IF NOT FOUND THEN
        RETURN ROW('approved', NULL, hold_orphan('capture', p_hold_reference, p_payout_id, p_capture_reference, p_now), true)::ledger_decision;
    END IF;
    PERFORM 1 FROM accounts WHERE account_id = acct FOR NO KEY UPDATE;
    SELECT * INTO h FROM holds WHERE hold_reference = p_hold_reference FOR UPDATE;
    IF p_payout_id IS NOT NULL AND h.payout_id <> p_payout_id THEN
        RETURN ROW('failed', 'payout_mismatch', NULL, false)::ledger_decision;
    ELSIF h.status = 'captured' THEN
        RETURN ROW('approved', NULL, h.capture_reference, false)::ledger_decision;
    ELSIF h.status = 'released' THEN
        RETURN ROW('failed', 'hold_released', NULL, false)::ledger_decision;
    END IF;
    UPDATE accounts SET balance = balance - h.amount, held = held - h.amount, updated_at = p_now
    WHERE account_id = acct;
    PERFORM ledger_journal_pair(p_transaction_id, 'capture', p_capture_reference, h.payout_id, p_now,
                                acct, 'settlement:' || h.currency, h.currency, -h.amount);
    UPDATE holds SET status = 'captured', capture_reference = p_capture_reference,
                     transaction_id = p_transaction_id, captured_at = p_now
    WHERE hold_reference = p_hold_reference;
    RETURN ROW('approved', NULL, p_capture_reference, false)::ledger_decision;
END $$;

-- hold_release drops a hold (design 2.5 rows 2 to 6): held falls by the
-- amount; no journal entry. p_payout_id may be NULL (not checked).
CREATE FUNCTION hold_release(
    p_hold_reference text, p_payout_id text, p_reason text, p_release_reference text,
    p_now timestamptz)
RETURNS ledger_decision
LANGUAGE plpgsql AS $$
DECLARE
    h holds%ROWTYPE;
    acct text;
BEGIN
    SELECT account_id INTO acct FROM holds WHERE hold_reference = p_hold_reference;
    IF NOT FOUND THEN
        RETURN ROW('approved', NULL, hold_orphan('release', p_hold_reference, p_payout_id, p_release_reference, p_now), true)::ledger_decision;
    END IF;
    PERFORM 1 FROM accounts WHERE account_id = acct FOR NO KEY UPDATE;
    SELECT * INTO h FROM holds WHERE hold_reference = p_hold_reference FOR UPDATE;
    IF p_payout_id IS NOT NULL AND h.payout_id <> p_payout_id THEN
        RETURN ROW('failed', 'payout_mismatch', NULL, false)::ledger_decision;
    ELSIF h.status = 'released' THEN
        RETURN ROW('approved', NULL, h.release_reference, false)::ledger_decision;
    ELSIF h.status = 'captured' THEN
        RETURN ROW('failed', 'hold_captured', NULL, false)::ledger_decision;
    END IF;
    UPDATE accounts SET held = held - h.amount, updated_at = p_now WHERE account_id = acct;
    UPDATE holds SET status = 'released', release_reference = p_release_reference,
                     release_reason = p_reason, released_at = p_now
    WHERE hold_reference = p_hold_reference;
    RETURN ROW('approved', NULL, p_release_reference, false)::ledger_decision;
END $$;

-- ledger_credit credits a customer whose payment request was paid (design
-- 2.6 rows 2 to 9): the journal debits settlement and credits the account.
-- p_max NULL means no limit.
CREATE FUNCTION ledger_credit(
    p_request_id text, p_destination text, p_requester text, p_currency text,
    p_amount numeric, p_max numeric, p_credit_reference text,
    p_transaction_id uuid, p_now timestamptz)
RETURNS ledger_decision
LANGUAGE plpgsql AS $$
DECLARE
    a accounts%ROWTYPE;
    acct text;
    ref text;
BEGIN
    -- Credits of one payment request (under other keys) run one after the
    -- other, so that a second one always sees the first's credit (row 2)
    -- and never answers refused for a request that was credited. Taken
    -- after the callback's key claim and before any row lock.
    PERFORM pg_advisory_xact_lock(hashtext('ledger_credit'), hashtext(p_request_id));
    SELECT credit_reference INTO ref FROM credits WHERE request_id = p_request_id;
    IF FOUND THEN
        RETURN ROW('approved', NULL, ref, false)::ledger_decision;
    END IF;
    SELECT account_id INTO acct FROM instruments WHERE token = p_destination AND kind = 'destination';
    IF NOT FOUND THEN
        RETURN ROW('destination_unavailable', 'unknown_destination', NULL, false)::ledger_decision;
    END IF;
    SELECT * INTO a FROM accounts WHERE account_id = acct FOR NO KEY UPDATE;
    IF a.status = 'closed' THEN
        RETURN ROW('destination_unavailable', 'account_closed', NULL, false)::ledger_decision;
    ELSIF a.owner_external_id <> p_requester THEN
        RETURN ROW('refused', 'destination_mismatch', NULL, false)::ledger_decision;
    ELSIF a.status = 'frozen' THEN
        RETURN ROW('refused', 'account_frozen', NULL, false)::ledger_decision;
    ELSIF a.currency <> p_currency THEN
        RETURN ROW('refused', 'currency_mismatch', NULL, false)::ledger_decision;
    ELSIF p_max IS NOT NULL AND p_amount > p_max THEN
        RETURN ROW('refused', 'amount_over_limit', NULL, false)::ledger_decision;
    END IF;
    INSERT INTO credits AS c (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
    VALUES (p_request_id, p_credit_reference, acct, p_destination, p_currency, p_amount, p_transaction_id, p_now)
    ON CONFLICT (request_id) DO NOTHING
    RETURNING c.credit_reference INTO ref;
    IF ref IS NULL THEN
        -- A concurrent credit of this request (another key) committed first.
        SELECT credit_reference INTO ref FROM credits WHERE request_id = p_request_id;
        RETURN ROW('approved', NULL, ref, false)::ledger_decision;
    END IF;
    UPDATE accounts SET balance = balance + p_amount, updated_at = p_now WHERE account_id = acct;
    PERFORM ledger_journal_pair(p_transaction_id, 'credit', p_credit_reference, p_request_id, p_now,
                                acct, 'settlement:' || p_currency, p_currency, p_amount);
    RETURN ROW('approved', NULL, p_credit_reference, false)::ledger_decision;
END $$;
