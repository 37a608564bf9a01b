-- A least-privilege runtime role for ledgerd.
--
-- Two roles: ledger_owner owns the database and its schema and runs the
-- migrations (`ledgerctl migrate`, or ledgerd with LEDGER_MIGRATION_DATABASE_URL);
-- ledger_runtime is what ledgerd's DATABASE_URL uses: it reads and writes the
-- tables and calls the functions, and can create, alter, drop or truncate
-- nothing. Rename them as you like (replace every occurrence).
--
-- Once, as a superuser (or a role with CREATEROLE and CREATEDB):
--
--   CREATE ROLE ledger_owner LOGIN PASSWORD '…';
--   CREATE ROLE ledger_runtime LOGIN PASSWORD '…';
--   CREATE DATABASE ledger OWNER ledger_owner;
--   -- PostgreSQL 14 and older let every role create in schema public:
--   -- \c ledger
--   -- REVOKE CREATE ON SCHEMA public FROM PUBLIC;
--
-- Then this file, in the ledger database, as ledger_owner, before the first
-- migration and again after each migration (it is idempotent: the revokes at
-- its end reach only the tables that exist when it runs):
--
--   psql "postgres://ledger_owner@db/ledger" -v ON_ERROR_STOP=1 -f docs/runtime-role.sql
--
-- server/role_test.go runs it, then ledgerd's callbacks and admin API as
-- ledger_runtime, and checks that ledger_runtime cannot change the schema.

-- The schema version table, created as tern (the migration runner) creates
-- it, and the table of the function files applied (schema/README.md),
-- created as ledgerctl migrate creates it, so that both exist before the
-- default privileges below and the runtime role can only read them.
CREATE TABLE IF NOT EXISTS schema_version(version int4 NOT NULL);
INSERT INTO schema_version(version) SELECT 0 WHERE NOT EXISTS (SELECT FROM schema_version);
CREATE TABLE IF NOT EXISTS schema_functions (
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_on timestamptz NOT NULL,
    superseded text[]      NOT NULL DEFAULT '{}',
    CONSTRAINT schema_functions_pkey PRIMARY KEY (name)
);

GRANT USAGE ON SCHEMA public TO ledger_runtime;

-- What exists now.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ledger_runtime;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ledger_runtime;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ledger_runtime;
REVOKE INSERT, UPDATE, DELETE ON TABLE schema_version, schema_functions FROM ledger_runtime;

-- What later migrations (run as ledger_owner) create.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ledger_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ledger_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO ledger_runtime;

-- The ledger's history is append-only: the runtime role adds rows to these
-- tables and never changes, deletes or truncates one; their triggers refuse
-- the same statements, and the revoke makes the refusal the database's
-- (permission denied) before any trigger runs. The default privileges above
-- grant UPDATE and DELETE on every table a migration creates, these among
-- them, so the revoke reaches only the tables that exist when this file runs:
-- run it again after every migration (it is idempotent). audit_head keeps
-- UPDATE: audit_append (schema/functions/audit_append.sql) runs with its
-- caller's rights, not as SECURITY DEFINER, and advances the chain's head as
-- the runtime role; its trigger refuses any other change.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['journal', 'holds', 'hold_settlements', 'audit_log', 'audit_head'] LOOP
        IF to_regclass(t) IS NOT NULL THEN
            EXECUTE format('REVOKE %s ON TABLE %I FROM ledger_runtime',
                CASE t WHEN 'audit_head' THEN 'DELETE, TRUNCATE' ELSE 'UPDATE, DELETE, TRUNCATE' END, t);
        END IF;
    END LOOP;
END $$;
