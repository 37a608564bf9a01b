-- :nholds held holds, payouts po-1 .. po-:nholds, for the capture and release runs
-- (capture takes them from 1 up, release from :nholds down). Rows as cb_authorize
-- writes them; the authorize runs place payouts above :nholds.
\set ON_ERROR_STOP on
INSERT INTO holds (hold_reference, payout_id, account_id, funding_source, currency, amount, placed_at)
SELECT 'hold_' || left(md5(n::text), 26), 'po-' || n, 'acct-' || (1 + n % 1000), 'src-' || (1 + n % 1000), 'USD',
       (100 + n % 9901) / 100.0, now()
FROM generate_series(1, :nholds) n;
SELECT to_regclass('open_holds') IS NOT NULL AS has_open_holds \gset
\if :has_open_holds
INSERT INTO open_holds (hold_reference, account_id, currency, amount, placed_at)
SELECT hold_reference, account_id, currency, amount, placed_at FROM holds;
\endif
UPDATE accounts a SET held = a.held + s.total FROM (SELECT account_id, sum(amount) AS total FROM holds GROUP BY 1) s
WHERE a.account_id = s.account_id;
SELECT setval('bench_authorize', :nholds);
SELECT setval('bench_release', :nholds, false);
VACUUM ANALYZE;
CHECKPOINT;
-- History, so that the planner sees the callback tables as they are in
-- service (an empty table's generic plan is a sequential scan, kept by the
-- session as the table grows): the authorizes of the prefilled holds, and
-- earlier captures, releases and credits.
INSERT INTO callback_authorize (scope, idempotency_key, fingerprint, subject, outcome, reason, reference, key_fingerprint, received_at, last_received_at)
SELECT h.payout_id, 'a-' || h.payout_id, sha256(h.payout_id::bytea), h.payout_id, 'approved', NULL, h.hold_reference, '0123456789abcdef', now(), now()
FROM holds h;
INSERT INTO callback_capture (scope, idempotency_key, fingerprint, subject, outcome, reason, reference, key_fingerprint, received_at, last_received_at)
SELECT 'old-' || n, 'c-old-' || n, sha256(n::text::bytea), 'old-' || n, 'approved', NULL, 'cap_old' || n, '0123456789abcdef', now(), now()
FROM generate_series(1, :nholds / 4) n;
INSERT INTO callback_release SELECT * FROM callback_capture;
INSERT INTO credits (request_id, credit_reference, account_id, destination, currency, amount, transaction_id, created_at)
SELECT 'old-rq-' || n, 'cred_old' || n, 'acct-' || (1 + n % 1000), 'dst-' || (1 + n % 1000), 'USD', 1, ('01920000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, now()
FROM generate_series(1, :nholds / 4) n;
INSERT INTO callback_credit (scope, idempotency_key, fingerprint, subject, outcome, reason, reference, key_fingerprint, received_at, last_received_at)
SELECT '', 'k-old-' || n, sha256(n::text::bytea), 'old-rq-' || n, 'approved', NULL, 'cred_old' || n, '0123456789abcdef', now(), now()
FROM generate_series(1, :nholds / 4) n;
VACUUM ANALYZE;
CHECKPOINT;
