-- audit_append_only guards the audit trail (triggers audit_log_*,
-- audit_head_*): a record is never updated, deleted or truncated, and the
-- head only ever moves one record on (audit_append); anything else is
-- LA006 audit_append_only, whoever asks. Someone who disables the triggers
-- can still edit or delete a record: the hash chain makes that visible
-- (reconciliation's audit_chain_broken).
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'audit_head' AND TG_OP = 'UPDATE' THEN
        -- Nested: NEW has these fields only on audit_head.
        IF NEW.singleton AND NEW.seq = OLD.seq + 1 THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'audit_append_only';
END $$;
