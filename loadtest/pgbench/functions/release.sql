-- cb_release, approved: the hold of payout n, n descending from the last placed.
SELECT r.state, r.outcome, r.reason, r.reference FROM (SELECT nextval('bench_release') AS n) s,
  cb_release(p_key => 'r-po-' || s.n, p_fingerprint => '\x0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0'::bytea,
    p_key_fingerprint => '0123456789abcdef', p_now => now(), p_payout_id => 'po-' || s.n,
    p_hold_reference => 'hold_' || left(md5(s.n::text), 26), p_reason => 'cancelled',
    p_release_reference => 'rel_' || left(md5('r' || s.n), 26)) r;
