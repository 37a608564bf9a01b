-- cb_credit, approved: a new payment request n to a random one of the 1,000 accounts.
\set a random(1, 1000)
\set amt random(100, 10000)
SELECT r.state, r.outcome, r.reason, r.reference FROM (SELECT nextval('bench_credit') AS n) s,
  cb_credit(p_key => 'k-rq-' || s.n, p_fingerprint => '\x0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0'::bytea,
    p_key_fingerprint => '0123456789abcdef', p_now => now(), p_request_id => 'rq-' || s.n,
    p_destination => 'dst-' || :a, p_requester => 'ext-' || :a, p_currency => 'USD', p_amount => :amt / 100.0,
    p_max => NULL, p_credit_reference => 'cred_' || left(md5('k' || s.n), 26),
    p_transaction_id => ('01910000-0000-7000-8000-' || lpad(to_hex(s.n), 12, '0'))::uuid) r;
