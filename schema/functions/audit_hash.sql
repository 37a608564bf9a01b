-- audit_hash is the hash of one audit record: SHA-256 over the previous
-- record's hash, then the text "ledger-audit-v1;" and each field as
-- <its length in UTF-8 bytes>:<the field>; in this order: seq,
-- recorded_at (UTC, microseconds: 2026-03-01T09:12:00.000000Z), actor_id,
-- actor_name, scope, method, route, target, status, body_digest ('' when
-- NULL), source. Lengths make the encoding unambiguous whatever a field
-- holds. ledger.AuditHash computes the same in Go, so that an export is
-- verified offline (ledgerctl audit verify); TestAuditHashMatchesGo holds
-- the two together.
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION audit_hash(
    p_prev bytea, p_seq bigint, p_recorded_at timestamptz, p_actor_id text, p_actor_name text,
    p_scope text, p_method text, p_route text, p_target text, p_status integer, p_body_digest text,
    p_source text) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT sha256(p_prev || convert_to('ledger-audit-v1;'
    || string_agg(octet_length(convert_to(u.f, 'UTF8'))::text || ':' || u.f || ';', '' ORDER BY u.n), 'UTF8'))
FROM unnest(ARRAY[p_seq::text, to_char(p_recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                  p_actor_id, p_actor_name, p_scope, p_method, p_route, p_target, p_status::text,
                  coalesce(p_body_digest, ''), p_source]) WITH ORDINALITY AS u (f, n)
$$;
