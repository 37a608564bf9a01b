-- ledger_ensure_system_accounts creates the system accounts of a currency,
-- settlement:<CUR> and core:<CUR>, unless they exist; concurrent calls
-- for one currency are safe.
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION ledger_ensure_system_accounts(p_currency text, p_now timestamptz) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at)
    VALUES ('settlement:' || p_currency, '', p_currency, 'settlement', 'open', p_now, p_now),
           ('core:' || p_currency, '', p_currency, 'core', 'open', p_now, p_now)
    -- No arbiter: a concurrent creation conflicts on both unique keys
    -- (account_id, and account_id with currency); either means "exists".
    ON CONFLICT DO NOTHING
$$;
