-- holds_append_only refuses any update or delete of holds and
-- hold_settlements (LA005 holds_transition): a hold is placed once and
-- settled once (I3).
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION holds_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'illegal hold transition: % on % (a hold is placed once and settled once)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA005', CONSTRAINT = 'holds_transition';
END $$;
