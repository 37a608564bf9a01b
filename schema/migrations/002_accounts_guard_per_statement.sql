-- The guard of accounts' identity checks an UPDATE once per statement,
-- not once per row.
--
-- Any BEFORE UPDATE row trigger on a table makes Postgres lock and re-read
-- each row an UPDATE is about to change before it looks at the trigger's
-- columns (GetTupleForTrigger): one more tuple lock, with its WAL record,
-- on the customer account's row in every authorize, capture, release and
-- credit, although the trigger fires only when account_id, kind or
-- currency is a target of the UPDATE, which no function's is. A statement
-- trigger costs an UPDATE nothing per row. The guarantees are those of
-- 001_baseline.sql: a misnamed new account (23514 accounts_system_id_check)
-- and a delete (LA008 accounts_no_delete) are refused row by row before the
-- row is written, and an UPDATE that sets account_id, kind or currency is
-- refused before it writes anything (LA008 accounts_immutable), now also
-- when it matches no row.
DROP TRIGGER accounts_identity ON accounts;
CREATE TRIGGER accounts_identity BEFORE INSERT OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_guard();
CREATE TRIGGER accounts_immutable BEFORE UPDATE OF account_id, kind, currency ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_guard();
