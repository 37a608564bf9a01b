-- cb_capture, approved: the hold of payout n, n ascending from 1.
SELECT r.state, r.outcome, r.reason, r.reference FROM (SELECT nextval('bench_capture') AS n) s,
  cb_capture(p_key => 'c-po-' || s.n, p_fingerprint => '\x0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0'::bytea,
    p_key_fingerprint => '0123456789abcdef', p_now => now(), p_payout_id => 'po-' || s.n,
    p_hold_reference => 'hold_' || left(md5(s.n::text), 26), p_capture_reference => 'cap_' || left(md5('c' || s.n), 26),
    p_transaction_id => ('01900000-0000-7000-8000-' || lpad(to_hex(s.n), 12, '0'))::uuid) r;
