-- 1,000 funded customer accounts, each with a source and a destination instrument.
\set ON_ERROR_STOP on
SELECT ledger_ensure_system_accounts('USD', now());
INSERT INTO accounts (account_id, owner_external_id, currency, kind, status, created_at, updated_at)
SELECT 'acct-' || i, 'ext-' || i, 'USD', 'customer', 'open', now(), now() FROM generate_series(1, 1000) i;
INSERT INTO instruments (token, kind, account_id, created_at)
SELECT 'src-' || i, 'source', 'acct-' || i, now() FROM generate_series(1, 1000) i
UNION ALL SELECT 'dst-' || i, 'destination', 'acct-' || i, now() FROM generate_series(1, 1000) i;
SELECT count(*) FROM generate_series(1, 1000) i,
  ledger_adjust(p_account_id => 'acct-' || i, p_amount => 1000000000000, p_key => 'fund', p_memo => 'bench funding',
                p_transaction_id => ('018f0000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, p_now => now());
CREATE SEQUENCE bench_authorize;
CREATE SEQUENCE bench_capture;
CREATE SEQUENCE bench_release INCREMENT BY -1 MINVALUE 1 MAXVALUE 1000000000 START 1;
CREATE SEQUENCE bench_credit;
VACUUM ANALYZE;
