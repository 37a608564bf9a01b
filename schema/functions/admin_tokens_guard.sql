-- admin_tokens_guard guards admin_tokens (trigger admin_tokens_guard): a
-- token's row is never deleted, and the only change it ever takes is its
-- revocation, once (revoked_on from NULL to a time); anything else is
-- LA014 admin_tokens_immutable. The audit trail names actors by token ID,
-- so each ID keeps naming the token it named.
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION admin_tokens_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.revoked_on IS NULL AND NEW.revoked_on IS NOT NULL
       AND (NEW.token_id, NEW.name, NEW.token_hash, NEW.scopes, NEW.created_on, NEW.created_by, NEW.expires_on)
           IS NOT DISTINCT FROM (OLD.token_id, OLD.name, OLD.token_hash, OLD.scopes, OLD.created_on, OLD.created_by, OLD.expires_on) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'an admin token is never deleted, and only revoked once (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA014', CONSTRAINT = 'admin_tokens_immutable';
END $$;
