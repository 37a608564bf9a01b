-- ledger_no_truncate refuses TRUNCATE of the tables that record effects:
-- accounts, holds, hold_settlements, credits and adjustments (LA006
-- ledger_no_truncate).
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION ledger_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is never truncated', TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'ledger_no_truncate';
END $$;
