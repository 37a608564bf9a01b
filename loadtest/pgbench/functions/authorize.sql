-- cb_authorize, approved: a new payout n (a sequence, so that capture and
-- release find its hold) on a random one of the 1,000 funded accounts.
\set a random(1, 1000)
\set amt random(100, 10000)
SELECT r.state, r.outcome, r.reason, r.reference FROM (SELECT nextval('bench_authorize') AS n) s,
  cb_authorize(p_key => 'a-po-' || s.n, p_fingerprint => '\x0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0'::bytea,
    p_key_fingerprint => '0123456789abcdef', p_caller_subject => NULL, p_audit_request_id => NULL, p_now => now(),
    p_payout_id => 'po-' || s.n, p_external_id => 'ext-' || :a, p_funding_source => 'src-' || :a,
    p_currency => 'USD', p_amount => :amt / 100.0, p_fraud_score => 0.01, p_fraud_deny => 0.9, p_fraud_stepup => 0.7,
    p_hold_reference => 'hold_' || left(md5(s.n::text), 26)) r;
