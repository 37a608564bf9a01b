-- accounts_guard guards accounts: a new account is named as its kind
-- requires (a customer account is not named settlement:… or core:…; a
-- system account is <kind>:<CUR>; else 23514 accounts_system_id_check);
-- the identity of an account (its ID, kind and currency) never changes
-- (LA008 accounts_immutable), and an account is never deleted (LA008
-- accounts_no_delete), so that every other table may name accounts by ID
-- without a foreign key. Trigger accounts_identity calls it for each row
-- inserted or deleted, trigger accounts_immutable once for each UPDATE
-- that sets account_id, kind or currency (a statement trigger: a row
-- trigger on UPDATE would lock each updated row once more, balance and
-- held updates included).
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION accounts_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF (NEW.kind = 'customer') = (NEW.account_id ~ '^(settlement|core):')
           OR (NEW.kind <> 'customer' AND NEW.account_id <> NEW.kind || ':' || NEW.currency) THEN
            RAISE EXCEPTION 'account % of kind % is misnamed', NEW.account_id, NEW.kind
                USING ERRCODE = '23514', CONSTRAINT = 'accounts_system_id_check';
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'accounts are never deleted' USING ERRCODE = 'LA008', CONSTRAINT = 'accounts_no_delete';
    END IF;
    RAISE EXCEPTION 'the identity of an account is immutable' USING ERRCODE = 'LA008', CONSTRAINT = 'accounts_immutable';
END $$;
