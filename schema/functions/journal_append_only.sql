-- journal_append_only refuses any update, delete or truncate of the
-- journal (LA006 journal_append_only): it is append-only, whoever asks.
--
-- A trigger function: the triggers that call it, and its declaration, are
-- in schema/migrations/; this file defines the body (schema/README.md).

CREATE OR REPLACE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the journal is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'LA006', CONSTRAINT = 'journal_append_only';
END $$;
